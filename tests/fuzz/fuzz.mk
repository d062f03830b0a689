# fuzz.mk - build and run the libFuzzer targets.
#
#   make fuzz CC=clang [FUZZ_TIME=60]      (the top Makefile calls this)
#   make -f tests/fuzz/fuzz.mk FUZZ_TARGETS=fuzz-table FUZZ_TIME=300
#   make -f tests/fuzz/fuzz.mk build       build only
#
# Each target tests/fuzz/fuzz-<name>.c is linked with -fsanitize=fuzzer
# against the libsym sources compiled here with the same sanitizers
# (fuzzer-no-link, address, undefined), into build/fuzz/, so the normal
# build/ objects are left alone.  The targets in SYMD_TARGETS, which drive
# the daemon's code, also get symd/*.c (but main.c), compiled the same
# way, and the daemon's libraries (libevent, http-parser, ...).  libelf,
# libdw and libevent are Debian's, not instrumented: a bug inside them
# shows as a crash whose top frames are in their .so files.
#
# Each target then runs for FUZZ_TIME seconds, starting from the committed
# seeds in tests/fuzz/corpus/<target>/ plus what earlier runs found in
# build/fuzz/work/<target>/ (where libFuzzer writes new inputs).  The
# committed corpus is never written.  After the run the inputs that add
# coverage over the committed corpus are merged into
# build/fuzz/new/<target>/: review them and copy the useful ones into
# tests/fuzz/corpus/<target>/ by hand.  Crashes, leaks, timeouts and
# out-of-memory inputs land in build/fuzz/artifacts/<target>/; the run
# fails when one is found.

FUZZ_TIME ?= 60
# ELF seeds are under 20 KB; room to grow, yet small enough for fast execs.
FUZZ_MAX_LEN ?= 65536
# Per-input limits: a slow or huge input is a bug too (sym must never hang).
FUZZ_TIMEOUT ?= 10
FUZZ_RSS_MB ?= 2048
FUZZ_FLAGS ?=
# Extra compiler flags, e.g. -fno-sanitize=nonnull-attribute to get past a
# known finding while it is being fixed.
FUZZ_EXTRA_CFLAGS ?=
# The engine to link, OSS-Fuzz style (it sets this to its own).
LIB_FUZZING_ENGINE ?= -fsanitize=fuzzer

# libFuzzer needs clang.  `make fuzz` without CC=clang gets cc (gcc), so
# fall back to clang unless the given compiler is a clang.
FUZZ_CC := $(if $(findstring clang,$(CC)),$(CC),clang)
PKG_CONFIG ?= pkg-config

B := build/fuzz
FUZZ_TARGETS ?= $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
# libsym and libsymprofile (libsym/prof/) in one archive here: the
# targets that read profiles need both.
LIB_SRCS := $(wildcard libsym/*.c libsym/prof/*.c)
# pprof's profile.proto as C, generated here as the top Makefile does.
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o) $(B)/gen/profile.pb-c.o
PROTOC_C ?= protoc-c

# The libraries' dependencies, as the top Makefile has them (so that this
# file follows when a library gains one): its LIB_PKGS and PROF_PKGS for
# pkg-config, and what DEP_LIBS adds after the pkg-config call (-liberty).
LIB_PKGS := $(shell sed -n 's/^LIB_PKGS *= *//p' Makefile) \
	$(shell sed -n 's/^PROF_PKGS *= *//p' Makefile)
extra_sed := s/^DEP_LIBS *=.*)) *//p
LIB_EXTRA := $(shell sed -n '$(extra_sed)' Makefile)

SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
# The same required flags as the top Makefile's SYM_CFLAGS, plus the
# sanitizers; -O1 -g as libFuzzer recommends.
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter \
	-fvisibility=hidden -Ilibsym -Ilibsym/prof -MMD -MP -O1 -g $(SAN) \
	$(FUZZ_EXTRA_CFLAGS) \
	$(shell $(PKG_CONFIG) --cflags $(LIB_PKGS))
FUZZ_LIBS := $(shell $(PKG_CONFIG) --libs $(LIB_PKGS)) $(LIB_EXTRA)

# The daemon's modules and dependencies, read from the top Makefile the
# same way: its SYMD_PKGS, and what SYMD_LIBS adds after the pkg-config
# call (-lhttp_parser, ...).
SYMD_TARGETS ?= fuzz-http fuzz-req fuzz-s3xml fuzz-s3meta
SYMD_SRCS := $(filter-out symd/main.c,$(wildcard symd/*.c))
SYMD_OBJS := $(SYMD_SRCS:%.c=$(B)/%.o)
SYMD_PKGS := $(shell sed -n 's/^SYMD_PKGS *= *//p' Makefile)
symd_extra_sed := s/^SYMD_LIBS *=.*)) *//p
SYMD_EXTRA := $(shell sed -n '$(symd_extra_sed)' Makefile)
SYMD_CFLAGS := -Isymd $(shell $(PKG_CONFIG) --cflags $(SYMD_PKGS))
SYMD_LIBS := $(shell $(PKG_CONFIG) --libs $(SYMD_PKGS)) $(SYMD_EXTRA)

