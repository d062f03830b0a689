# Makefile - symd: libsym, the sym tool, the symd daemon, tests.
#
#   make                 build bin/sym, bin/symd, lib/libsym.{a,so} (the
#                        symbolizer), lib/libsymprofile.{a,so} (the profile
#                        model), lib/libsymprof.so (the LD_PRELOAD sampler)
#   make check           install missing Debian packages, build, run all tests
#   make demo            install missing packages, build, run the demo
#   make bench           benchmark against llvm-symbolizer, addr2line, eu-addr2line;
#                        symd under load and under attack (issue 24's
#                        figures); libsymprof's overhead; a node taking
#                        over a table from the object store (issue 22)
#   make chaos           the chaos tests of issue 24 (races, hostile clients,
#                        bombs, hanging upstreams), with long runs:
#                        CHAOS_ROUNDS (4000) PUT/DELETE rounds of t1050,
#                        CHAOS_SECONDS (60) per attack of t2020 and t2021
#   make check-fuzz      build the fuzz targets as plain programs and replay
#                        their committed corpora (make check does it too)
#   make fuzz CC=clang   run the libFuzzer targets (FUZZ_TIME seconds each)
#   make install         prefix=/usr/local DESTDIR= (the llvm-symbolizer
#                        and addr2line drop-ins go to $(libexecdir)/sym/,
#                        docs/*.md, which the man pages cite, to $(docdir))
#
# Knobs: SANITIZE=address,undefined  V=1  DEVELOPER=1 (-Werror)
#        SYM_SHARED_DEPS=1 (bin/sym with shared libraries: see bin/sym)
# CFLAGS, CPPFLAGS, LDFLAGS and LDLIBS are the user's; required flags live
# in SYM_CFLAGS.

prefix ?= /usr/local
exec_prefix ?= $(prefix)
bindir ?= $(exec_prefix)/bin
libexecdir ?= $(exec_prefix)/libexec
libdir ?= $(exec_prefix)/lib
includedir ?= $(prefix)/include
datarootdir ?= $(prefix)/share
mandir ?= $(datarootdir)/man
docdir ?= $(datarootdir)/doc/symd
pkgconfigdir ?= $(libdir)/pkgconfig

# Everything built but the installed results (bin/, lib/) goes here.  It
# is set before any rule or target-specific variable names $(B).
B = build

CC ?= cc
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config
AR ?= ar
INSTALL ?= install

VERSION := $(shell sed -n 's/^\#define SYM_VERSION "\(.*\)"/\1/p' libsym/sym.h)
SOMAJOR := $(shell sed -n 's/^\#define SYM_VERSION_MAJOR //p' libsym/sym.h)
SONAME := libsym.so.$(SOMAJOR)

# $(call msg,WHAT,FILE) starts a recipe line: a short line, or with V=1
# nothing, so that make echoes the whole command.
ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-7s %s\n' $(1) $(2);
endif

SYM_CFLAGS = -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wformat=2 -Wshadow \
	-Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter \
	-fvisibility=hidden -fPIC -Ilibsym -Ilibsym/prof -MMD -MP
ifeq ($(DEVELOPER),1)
SYM_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
SAN_FLAGS = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif

# Recursive (=) on purpose: pkg-config runs only when something is built,
# after `make check` has installed the packages.
LIB_PKGS = libdw libelf libzstd liblzma libdeflate
DEP_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
# LMDB installs no .pc file: plain -llmdb.
DEP_LIBS = $(shell $(PKG_CONFIG) --libs $(LIB_PKGS)) -llmdb -liberty
# The profile model's own (libsym/prof/, libsymprofile): pprof's protobuf
# and gzip.  libsym does not link them (its zlib sections go through
# libelf and libdeflate).
PROF_PKGS = libprotobuf-c zlib
PROF_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(PROF_PKGS))
PROF_LIBS = $(shell $(PKG_CONFIG) --libs $(PROF_PKGS))
# The daemon's own (symd/): libevent, http-parser (no .pc file), threads.
SYMD_PKGS = libevent libevent_pthreads
SYMD_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(SYMD_PKGS))
# -lcurl: the object store client (symd/s3.c); on one line with the rest,
# which tests/fuzz/fuzz.mk reads.
SYMD_LIBS = $(shell $(PKG_CONFIG) --libs $(SYMD_PKGS)) -lhttp_parser -ldebuginfod -lpthread -lcurl
# The sym tool's own: libcurl's header (sym upload, sym lookup --server);
# the library itself is dlopen()ed on first use (tools/client.c).
TOOL_PKGS = libcurl
TOOL_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(TOOL_PKGS))
ALL_CFLAGS = $(SYM_CFLAGS) $(DEP_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
# symd/ sources also see libevent's flags; tools/ sources (and tools/agent/,
# tools/view/) libcurl's and the tools' include root, so that a command
# file names its modules as "agent/perf.h" and "view/views.h".  These
# need $(B) defined above them, and `private`: a target-specific variable
# is otherwise inherited by the target's prerequisites, here
# $(B)/.flags, whose contents would then depend on which object reached
# it first.
$(B)/symd/%.o: private DEP_CFLAGS += $(SYMD_CFLAGS) $(TOOL_CFLAGS)
$(B)/tools/%.o: private DEP_CFLAGS += $(TOOL_CFLAGS) -Itools
$(B)/libsym/prof/%.o: private DEP_CFLAGS += $(PROF_CFLAGS) -I$(B)/gen
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

LIB_SRCS := $(wildcard libsym/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
# libsymprofile: libsym/prof/, pprof's profile.proto made C at build time
# (never committed), and the base it shares with libsym (libsym/base.h:
# the allocation helpers of alloc.c, the buffer of buf.c).
PROF_SRCS := $(wildcard libsym/prof/*.c)
GEN_OBJS := $(B)/gen/profile.pb-c.o
BASE_OBJS := $(B)/libsym/alloc.o $(B)/libsym/buf.o
PROF_OBJS := $(PROF_SRCS:%.c=$(B)/%.o) $(GEN_OBJS) $(BASE_OBJS)
PROF_SONAME := libsymprofile.so.$(SOMAJOR)
# The sym tool: tools/sym.c (main) and, as an archive, the command files
# and the CLI helpers they share; the recorder's internals (tools/agent/)
# and the views' (tools/view/) are archives of their own, which the tool,
# the unit tests and the fuzz replays link.
TOOL_SRCS := $(filter-out tools/sym.c,$(wildcard tools/*.c))
TOOL_OBJS := $(TOOL_SRCS:%.c=$(B)/%.o)
TOOL_LIB := $(B)/tools/libsymtool.a
AGENT_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard tools/agent/*.c))
AGENT_LIB := $(B)/tools/agent/libagent.a
VIEW_OBJS := $(patsubst %.c,$(B)/%.o,$(wildcard tools/view/*.c))
VIEW_LIB := $(B)/tools/view/libview.a
UNIT_SRCS := $(wildcard tests/unit/t-*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
SYMD_SRCS := $(filter-out symd/main.c,$(wildcard symd/*.c))
SYMD_OBJS := $(SYMD_SRCS:%.c=$(B)/%.o)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/tests/replay-%)

PROGS = bin/sym $(if $(wildcard symd/main.c),bin/symd)
LIBS = lib/libsym.a lib/$(SONAME) lib/libsym.so lib/libsym.pc \
	lib/libsymprofile.a lib/$(PROF_SONAME) lib/libsymprofile.so \
	lib/libsymprofile.pc lib/libsymprof.so

.PHONY: all check check-unit check-e2e check-fuzz deps demo bench chaos fuzz \
	install uninstall clean abi-check
# Drop-ins for llvm-symbolizer and addr2line (tools/compat.c): links to
# sym, which acts by the name it was started under.  Installed out of
# PATH, in $(libexecdir)/sym/, so that they replace the real tools only
# where a program is pointed at them.
COMPAT = bin/compat/llvm-symbolizer bin/compat/addr2line
all: $(PROGS) $(LIBS) $(COMPAT)

$(COMPAT): bin/sym
	@mkdir -p bin/compat
	$(Q)ln -sfn ../sym $@

# Objects remember the flags they were built with: changing SANITIZE or
# CFLAGS rebuilds them instead of mixing instrumented and plain objects.
FLAGS_NOW = $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) $(SYMD_CFLAGS) \
	$(TOOL_CFLAGS) $(PROF_CFLAGS)
$(B)/.flags: FORCE
	@mkdir -p $(B)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@

.PHONY: FORCE
FORCE:

$(B)/%.o: %.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# libsym/prof/profile.proto (Google's, vendored) -> C with protoc-c, at
# build time.  The generated symbols (perftools__profiles__*) stay out of
# the ABI: -fvisibility=hidden and the version script's local: *.
PROTOC_C ?= protoc-c
$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h &: libsym/prof/profile.proto
	@mkdir -p $(B)/gen
	$(call msg,PROTOC,$@)$(PROTOC_C) --proto_path=libsym/prof \
		--c_out=$(B)/gen libsym/prof/profile.proto

# Generated code is not ours to keep warning-free: only its own warnings
# are silenced, the rest of the flags (sanitizers, -fPIC) are the same.
$(B)/gen/profile.pb-c.o: private DEP_CFLAGS += $(PROF_CFLAGS)
$(B)/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c $(B)/.flags
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -w -c -o $@ $<

# The pprof reader and writer include the generated header.
$(B)/libsym/prof/pprof-read.o $(B)/libsym/prof/pprof-write.o: \
	$(B)/gen/profile.pb-c.h

# The off-CPU agent's BPF half (tools/agent/bpf/, docs/record.md "Off-CPU"):
# clang compiles it for the BPF target with CO-RE relocations against the
# trimmed tools/agent/bpf/vmlinux.h (the UAPI from linux-libc-dev's
# <linux/bpf.h>), and `bpftool gen skeleton` makes the header that
# tools/agent/offcpu.c includes, with the object embedded.  sym links
# libbpf (libbpf-dev).
BPF_CLANG ?= clang
BPFTOOL ?= $(firstword $(wildcard /usr/sbin/bpftool /sbin/bpftool) bpftool)
BPF_LIBS = $(shell $(PKG_CONFIG) --libs libbpf)
BPF_SRCS := $(wildcard tools/agent/bpf/*.h)
$(B)/gen/offcpu.bpf.o: tools/agent/bpf/offcpu.bpf.c $(BPF_SRCS)
	@mkdir -p $(B)/gen
	$(call msg,BPF,$@)$(BPF_CLANG) -target bpf -D__TARGET_ARCH_x86 \
		-I/usr/include/$(shell $(CC) -print-multiarch) \
		-Itools/agent/bpf -g -O2 -Wall -c -o $@ $<
$(B)/gen/offcpu.skel.h: $(B)/gen/offcpu.bpf.o
	$(call msg,SKEL,$@)$(BPFTOOL) gen skeleton $< name offcpu_bpf \
		> $@.tmp && mv $@.tmp $@
$(B)/tools/agent/offcpu.o: private DEP_CFLAGS += -I$(B)/gen
$(B)/tools/agent/offcpu.o: $(B)/gen/offcpu.skel.h

# The status page (symd/status.html), a C string literal that
# symd/status.c includes: each line quoted, \ and " escaped.
$(B)/gen/status-html.h: symd/status.html
	@mkdir -p $(B)/gen
	$(call msg,GEN,$@)sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' \
		-e 's/$$/\\n"/' $< > $@.tmp && mv $@.tmp $@
$(B)/symd/status.o: private DEP_CFLAGS += -I$(B)/gen
$(B)/symd/status.o: $(B)/gen/status-html.h

PC_SED = sed -e 's|@PREFIX@|$(prefix)|' -e 's|@LIBDIR@|$(libdir)|' \
	-e 's|@INCLUDEDIR@|$(includedir)|' -e 's|@VERSION@|$(VERSION)|'

# libsym, the symbolizer.
lib/libsym.a: $(LIB_OBJS)
	@mkdir -p lib
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

lib/$(SONAME): $(LIB_OBJS) libsym/libsym.map $(B)/abi-check.stamp
	@mkdir -p lib
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=libsym/libsym.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) $(DEP_LIBS) $(LDLIBS)

lib/libsym.so: lib/$(SONAME)
	$(Q)ln -sf $(SONAME) $@

lib/libsym.pc: libsym/libsym.pc.in libsym/sym.h
	@mkdir -p lib
	$(call msg,GEN,$@)$(PC_SED) $< > $@

# libsymprofile, the profile model (libsym/prof/sym_prof.h).  Its name is
# not libsymprof: that is the LD_PRELOAD sampler below.
lib/libsymprofile.a: $(PROF_OBJS)
	@mkdir -p lib
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

lib/$(PROF_SONAME): $(PROF_OBJS) libsym/prof/libsymprofile.map \
		$(B)/abi-check.stamp
	@mkdir -p lib
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -shared \
		-Wl,-soname,$(PROF_SONAME) \
		-Wl,--version-script=libsym/prof/libsymprofile.map \
		-Wl,--no-undefined -o $@ $(PROF_OBJS) $(PROF_LIBS) $(LDLIBS)

lib/libsymprofile.so: lib/$(PROF_SONAME)
	$(Q)ln -sf $(PROF_SONAME) $@

lib/libsymprofile.pc: libsym/prof/libsymprofile.pc.in libsym/sym.h
	@mkdir -p lib
	$(call msg,GEN,$@)$(PC_SED) $< > $@

# The exported symbols of each library must be exactly the SYM_API
# functions of its header.  A stamp, so that the check (and the links
# after it) run again only when a header, a map or the check changed.
abi-check: $(B)/abi-check.stamp
$(B)/abi-check.stamp: libsym/sym.h libsym/libsym.map libsym/prof/sym_prof.h \
		libsym/prof/libsymprofile.map tests/abi-check.sh
	@mkdir -p $(B)
	$(call msg,ABI,libsym/sym.h)tests/abi-check.sh libsym/sym.h \
		libsym/libsym.map
	$(call msg,ABI,libsym/prof/sym_prof.h)tests/abi-check.sh \
		libsym/prof/sym_prof.h libsym/prof/libsymprofile.map
	$(Q)touch $@

$(TOOL_LIB): $(TOOL_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^
$(AGENT_LIB): $(AGENT_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^
$(VIEW_LIB): $(VIEW_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

# The tool's archives call each other (views.c reads profiles through
# tools/symbolize.c, which uses the agent's procmaps.c): one group.
# -lm: tools/view/stats.c (erfc, sqrt, log).  The llvm-symbolizer drop-in
# demangles with LLVM 14's own demangler (llvm_demangle() in
# tools/addr2line.c): llvm-14-dev's libLLVMDemangle.a, C++.  libstdc++
# is linked statically: the demangler needs a few of its pieces, and
# loading the shared library (its relocations) cost every run of the
# drop-in 2.3M instructions, 1% of a warm 100,000-address answer.
LLVM_DEMANGLE_LIBS ?= /usr/lib/llvm-14/lib/libLLVMDemangle.a \
	-Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
# The other libraries are linked statically too (Debian's -dev packages
# ship their .a files), libc alone is shared: every run of sym, and of
# the drop-ins, its symlinks, spent 1.8 ms of its 7.4 ms (a warm lookup
# of one address) mapping and relocating eleven shared libraries on this
# VM (perf stat -r 50, docs/bench.md, "Start-up").  SYM_SHARED_DEPS=1
# links them shared, as before.  symd, a daemon, starts once: shared.
# libdebuginfod, dlopen()ed, brings its own shared libelf, libz and
# libzstd: bin/sym exports none of its symbols (nm -D), so each copy
# keeps to itself, and no Elf handle passes between them.  libgcc's
# unwinder (the static libstdc++'s) is linked in too: libgcc_s.so.1 was
# the last shared library but libc and libm (whose libm.a cannot go into
# a PIE), 0.09 ms of an empty run's 1.08 (docs/bench.md).
ifeq ($(SYM_SHARED_DEPS),)
TOOL_LIBGCC = -static-libgcc
TOOL_DEP_LIBS = -Wl,-Bstatic $(filter-out -pthread -lpthread -lm, \
	$(shell $(PKG_CONFIG) --libs --static $(LIB_PKGS) $(PROF_PKGS) \
	libbpf)) -llmdb -liberty -Wl,-Bdynamic -lpthread
else
TOOL_DEP_LIBS = $(DEP_LIBS) $(PROF_LIBS) $(BPF_LIBS)
endif
bin/sym: $(B)/tools/sym.o $(TOOL_LIB) $(VIEW_LIB) $(AGENT_LIB) lib/libsym.a \
		lib/libsymprofile.a
	@mkdir -p bin
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $(B)/tools/sym.o \
		-Wl,--start-group $(TOOL_LIB) $(VIEW_LIB) $(AGENT_LIB) \
		-Wl,--end-group lib/libsym.a lib/libsymprofile.a \
		$(TOOL_DEP_LIBS) -lm $(LLVM_DEMANGLE_LIBS) $(TOOL_LIBGCC) \
		$(LDLIBS)

# libsymprof.so, the LD_PRELOAD sampler (tools/symprof/, docs/symprof.md).
# It is loaded into arbitrary programs, so it links libc alone and is
# never built with a sanitizer (the sanitizer runtime would have to come
# first in the process, and its signal handler reads other frames'
# stack words on purpose).  Frame pointers are kept: the walk ends at its
# thread trampoline's frame.  sym run finds it at ../lib/ from bin/sym,
# else in $(libdir), which tools/run.c is compiled with.
SYMPROF_SRCS := $(wildcard tools/symprof/*.c)
SYMPROF_OBJS := $(SYMPROF_SRCS:%.c=$(B)/%.o)
SYMPROF_CFLAGS = $(SYM_CFLAGS) -fno-omit-frame-pointer $(CFLAGS)
$(SYMPROF_OBJS): $(B)/tools/symprof/%.o: tools/symprof/%.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(SYMPROF_CFLAGS) -c -o $@ $<
# The module ID rule (libsym/modid.c, libc only) is libsym's and the
# sampler's: one source, compiled again with the sampler's flags.
SYMPROF_MODID := $(B)/tools/symprof/libsym-modid.o
$(SYMPROF_MODID): libsym/modid.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(SYMPROF_CFLAGS) -c -o $@ $<

# The perf map and jitdump readers (libsym/perfmap.c, libsym/jitdump.c,
# libc only) likewise.
SYMPROF_PERFMAP := $(B)/tools/symprof/libsym-perfmap.o \
	$(B)/tools/symprof/libsym-jitdump.o
$(B)/tools/symprof/libsym-%.o: libsym/%.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(SYMPROF_CFLAGS) -c -o $@ $<

lib/libsymprof.so: $(SYMPROF_OBJS) $(SYMPROF_MODID) $(SYMPROF_PERFMAP)
	@mkdir -p lib
	$(call msg,LD,$@)$(CC) $(LDFLAGS) -shared -Wl,--no-undefined \
		-Wl,-z,now -o $@ $(SYMPROF_OBJS) $(SYMPROF_MODID) \
		$(SYMPROF_PERFMAP)

$(B)/tools/run.o: private SYM_CFLAGS += -DSYM_LIBDIR='"$(libdir)"'

# libsymprof's objects again, built as the tests are (SANITIZE applies),
# for the tests that drive its in-memory parts (fuzz-symprof-cfi: the CFI
# reader).  Only the files that export nothing (no SP_EXPORT) go in: an
# interposer (sigaction, pthread_create, ...) in the archive would be
# pulled into a test for its own libc calls, and profile it.
SYMPROF_TEST_SRCS := $(shell grep -L SP_EXPORT $(SYMPROF_SRCS))
SYMPROF_TEST_OBJS := $(SYMPROF_TEST_SRCS:tools/%.c=$(B)/tests/%.o)
SYMPROF_TEST_LIB := $(B)/tests/libsymprof-test.a
$(SYMPROF_TEST_OBJS): $(B)/tests/symprof/%.o: tools/symprof/%.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<
$(SYMPROF_TEST_LIB): $(SYMPROF_TEST_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

# The daemon's modules, as an archive the daemon and the tests link.
$(B)/libsymd.a: $(SYMD_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

bin/symd: $(B)/symd/main.o $(B)/libsymd.a lib/libsym.a
	@mkdir -p bin
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $(B)/symd/main.o \
		$(B)/libsymd.a lib/libsym.a $(SYMD_LIBS) $(DEP_LIBS) $(LDLIBS)

# Unit tests and fuzz replays: one source file each, linked with the
# archives of the modules they test.  Every test sees libsym's, the
# daemon's and the tool's include directories (tools/ as the root: a
# test names "agent/unwind.h", "view/stacktree.h") and links, in order,
# the tool's archives, the daemon's, libsym and their libraries; the
# linker takes from each archive only the members a test uses (a test
# that reaches tools/store.c reaches addr2line.c's LLVM demangler too).
TEST_CFLAGS = -Itests/unit -Isymd -Itools $(SYMD_CFLAGS) $(TOOL_CFLAGS)
TEST_ARCHIVES = $(TOOL_LIB) $(VIEW_LIB) $(AGENT_LIB) $(B)/libsymd.a \
	lib/libsym.a lib/libsymprofile.a
TEST_LIBS = -Wl,--start-group $(TOOL_LIB) $(VIEW_LIB) $(AGENT_LIB) \
	-Wl,--end-group $(B)/libsymd.a lib/libsym.a lib/libsymprofile.a \
	$(SYMD_LIBS) $(DEP_LIBS) $(PROF_LIBS) $(BPF_LIBS) -lm \
	$(LLVM_DEMANGLE_LIBS) $(LDLIBS)

$(B)/tests/t-%: tests/unit/t-%.c $(TEST_ARCHIVES) tests/unit/tap.h \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# t-pprof checks the encoding with the generated protobuf code.
$(B)/tests/t-pprof: $(B)/gen/profile.pb-c.h
$(B)/tests/t-pprof: private DEP_CFLAGS += $(PROF_CFLAGS) -I$(B)/gen

# The t4000-symprof-* tests' checker of libsymprof's files (the reader of
# libsymprofile, and libsym's sym_strerror()).
$(B)/tests/raw-check: tests/e2e/lib/raw-check.c lib/libsymprofile.a lib/libsym.a \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		lib/libsymprofile.a lib/libsym.a $(PROF_LIBS) $(DEP_LIBS) \
		$(LDLIBS)

# The DWARF unwinder's benchmark: build/tests/unwind-bench
# (docs/record.md).
$(B)/tests/unwind-bench: tests/bench/unwind-bench.c $(TEST_ARCHIVES) \
		tests/unit/perfsample.h $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# The unwinder's cost per off-CPU event, memo off and on:
# build/tests/unwind-replay (docs/record.md, "The unwind memo").
$(B)/tests/unwind-replay: tests/bench/unwind-replay.c $(TEST_ARCHIVES) \
		tests/unit/perfsample.h $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# The store's cost of one symd request: build/tests/store-req-bench
# (docs/bench.md).
$(B)/tests/store-req-bench: tests/bench/store-req-bench.c $(TEST_ARCHIVES) \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# The kallsyms snapshot's benchmark: build/tests/kallsyms-bench
# (tests/bench/kernel-bench.sh).
$(B)/tests/kallsyms-bench: tests/bench/kallsyms-bench.c $(TEST_ARCHIVES) \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< $(TEST_LIBS)

# Fuzz targets built as plain programs that replay their corpus.
$(B)/tests/replay-fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c \
		tests/fuzz/fuzz.h $(TEST_ARCHIVES) $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(TEST_CFLAGS) \
		$(ALL_LDFLAGS) -o $@ $< tests/fuzz/replay.c $(TEST_LIBS)

# t-cfi-cache drives libsymprof's CFI, its step cache and its mapping
# table (and libsym's module ID code, which maps.c calls): the archive
# comes first.
$(B)/tests/t-cfi-cache: $(SYMPROF_TEST_LIB)
$(B)/tests/t-cfi-cache: private TEST_LIBS := $(SYMPROF_TEST_LIB) $(TEST_LIBS)
# t-unwind-memo likewise: the memo, the traced step, the cache, the maps.
$(B)/tests/t-unwind-memo: $(SYMPROF_TEST_LIB)
$(B)/tests/t-unwind-memo: private TEST_LIBS := $(SYMPROF_TEST_LIB) $(TEST_LIBS)

# The replays of libsymprof's parts link its test archive too.
SYMPROF_REPLAY := $(filter $(B)/tests/replay-fuzz-symprof-%,$(FUZZ_REPLAY))
$(SYMPROF_REPLAY): $(SYMPROF_TEST_LIB)
$(SYMPROF_REPLAY): private TEST_LIBS += $(SYMPROF_TEST_LIB)

deps:
	$(Q)tools/scripts/install-deps.sh

# check installs what is missing first, then builds in a sub-make so that
# pkg-config sees the new packages.
check: deps
	$(Q)$(MAKE) --no-print-directory check-build
	$(Q)SYM_ROOT=$(CURDIR) prove --exec '' -j2 $(UNIT_BINS) $(FUZZ_REPLAY:%=%) \
		$(sort $(wildcard tests/e2e/t*.sh))

check-build: all $(UNIT_BINS) $(FUZZ_REPLAY) $(B)/tests/raw-check

check-unit: all $(UNIT_BINS)
	$(Q)prove --exec '' $(UNIT_BINS)

# The fuzz targets as plain programs, each replaying its committed corpus
# (tests/fuzz/corpus/<target>/); `make fuzz` is the fuzzing itself.
check-fuzz: all $(FUZZ_REPLAY)
	$(Q)SYM_ROOT=$(CURDIR) prove --exec '' $(FUZZ_REPLAY)

check-e2e: all
	$(Q)SYM_ROOT=$(CURDIR) prove --exec '' $(sort $(wildcard tests/e2e/t*.sh))

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/scripts/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/bench.sh
	$(Q)tests/bench/symd-bench.sh
	$(Q)tests/bench/symd-attack-bench.sh
	$(Q)tests/bench/record-bench.sh
	$(Q)tests/bench/offcpu-bench.sh
	$(Q)tests/bench/agg-bench.sh
	$(Q)tests/bench/symprof-bench.sh
	$(Q)tests/bench/symprof-alloc-bench.sh
	$(Q)tests/bench/views-bench.sh
	$(Q)tests/bench/symbolize-log-bench.sh
	$(Q)tests/bench/stack-bench.sh
	$(Q)tests/bench/go-bench.sh
	$(Q)tests/bench/kernel-bench.sh
	$(Q)tests/bench/kernel-dwarf-bench.sh
	$(Q)tests/bench/cluster-bench.sh
	$(Q)tests/bench/objstore-bench.sh
	$(Q)tests/bench/cluster-multi-bench.sh
	$(Q)tests/bench/lazy-bench.sh
	$(Q)tests/bench/gsym-bench.sh
	$(Q)tests/bench/symd-cold-bench.sh

# The chaos tests (make check runs them short), one at a time, verbose
# (their figures are TAP comments), with longer runs where a test takes a
# knob.
CHAOS_TESTS := t0240-bombs t0241-special-files t0242-lines-damaged \
	t0243-bombs-dwz-dwo \
	t1050-store-race t1051-store-enospc t1052-symd-queues \
	t2020-symd-slow-clients t2021-symd-amplification t2022-symd-methods-fetch
CHAOS_ROUNDS ?= 4000
CHAOS_SECONDS ?= 60
chaos: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)SYM_ROOT=$(CURDIR) T1050_ROUNDS=$(CHAOS_ROUNDS) \
		T2020_SECONDS=$(CHAOS_SECONDS) T2021_SECONDS=$(CHAOS_SECONDS) \
		prove -v --exec '' $(CHAOS_TESTS:%=tests/e2e/%.sh)

FUZZ_TIME ?= 60
fuzz: deps
	$(Q)$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk FUZZ_TIME=$(FUZZ_TIME)

# The documents the man pages cite (docs/NAME.md), and those they link
# to: all of docs/*.md (tests/e2e/t0012-docs-links.sh checks it).
DOCS := $(wildcard docs/*.md)

install: all
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir) \
		$(DESTDIR)$(includedir) $(DESTDIR)$(pkgconfigdir) \
		$(DESTDIR)$(mandir)/man1
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(bindir)/
	$(INSTALL) -m 644 lib/libsym.a $(DESTDIR)$(libdir)/
	$(INSTALL) -m 755 lib/$(SONAME) $(DESTDIR)$(libdir)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libsym.so
	$(INSTALL) -m 644 lib/libsymprofile.a $(DESTDIR)$(libdir)/
	$(INSTALL) -m 755 lib/$(PROF_SONAME) $(DESTDIR)$(libdir)/$(PROF_SONAME)
	ln -sf $(PROF_SONAME) $(DESTDIR)$(libdir)/libsymprofile.so
	$(INSTALL) -m 755 lib/libsymprof.so $(DESTDIR)$(libdir)/libsymprof.so
	$(INSTALL) -m 644 libsym/sym.h libsym/prof/sym_prof.h \
		$(DESTDIR)$(includedir)/
	$(PC_SED) libsym/libsym.pc.in > $(DESTDIR)$(pkgconfigdir)/libsym.pc
	$(PC_SED) libsym/prof/libsymprofile.pc.in \
		> $(DESTDIR)$(pkgconfigdir)/libsymprofile.pc
	$(INSTALL) -m 644 docs/sym.1 $(DESTDIR)$(mandir)/man1/
	$(INSTALL) -d $(DESTDIR)$(mandir)/man8
	$(INSTALL) -m 644 docs/symd.8 $(DESTDIR)$(mandir)/man8/
	$(INSTALL) -d $(DESTDIR)$(docdir)
	$(INSTALL) -m 644 $(DOCS) $(DESTDIR)$(docdir)/
	$(INSTALL) -d $(DESTDIR)$(libexecdir)/sym
	for p in $(COMPAT:bin/compat/%=%); do \
		ln -sfn $(bindir)/sym $(DESTDIR)$(libexecdir)/sym/$$p || exit; \
	done

uninstall:
	rm -f $(PROGS:bin/%=$(DESTDIR)$(bindir)/%) \
		$(DESTDIR)$(libdir)/libsym.a $(DESTDIR)$(libdir)/$(SONAME) \
		$(DESTDIR)$(libdir)/libsym.so $(DESTDIR)$(libdir)/libsymprofile.a \
		$(DESTDIR)$(libdir)/$(PROF_SONAME) \
		$(DESTDIR)$(libdir)/libsymprofile.so \
		$(DESTDIR)$(libdir)/libsymprof.so \
		$(DESTDIR)$(includedir)/sym.h $(DESTDIR)$(includedir)/sym_prof.h \
		$(DESTDIR)$(pkgconfigdir)/libsym.pc \
		$(DESTDIR)$(pkgconfigdir)/libsymprofile.pc \
		$(DESTDIR)$(mandir)/man1/sym.1 $(DESTDIR)$(mandir)/man8/symd.8 \
		$(COMPAT:bin/compat/%=$(DESTDIR)$(libexecdir)/sym/%) \
		$(DOCS:docs/%=$(DESTDIR)$(docdir)/%)
	-rmdir $(DESTDIR)$(libexecdir)/sym $(DESTDIR)$(docdir) 2>/dev/null

clean:
	rm -rf $(B) bin lib

-include $(shell find $(B) -name '*.d' 2>/dev/null)
