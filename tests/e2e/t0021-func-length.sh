#!/bin/sh
# t0021-func-length.sh - no function of libsym/, symd/ or tools/ is over
# 150 lines (tests/func-length.py: one TAP point per C file, and one for
# its list of allowed exceptions, signal-handler code only).
root=${SYM_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v python3 > /dev/null || { echo "1..0 # SKIP python3 missing"; exit 0; }
exec python3 "$root/tests/func-length.py" "$root"