.PHONY: all build run $(FUZZ_TARGETS:%=run-%)
all: run
build: $(FUZZ_TARGETS:%=$(B)/%)
run: $(FUZZ_TARGETS:%=run-%)

$(B)/libsym/%.o: libsym/%.c
	@mkdir -p $(dir $@)
	@printf '  %-7s %s\n' CC $@
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/gen/profile.pb-c.c $(B)/gen/profile.pb-c.h &: libsym/prof/profile.proto
	@mkdir -p $(B)/gen
	@$(PROTOC_C) --proto_path=libsym/prof --c_out=$(B)/gen \
		libsym/prof/profile.proto

$(B)/gen/profile.pb-c.o: $(B)/gen/profile.pb-c.c
	@printf '  %-7s %s\n' CC $@
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -w -fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/libsym/prof/pprof-read.o $(B)/libsym/prof/pprof-write.o: \
	$(B)/gen/profile.pb-c.h
$(B)/libsym/prof/%.o: private FUZZ_CFLAGS += -I$(B)/gen

$(B)/libsym-fuzz.a: $(LIB_OBJS)
	@rm -f $@ && ar rcs $@ $^

$(B)/symd/%.o: symd/%.c
	@mkdir -p $(dir $@)
	@printf '  %-7s %s\n' CC $@
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(SYMD_CFLAGS) -fsanitize=fuzzer-no-link \
		-c -o $@ $<

# The status page's HTML as a C string, as the Makefile makes it.
$(B)/gen/status-html.h: symd/status.html
	@mkdir -p $(B)/gen
	@sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' \
		-e 's/$$/\\n"/' $< > $@.tmp && mv $@.tmp $@
$(B)/symd/status.o: private FUZZ_CFLAGS += -I$(B)/gen
$(B)/symd/status.o: $(B)/gen/status-html.h

$(B)/libsymd-fuzz.a: $(SYMD_OBJS)
	@rm -f $@ && ar rcs $@ $^

# The sym tool's modules, compiled the same way into archives as the top
# Makefile has them: the command files and CLI helpers (tools/*.c but
# sym.c), the recorder's (tools/agent/) and the views' (tools/view/).
# The targets in TOOL_TARGETS drive them: fuzz-reply the reader of symd's
# answers (tools/client.c), fuzz-folded the folded reader and flame graph
# writer, fuzz-perfscript the perf script reader and fold map, fuzz-unwind
# sym record's CFI unwinder (tools/agent/unwind.c), fuzz-core the core
# file reader of sym stack (tools/core.c), fuzz-log the line parser of sym
# symbolize-log (tools/logline.c), fuzz-addr the hex address parser of sym
# addr2line and sym lookup (tools/util.c), fuzz-kallsyms the reader of kallsyms
# snapshots and their tables (libsym/ksnap.c, which the tools and the
# store share), fuzz-kmods the loaded-module reader of sym record and sym
# kallsyms (tools/kallsyms.c: /proc/modules lines, sections/.text).
TOOL_TARGETS ?= fuzz-reply fuzz-folded fuzz-perfscript fuzz-unwind fuzz-core \
	fuzz-log fuzz-kallsyms fuzz-kmods fuzz-addr
