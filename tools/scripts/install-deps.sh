#!/bin/sh
# install-deps.sh - install the Debian 12 packages symd builds and tests with.
#
# Runs as the first step of `make check`, `make demo` and `make bench`.  It
# does nothing when every package is already installed, so it is cheap to
# run each time.  It installs with apt-get as root, or through sudo.
# Set SYM_NO_INSTALL=1 to only report what is missing.
set -e

# Build: compiler, libraries, protoc-c (libsym/prof/profile.proto is
# compiled at build time), LLVM 14's demangler (llvm-14-dev's
# libLLVMDemangle.a, for the llvm-symbolizer drop-in).  Tests: the
# oracles (llvm-symbolizer 14 and 19, GNU
# addr2line, eu-addr2line), the fixture tools (clang, dwz, objcopy), the
# real debug files (libc6-dbg, python3.11-dbg), prove, /usr/bin/time, Go
# with pprof's sources (tests/e2e/lib/pprof-lib.sh builds Google's pprof
# offline from them, to read our pprof files), headless Chromium and a
# font for the flame graph test (t5100), perf (linux-perf: t5000
# folds a real capture with sym fold --from perf-script; make bench
# compares sym record with it), gdb (the sym stack tests' peer,
# t0250-t0253), OpenJDK 17 with its debug file (make bench: libjvm's
# figures, and the JVM core of tests/bench/stack-bench.sh), and the
# aarch64 cross compilers (t0150 symbolizes aarch64 programs and libc on
# this host); prometheus for its promtool, which checks symd's /metrics
# (t2040); and the heap profilers libsymprof's alloc mode is compared
# with (t4021, make bench): heaptrack, jemalloc with its profiler and
# jeprof, gperftools' tcmalloc with its heap profiler and google-pprof;
# HAProxy and nginx, the proxies docs/cluster/ configures (t2200 runs
# both in front of three symd nodes);
# nodejs, whose --perf-basic-prof writes the perf map that sym record and
# libsymprof name JIT frames from (t3090, t3091, t4030);
# the off-CPU agent's build (libbpf-dev, bpftool for its skeleton; clang
# compiles its BPF C) and its peer, libbpf-tools' offcputime (t3111);
# Ceph's monitor, OSD (MemStore) and radosgw with ceph-common's tools, a
# one-node S3 object store for symd's durable tier (t2210), and bc.
PKGS="make gcc g++ pkg-config libelf-dev libdw-dev libdebuginfod-dev
libevent-dev liblmdb-dev libiberty-dev libzstd-dev liblzma-dev zlib1g-dev
libdeflate-dev libhttp-parser-dev libcurl4-openssl-dev
protobuf-c-compiler libprotobuf-c-dev
binutils elfutils llvm llvm-14-dev llvm-19 clang lld libclang-rt-14-dev dwz
zstd xz-utils
binutils-x86-64-linux-gnu-dbg
libc6-dbg python3.11-dbg python3 perl time debuginfod curl wrk
golang-go golang-github-google-pprof-dev chromium fonts-dejavu-core
prometheus haproxy nginx-light
linux-perf gdb openjdk-17-jdk-headless openjdk-17-dbg
libbpf-dev bpftool libbpf-tools
gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
heaptrack libjemalloc2 libjemalloc-dev libgoogle-perftools4 google-perftools
nodejs
ceph-mon ceph-osd radosgw ceph-common bc"

missing=
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	   grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

echo "install-deps: missing Debian packages:$missing" >&2
if [ -n "$SYM_NO_INSTALL" ]; then
	exit 1
fi
if [ "$(id -u)" = 0 ]; then
	SUDO=
elif command -v sudo >/dev/null 2>&1; then
	SUDO=sudo
else
	echo "install-deps: not root and no sudo; install them by hand" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing
