# pprof-lib.sh - Google's pprof (the Go tool), built offline from Debian's
# sources, for tests that check our pprof files with the real reader.
# Source it after lib.sh.
#
#   need_pprof            sets $PPROF (and $GO_ENV), building pprof once
#                         into $SYM_ROOT/build/go-pprof/pprof; skips the
#                         whole test only when the Go toolchain cannot be
#                         installed
#   pprof_run ARGS...     run it offline, HOME in $T (pprof writes
#                         ~/pprof), without probing for binutils
#   go_build OUT SRC.go   build a Go program offline with the same cache
#
# The build (about 15 s the first time) happens under a lock, so parallel
# tests build it once; `make clean` removes it with build/.

PPROF_DIR=$SYM_ROOT/build/go-pprof
PPROF=$PPROF_DIR/pprof
PPROF_SRC=/usr/share/gocode/src/github.com/google/pprof

# Offline GOPATH mode over Debian's packaged sources: no module proxy.
go_env() {
	env GO111MODULE=off GOPATH=/usr/share/gocode GOPROXY=off \
		GOFLAGS= GOCACHE="$PPROF_DIR/cache" HOME="$T" "$@"
}

# Install golang-go and pprof's sources when they are missing (as root,
# or with sudo that needs no password).
_pprof_install() {
	_sudo=
	if [ "$(id -u)" != 0 ]; then
		sudo -n true 2>/dev/null || return 1
		_sudo="sudo -n"
	fi
	DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq \
		--no-install-recommends golang-go \
		golang-github-google-pprof-dev > "$T/.go-install.log" 2>&1
}

need_pprof() {
	if ! command -v go >/dev/null 2>&1 || [ ! -d "$PPROF_SRC" ]; then
		_pprof_install
		command -v go >/dev/null 2>&1 && [ -d "$PPROF_SRC" ] ||
			plan_skip "Go toolchain or pprof sources missing and" \
				"not installable (golang-go," \
				"golang-github-google-pprof-dev)"
	fi
	mkdir -p "$PPROF_DIR" || exit 1
	(
		flock 9
		[ -x "$PPROF" ] && exit 0
		go_env go build -o "$PPROF.tmp" github.com/google/pprof \
			> "$PPROF_DIR/build.log" 2>&1 &&
			mv "$PPROF.tmp" "$PPROF"
	) 9> "$PPROF_DIR/.lock"
	if [ ! -x "$PPROF" ]; then
		# Go is there but pprof does not build: a failure, not a skip.
		echo "1..1"
		echo "not ok 1 - build Google's pprof offline"
		sed 's/^/#   /' "$PPROF_DIR/build.log" | head -20
		exit 1
	fi
}

# PPROF_TOOLS: no objdump/addr2line probing (unused with -symbolize=none,
# and slow on a busy machine).
pprof_run() {
	go_env PPROF_TOOLS="$T/no-tools" "$PPROF" "$@"
}

go_build() {
	go_env go build -o "$1" "$2"
}
