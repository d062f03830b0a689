# Makefile - symd: libsym, the sym tool, the symd daemon, tests.
#
#   make                 build bin/sym, lib/libsym.{a,so}, lib/libsymprof.so
#   make check           install missing Debian packages, build, run all tests
#   make demo            install missing packages, build, run the demo
#   make bench           benchmark against llvm-symbolizer, addr2line, eu-addr2line;
#                        symd under load; libsymprof's overhead
#   make fuzz CC=clang   run the libFuzzer targets (FUZZ_TIME seconds each)
#   make install         prefix=/usr/local DESTDIR= (the llvm-symbolizer
#                        and addr2line drop-ins go to $(libexecdir)/sym/)
#
# Knobs: SANITIZE=address,undefined  V=1  DEVELOPER=1 (-Werror)
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
pkgconfigdir ?= $(libdir)/pkgconfig

CC ?= cc
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config
AR ?= ar
INSTALL ?= install

VERSION := $(shell sed -n 's/^\#define SYM_VERSION "\(.*\)"/\1/p' libsym/sym.h)
SOMAJOR := $(shell sed -n 's/^\#define SYM_VERSION_MAJOR //p' libsym/sym.h)
SONAME := libsym.so.$(SOMAJOR)

ifeq ($(V),1)
Q =
msg = @true
else
Q = @
msg = @printf '  %-7s %s\n' $(1) $(2);
endif

SYM_CFLAGS = -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wformat=2 -Wshadow \
	-Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter \
	-fvisibility=hidden -fPIC -Ilibsym -MMD -MP
ifeq ($(DEVELOPER),1)
SYM_CFLAGS += -Werror
endif
ifneq ($(SANITIZE),)
SAN_FLAGS = -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
endif

# Recursive (=) on purpose: pkg-config runs only when something is built,
# after `make check` has installed the packages.
LIB_PKGS = libdw libelf libzstd liblzma libdeflate libprotobuf-c zlib
DEP_CFLAGS = $(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
# LMDB installs no .pc file: plain -llmdb.
DEP_LIBS = $(shell $(PKG_CONFIG) --libs $(LIB_PKGS)) -llmdb -liberty
# The daemon's own (symd/): libevent, http-parser (no .pc file), threads.
SYMD_PKGS = libevent libevent_pthreads
SYMD_LIBS = $(shell $(PKG_CONFIG) --libs $(SYMD_PKGS)) -lhttp_parser -ldebuginfod -lpthread
# The sym tool's own: libcurl's header (sym upload, sym lookup --server);
# the library itself is dlopen()ed on first use (tools/client.c).
TOOL_PKGS = libcurl
ALL_CFLAGS = $(SYM_CFLAGS) $(DEP_CFLAGS) $(SAN_FLAGS) $(CFLAGS)
# symd/ sources also see libevent's flags, tools/ sources libcurl's.
$(B)/symd/%.o: DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags $(SYMD_PKGS))
$(B)/tools/%.o: DEP_CFLAGS += $(shell $(PKG_CONFIG) --cflags $(TOOL_PKGS))
ALL_LDFLAGS = $(SAN_FLAGS) $(LDFLAGS)