TOOL_SRCS := $(filter-out tools/sym.c,$(wildcard tools/*.c))
TOOL_ARCHIVES := $(B)/tools/libsymtool-fuzz.a $(B)/tools/libview-fuzz.a \
	$(B)/tools/libagent-fuzz.a
TOOL_CFLAGS := -Itools $(shell $(PKG_CONFIG) --cflags libcurl)

$(B)/tools/%.o: tools/%.c
	@mkdir -p $(dir $@)
	@printf '  %-7s %s\n' CC $@
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(TOOL_CFLAGS) -fsanitize=fuzzer-no-link \
		-c -o $@ $<

$(B)/tools/libsymtool-fuzz.a: $(TOOL_SRCS:%.c=$(B)/%.o)
	@rm -f $@ && ar rcs $@ $^
$(B)/tools/libview-fuzz.a: $(patsubst %.c,$(B)/%.o,$(wildcard tools/view/*.c))
	@rm -f $@ && ar rcs $@ $^
# (offcpu.c, the BPF loader, is left out: it needs the skeleton, and no
# fuzz target reaches it.)
$(B)/tools/libagent-fuzz.a: $(patsubst %.c,$(B)/%.o,$(filter-out \
		tools/agent/offcpu.c,$(wildcard tools/agent/*.c)))
	@rm -f $@ && ar rcs $@ $^

$(TOOL_TARGETS:%=$(B)/%): $(TOOL_ARCHIVES)
$(TOOL_TARGETS:%=$(B)/%): FUZZ_SYMD = $(TOOL_CFLAGS) -Wl,--start-group \
	$(TOOL_ARCHIVES) -Wl,--end-group -lm

# libsymprof's in-memory parts (tools/symprof/, the files that export
# nothing, as the top Makefile's test archive), for SYMPROF_TARGETS:
# fuzz-symprof-cfi drives its CFI reader and unwind step.
SYMPROF_TARGETS ?= fuzz-symprof-cfi
SYMPROF_FUZZ_SRCS := $(shell grep -L SP_EXPORT $(wildcard tools/symprof/*.c))
$(B)/tools/libsymprof-fuzz.a: $(SYMPROF_FUZZ_SRCS:%.c=$(B)/%.o)
	@rm -f $@ && ar rcs $@ $^
$(SYMPROF_TARGETS:%=$(B)/%): $(B)/tools/libsymprof-fuzz.a
$(SYMPROF_TARGETS:%=$(B)/%): FUZZ_SYMD = $(TOOL_CFLAGS) \
	$(B)/tools/libsymprof-fuzz.a

# Only the SYMD_TARGETS depend on the daemon's code (and its build).
$(SYMD_TARGETS:%=$(B)/%): $(B)/libsymd-fuzz.a
$(SYMD_TARGETS:%=$(B)/%): FUZZ_SYMD = $(SYMD_CFLAGS) $(B)/libsymd-fuzz.a
$(SYMD_TARGETS:%=$(B)/%): FUZZ_SYMD_LIBS = $(SYMD_LIBS)

$(B)/fuzz-%: tests/fuzz/fuzz-%.c tests/fuzz/fuzz.h $(B)/libsym-fuzz.a
	@mkdir -p $(dir $@)
	@printf '  %-7s %s\n' LD $@
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(LIB_FUZZING_ENGINE) -o $@ $< \
		$(FUZZ_SYMD) $(B)/libsym-fuzz.a $(FUZZ_LIBS) $(FUZZ_SYMD_LIBS)

# One run: fuzz, then merge what adds coverage over the committed corpus
# into new/ (the committed files are copied into a scratch dir first, so
# that merge keeps only the new ones; we then drop the copies again).
$(FUZZ_TARGETS:%=run-%): run-%: $(B)/%
	@mkdir -p $(B)/work/$* $(B)/artifacts/$* $(B)/new/$* $(B)/logs
	@echo "fuzz: $* for $(FUZZ_TIME) s (log: $(B)/logs/$*.log)"
	@dict=; [ -f tests/fuzz/$*.dict ] && dict=-dict=tests/fuzz/$*.dict; \
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	UBSAN_OPTIONS=print_stacktrace=1 \
	./$(B)/$* -max_total_time=$(FUZZ_TIME) -max_len=$(FUZZ_MAX_LEN) \
		-timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=$(FUZZ_RSS_MB) \
		-print_final_stats=1 $$dict \
		-artifact_prefix=$(B)/artifacts/$*/ $(FUZZ_FLAGS) \
		$(B)/work/$* tests/fuzz/corpus/$* > $(B)/logs/$*.log 2>&1; \
	rc=$$?; \
	grep -E '^#[0-9]+[[:space:]].*cov:' $(B)/logs/$*.log | tail -1; \
	grep -E '^stat::|^(==[0-9]+==)?(ERROR|SUMMARY)|contract violated|^artifact_prefix|Test unit written' \
		$(B)/logs/$*.log | tail -20; \
	rm -rf $(B)/merge/$*; mkdir -p $(B)/merge/$*; \
	cp tests/fuzz/corpus/$*/* $(B)/merge/$*/ 2>/dev/null; \
	./$(B)/$* -merge=1 -max_len=$(FUZZ_MAX_LEN) -timeout=$(FUZZ_TIMEOUT) \
		-rss_limit_mb=$(FUZZ_RSS_MB) $(B)/merge/$* $(B)/work/$* \
		> $(B)/logs/$*.merge.log 2>&1; \
	rm -rf $(B)/new/$*; mkdir -p $(B)/new/$*; \
	for f in $(B)/merge/$*/*; do \
		[ -e "tests/fuzz/corpus/$*/$${f##*/}" ] || mv "$$f" $(B)/new/$*/; \
	done; \
	echo "fuzz: $*: $$(ls $(B)/new/$* | wc -l) inputs that add coverage in $(B)/new/$*/"; \
	echo "fuzz: $*: $$(ls $(B)/artifacts/$* | wc -l) artifacts in $(B)/artifacts/$*/"; \
	exit $$rc

-include $(shell find $(B) -name '*.d' 2>/dev/null)
