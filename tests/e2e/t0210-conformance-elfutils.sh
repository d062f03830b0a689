#!/bin/bash
# t0210-conformance-elfutils.sh - the addr2line cases of elfutils' own test
# suite (../shared/conformance/elfutils), run through
# `sym addr2line --output-style=elfutils`, one TAP point per case.
#
# Cases that need what sym addr2line does not do are skipped with the
# reason (docs/conformance.md): core files (--core), process maps (-M),
# relocatable (ET_REL) inputs and ppc64 files.  Every other case must pass.
# The runner logic follows the suite's run.sh: the tool runs in a scratch
# dir holding the case's inputs, and stdout+stderr are diffed together.
. "$(dirname "$0")/lib/lib.sh"
CONF=$SHARED/conformance/elfutils
[ -d "$CONF/scripts" ] || plan_skip "$CONF is absent"
[ -x "$SYM" ] || plan_skip "$SYM not built"
ADDR2LINE="$SYM_ROOT/tests/e2e/lib/eu-addr2line-compat.sh"
export SYM

# Why a case is skipped, or nothing when it must pass.
skip_reason() {
	_args=$(cat "$1/args")
	case $_args in
	*--core=*) echo "needs core files (--core)"; return ;;
	*-M*) echo "needs -M process maps"; return ;;
	esac
	for _f in testfile38 testfile41 testfile49 testfile64; do
		case " $(echo $_args) " in
		*" $_f "*) echo "$_f is relocatable (ET_REL)"; return ;;
		esac
	done
	case $_args in
	*testfile66*) echo "testfile66 is ppc64" ;;
	esac
}

cases=()
for c in "$CONF"/scripts/*/cases/*/; do
	[ "$(cat "$c/tool")" = addr2line ] && cases+=("$c")
done
plan ${#cases[@]}

for c in "${cases[@]}"; do
	sd=${c%cases/*}
	id="$(basename "$sd")/$(basename "$c")"
	why=$(skip_reason "$c")
	if [ -n "$why" ]; then
		skip "$id: $why"
		continue
	fi
	W=$(mktemp -d "$T/case.XXXXXX")
	sort -u "$sd/files" | while read -r f; do
		ln -sf "$CONF/inputs/$f" "$W/$f"
	done
	if [ -d "$sd/extra" ]; then
		cp -a "$sd/extra/." "$W/"
	fi
	mapfile -t args < <(sed "s|@DIR@|$W|g" "$c/args")
	sed "s|@DIR@|$W|g" "$c/expected" > "$W/.expected"
	in=/dev/null
	[ -f "$c/stdin" ] && in="$c/stdin"
	( cd "$W" && timeout 60 "$ADDR2LINE" "${args[@]}" < "$in" \
		> "$W/.out" 2>&1 )
	if diff -u "$W/.expected" "$W/.out" > "$W/.diff"; then
		_tap 0 "$id"
	else
		_tap 1 "$id: ${args[*]}"
		sed 's/^/#   /' "$W/.diff" | head -20
	fi
done

done_testing