B = build
LIB_SRCS := $(wildcard libsym/*.c)
# Generated at build time (never committed): pprof's profile.proto as C.
GEN_OBJS := $(B)/gen/profile.pb-c.o
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o) $(GEN_OBJS)
TOOL_SRCS := $(wildcard tools/*.c)
TOOL_OBJS := $(TOOL_SRCS:%.c=$(B)/%.o)
UNIT_SRCS := $(wildcard tests/unit/t-*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
SYMD_SRCS := $(filter-out symd/main.c,$(wildcard symd/*.c))
SYMD_OBJS := $(SYMD_SRCS:%.c=$(B)/%.o)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz-*.c)
FUZZ_REPLAY := $(FUZZ_SRCS:tests/fuzz/%.c=$(B)/tests/replay-%)

PROGS = bin/sym $(if $(wildcard symd/main.c),bin/symd)
LIBS = lib/libsym.a lib/$(SONAME) lib/libsym.so lib/libsym.pc \
	lib/libsymprof.so

.PHONY: all check check-unit check-e2e check-fuzz deps demo bench fuzz \
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
FLAGS_NOW = $(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS)
$(B)/.flags: FORCE
	@mkdir -p $(B)
	@echo '$(FLAGS_NOW)' | cmp -s - $@ || echo '$(FLAGS_NOW)' > $@

.PHONY: FORCE
FORCE:

$(B)/%.o: %.c $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c -o $@ $<

# libsym/profile.proto (Google's, vendored) -> C with protoc-c, at build
# time.  The generated symbols (perftools__profiles__*) stay out of
# libsym.so's ABI: -fvisibility=hidden and the version script's local: *.
PROTOC_C ?= protoc-c
$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h &: libsym/profile.proto
	@mkdir -p $(B)/gen
	$(call msg,PROTOC,$@)$(PROTOC_C) --proto_path=libsym \
		--c_out=$(B)/gen libsym/profile.proto

# Generated code is not ours to keep warning-free: only its own warnings
# are silenced, the rest of the flags (sanitizers, -fPIC) are the same.
$(B)/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c $(B)/.flags
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -w -c -o $@ $<

# pprof.c includes the generated header.
$(B)/libsym/pprof.o: $(B)/gen/profile.pb-c.h
$(B)/libsym/pprof.o: DEP_CFLAGS += -I$(B)/gen

lib/libsym.a: $(LIB_OBJS)
	@mkdir -p lib
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

lib/$(SONAME): $(LIB_OBJS) libsym/libsym.map abi-check
	@mkdir -p lib
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -shared -Wl,-soname,$(SONAME) \
		-Wl,--version-script=libsym/libsym.map -Wl,--no-undefined \
		-o $@ $(LIB_OBJS) $(DEP_LIBS) $(LDLIBS)

lib/libsym.so: lib/$(SONAME)
	$(Q)ln -sf $(SONAME) $@

PC_SED = sed -e 's|@PREFIX@|$(prefix)|' -e 's|@LIBDIR@|$(libdir)|' \
	-e 's|@INCLUDEDIR@|$(includedir)|' -e 's|@VERSION@|$(VERSION)|'

lib/libsym.pc: libsym/libsym.pc.in libsym/sym.h
	@mkdir -p lib
	$(call msg,GEN,$@)$(PC_SED) $< > $@

# The exported symbols must be exactly the SYM_API functions of sym.h.
abi-check:
	$(Q)tests/abi-check.sh libsym/sym.h libsym/libsym.map

# -lm: tools/stats.c (erfc, sqrt, log).  The llvm-symbolizer drop-in
# demangles with LLVM 14's own demangler (llvm_demangle() in
# tools/addr2line.c): llvm-14-dev's libLLVMDemangle.a, C++.
LLVM_DEMANGLE_LIBS ?= /usr/lib/llvm-14/lib/libLLVMDemangle.a -lstdc++
bin/sym: $(TOOL_OBJS) lib/libsym.a
	@mkdir -p bin
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $(TOOL_OBJS) lib/libsym.a \
		$(DEP_LIBS) -lm $(LLVM_DEMANGLE_LIBS) $(LDLIBS)

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

lib/libsymprof.so: $(SYMPROF_OBJS)
	@mkdir -p lib
	$(call msg,LD,$@)$(CC) $(LDFLAGS) -shared -Wl,--no-undefined \
		-Wl,-z,now -o $@ $(SYMPROF_OBJS)

$(B)/tools/run.o: SYM_CFLAGS += -DSYM_LIBDIR='"$(libdir)"'

# The daemon's modules, as an archive the daemon and the tests link.
$(B)/libsymd.a: $(SYMD_OBJS)
	$(call msg,AR,$@)rm -f $@ && $(AR) rcs $@ $^

bin/symd: $(B)/symd/main.o $(B)/libsymd.a lib/libsym.a
	@mkdir -p bin
	$(call msg,LD,$@)$(CC) $(ALL_LDFLAGS) -o $@ $(B)/symd/main.o \
		$(B)/libsymd.a lib/libsym.a $(SYMD_LIBS) $(DEP_LIBS) $(LDLIBS)

$(B)/tests/t-%: tests/unit/t-%.c $(B)/libsymd.a lib/libsym.a tests/unit/tap.h \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Isymd \
		$(ALL_LDFLAGS) -o $@ $< $(B)/libsymd.a lib/libsym.a \
		$(SYMD_LIBS) $(DEP_LIBS) $(LDLIBS)

# t-pprof checks the encoding with the generated protobuf code.
$(B)/tests/t-pprof: $(B)/gen/profile.pb-c.h
$(B)/tests/t-pprof: DEP_CFLAGS += -I$(B)/gen

# The sym tool's stack trie and flame graph writer, tested on their own.
$(B)/tests/t-stacktree: tests/unit/t-stacktree.c tools/stacktree.c \
		tools/flame.c tools/stats.c lib/libsym.a tests/unit/tap.h \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/stacktree.c tools/flame.c \
		tools/stats.c lib/libsym.a $(DEP_LIBS) -lm $(LDLIBS)
# The t4000-symprof-* tests' checker of libsymprof's files (libsym's reader).
$(B)/tests/raw-check: tests/e2e/raw-check.c lib/libsym.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< \
		lib/libsym.a $(DEP_LIBS) $(LDLIBS)

# The reader of symd's answers lives in the sym tool (tools/client.c).
$(B)/tests/replay-fuzz-reply: tests/fuzz/fuzz-reply.c tests/fuzz/replay.c \
		tools/client.c tools/util.c lib/libsym.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itools \
		$(shell $(PKG_CONFIG) --cflags $(TOOL_PKGS)) $(ALL_LDFLAGS) \
		-o $@ $< tests/fuzz/replay.c tools/client.c tools/util.c \
		lib/libsym.a $(DEP_LIBS) $(LDLIBS)

# The statistics of sym report and sym diff live in the sym tool
# (tools/stats.c); they are pure functions and need only libm.
$(B)/tests/t-stats: tests/unit/t-stats.c tools/stats.c tools/stats.h \
		tests/unit/tap.h lib/libsym.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/stats.c lib/libsym.a \
		$(DEP_LIBS) -lm $(LDLIBS)

# The per-host spread of sym report (tools/report_spread.c), on its own.
$(B)/tests/t-spread: tests/unit/t-spread.c tools/report_spread.c \
		tools/report_spread.h tests/unit/tap.h lib/libsym.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/report_spread.c lib/libsym.a \
		$(DEP_LIBS) -lm $(LDLIBS)

# The DWARF unwinder of `sym record` lives in the sym tool (tools/unwind.c).
UNWIND_TEST_DEPS = tools/unwind.c tools/unwind.h tests/unit/perfsample.h \
	lib/libsym.a tests/unit/tap.h $(B)/.flags
$(B)/tests/t-unwind: tests/unit/t-unwind.c $(UNWIND_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/unwind.c lib/libsym.a \
		$(DEP_LIBS) $(LDLIBS)

# fp mode's chain checks (tools/fpcheck.c, compiled in by the test) on the
# same unwinder.
$(B)/tests/t-fpcheck: tests/unit/t-fpcheck.c tools/fpcheck.c tools/fpcheck.h \
		$(UNWIND_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/unwind.c lib/libsym.a \
		$(DEP_LIBS) $(LDLIBS)

# Its benchmark: build/tests/unwind-bench (see docs/record.md).
$(B)/tests/unwind-bench: tests/bench/unwind-bench.c $(UNWIND_TEST_DEPS)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itests/unit -Itools \
		$(ALL_LDFLAGS) -o $@ $< tools/unwind.c lib/libsym.a \
		$(DEP_LIBS) $(LDLIBS)
# fuzz-folded drives the sym tool's folded reader and flame graph writer.
$(B)/tests/replay-fuzz-folded: tests/fuzz/fuzz-folded.c tests/fuzz/replay.c \
		tools/stacktree.c tools/flame.c tools/stats.c lib/libsym.a \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itools $(ALL_LDFLAGS) \
		-o $@ $< tests/fuzz/replay.c tools/stacktree.c tools/flame.c \
		tools/stats.c lib/libsym.a $(DEP_LIBS) -lm $(LDLIBS)
# The perf script reader and the folded-stack map live in the sym tool.
$(B)/tests/replay-fuzz-perfscript: tests/fuzz/fuzz-perfscript.c \
		tests/fuzz/replay.c tools/perfscript.c tools/foldmap.c \
		$(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Itools $(ALL_LDFLAGS) \
		-o $@ $< tests/fuzz/replay.c tools/perfscript.c tools/foldmap.c \
		$(LDLIBS)

# Fuzz targets built as plain programs that replay their corpus.
$(B)/tests/replay-fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/replay.c \
		$(B)/libsymd.a lib/libsym.a $(B)/.flags
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -Isymd $(ALL_LDFLAGS) \
		-o $@ $< tests/fuzz/replay.c $(B)/libsymd.a lib/libsym.a \
		$(SYMD_LIBS) $(DEP_LIBS) $(LDLIBS)

deps:
	$(Q)tools/install-deps.sh

# check installs what is missing first, then builds in a sub-make so that
# pkg-config sees the new packages.
check: deps
	$(Q)$(MAKE) --no-print-directory check-build
	$(Q)SYM_ROOT=$(CURDIR) prove --exec '' -j2 $(UNIT_BINS) $(FUZZ_REPLAY:%=%) \
		$(sort $(wildcard tests/e2e/t*.sh))

check-build: all $(UNIT_BINS) $(FUZZ_REPLAY) $(B)/tests/raw-check

check-unit: all $(UNIT_BINS)
	$(Q)prove --exec '' $(UNIT_BINS)

check-e2e: all
	$(Q)SYM_ROOT=$(CURDIR) prove --exec '' $(sort $(wildcard tests/e2e/t*.sh))

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tools/demo.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)tests/bench/bench.sh
	$(Q)tests/bench/symd-bench.sh
	$(Q)tests/bench/record-bench.sh
	$(Q)tests/bench/symprof-bench.sh
	$(Q)tests/bench/views-bench.sh

FUZZ_TIME ?= 60
fuzz: deps
	$(Q)$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk FUZZ_TIME=$(FUZZ_TIME)

install: all
	$(INSTALL) -d $(DESTDIR)$(bindir) $(DESTDIR)$(libdir) \
		$(DESTDIR)$(includedir) $(DESTDIR)$(pkgconfigdir) \
		$(DESTDIR)$(mandir)/man1
	$(INSTALL) -m 755 $(PROGS) $(DESTDIR)$(bindir)/
	$(INSTALL) -m 644 lib/libsym.a $(DESTDIR)$(libdir)/
	$(INSTALL) -m 755 lib/$(SONAME) $(DESTDIR)$(libdir)/$(SONAME)
	$(INSTALL) -m 755 lib/libsymprof.so $(DESTDIR)$(libdir)/libsymprof.so
	ln -sf $(SONAME) $(DESTDIR)$(libdir)/libsym.so
	$(INSTALL) -m 644 libsym/sym.h $(DESTDIR)$(includedir)/
	$(PC_SED) libsym/libsym.pc.in > $(DESTDIR)$(pkgconfigdir)/libsym.pc
	$(INSTALL) -m 644 docs/sym.1 $(DESTDIR)$(mandir)/man1/
	$(INSTALL) -d $(DESTDIR)$(mandir)/man8
	$(INSTALL) -m 644 docs/symd.8 $(DESTDIR)$(mandir)/man8/
	$(INSTALL) -d $(DESTDIR)$(libexecdir)/sym
	for p in $(COMPAT:bin/compat/%=%); do \
		ln -sfn $(bindir)/sym $(DESTDIR)$(libexecdir)/sym/$$p || exit; \
	done

uninstall:
	rm -f $(PROGS:bin/%=$(DESTDIR)$(bindir)/%) \
		$(DESTDIR)$(libdir)/libsym.a $(DESTDIR)$(libdir)/$(SONAME) \
		$(DESTDIR)$(libdir)/libsym.so $(DESTDIR)$(libdir)/libsymprof.so \
		$(DESTDIR)$(includedir)/sym.h \
		$(DESTDIR)$(pkgconfigdir)/libsym.pc $(DESTDIR)$(mandir)/man1/sym.1 \
		$(DESTDIR)$(mandir)/man8/symd.8 \
		$(COMPAT:bin/compat/%=$(DESTDIR)$(libexecdir)/sym/%)
	-rmdir $(DESTDIR)$(libexecdir)/sym 2>/dev/null

clean:
	rm -rf $(B) bin lib

-include $(shell find $(B) -name '*.d' 2>/dev/null)
