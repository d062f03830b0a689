#!/bin/sh
# eu-addr2line-compat.sh - run `sym addr2line --output-style=elfutils` with
# eu-addr2line's argv, for ../shared/conformance/elfutils/run.sh
# (ADDR2LINE=tests/e2e/lib/eu-addr2line-compat.sh).  The argv needs no
# shaping today; the script exists so that the runner has one word to run
# and so that a future difference has one place to go.
exec "${SYM:-$(cd "$(dirname "$0")/../.." && pwd)/bin/sym}" addr2line \
	--output-style=elfutils "$@"
