#!/bin/sh
# t2150-ci-doc.sh - docs/ci.md's snippets work: the plain shell step runs
# as written against a real symd (with SYM_SERVER and SYM_TOKEN_FILE, as
# a CI sets them) and uploads the ELF files of a build tree, skipping
# scripts and data; run again, it skips what the server has.  The GitHub
# Actions step and the GitLab CI job parse as YAML, and their commands,
# run in the same tree with the variables each CI would set, succeed.
. "$(dirname "$0")/lib/lib.sh"
. "$(dirname "$0")/lib/symd-lib.sh"
need curl python3 cc
python3 -c 'import yaml' 2>/dev/null || plan_skip "no python3-yaml"

exe=$(fixture gcc-O2-d5-cxx) || plan_skip "cannot build the fixtures"
DOC=$SYM_ROOT/docs/ci.md
plan 10

echo secret-token > "$T/token"
start_symd --upload-token-file "$T/token" || exit 1
export PATH="$SYM_ROOT/bin:$PATH"
unset SYM_SERVER SYM_TOKEN SYM_TOKEN_FILE

# A build tree: an executable with DWARF, a shared library, a script and
# a data file.
mkdir -p "$T/ci/build/bin" "$T/ci/build/lib"
cp "$exe" "$T/ci/build/bin/app"
printf 'int libapp_answer(void) { return 42; }\n' > "$T/lib.c"
cc -g -O2 -shared -fPIC -Wl,--build-id -o "$T/ci/build/lib/libapp.so" "$T/lib.c"
printf '#!/bin/sh\necho hi\n' > "$T/ci/build/bin/run.sh"
chmod +x "$T/ci/build/bin/run.sh"
echo data > "$T/ci/build/lib/libapp.so.conf"
aid=$(sym buildid "$T/ci/build/bin/app" | cut -d' ' -f1)
lid=$(sym buildid "$T/ci/build/lib/libapp.so" | cut -d' ' -f1)

# The shell step: the ```sh block after the marker, as written.
python3 - "$DOC" > "$T/step.sh" <<'PY'
import sys
t = open(sys.argv[1]).read()
t = t[t.index("<!-- the shell step"):]
t = t[t.index("```sh\n") + 6:]
print(t[:t.index("```\n")], end="")
PY
(cd "$T/ci" && SYM_SERVER=$SYMD_URL SYM_TOKEN_FILE=$T/token sh "$T/step.sh") \
	> "$T/out" 2> "$T/err"
is "the shell step: exit 0" "$?" 0
sed 's/^/# /' "$T/out" "$T/err"
is "... uploaded the two ELF files, nothing else" \
	"$(sed 's/  uploaded [0-9]* bytes$/  uploaded/' "$T/out" | sort)" \
	"$(printf '%s\n' "$aid  build/bin/app  debuginfo  uploaded" \
		"$lid  build/lib/libapp.so  debuginfo  uploaded" | sort)"
is "the server has the app's DWARF" \
	"$(curl -sSI "$SYMD_URL/v1/debuginfo/$aid" | tr -d '\r' | sed -n 's/^[Xx]-[Ss]ym-[Qq]uality: //p')" dwarf
(cd "$T/ci" && SYM_SERVER=$SYMD_URL SYM_TOKEN_FILE=$T/token sh "$T/step.sh") \
	> "$T/out" 2> "$T/err"
is "run again: exit 0, both skipped" "$?:$(grep -c 'already there, skipped' "$T/out")" "0:2"
(cd "$T/ci" && SYM_TOKEN_FILE=$T/token sh "$T/step.sh") > "$T/out" 2> "$T/err"
ok "without SYM_SERVER: it says so and fails" \
	sh -c "[ $? != 0 ] && grep -q 'set SYM_SERVER' '$T/err'"

# The YAML snippets: they parse, and their commands run.
python3 - "$DOC" "$T" <<'PY'
import sys, yaml
t = open(sys.argv[1]).read()
blocks = [b.split("```")[0] for b in t.split("```yaml\n")[1:]]
gh = yaml.safe_load(blocks[0])[0]
gl = yaml.safe_load(blocks[1])["upload-debuginfo"]
open(sys.argv[2] + "/gh.sh", "w").write(gh["run"] + "\n")
open(sys.argv[2] + "/gh.env", "w").write(" ".join(sorted(gh["env"])) + "\n")
open(sys.argv[2] + "/gl.sh", "w").write("\n".join(gl["script"]) + "\n")
open(sys.argv[2] + "/gl.env", "w").write(" ".join(sorted(gl["variables"])) + "\n")
PY
is "the GitHub Actions step parses: env SYM_SERVER, SYM_TOKEN" "$(cat "$T/gh.env")" "SYM_SERVER SYM_TOKEN"
is "the GitLab job parses: variables SYM_SERVER" "$(cat "$T/gl.env")" "SYM_SERVER"
cp "$T/ci/build/lib/libapp.so" "$T/ci/build/libapp.so"
cp "$T/ci/build/bin/app" "$T/ci/build/app"
(cd "$T/ci" && SYM_SERVER=$SYMD_URL SYM_TOKEN=secret-token sh "$T/gh.sh") > "$T/out" 2>&1
is "the GitHub step's command, with its env: exit 0" "$?" 0
(cd "$T/ci" && SYM_SERVER=$SYMD_URL SYM_TOKEN_FILE=$T/token sh "$T/gl.sh") > "$T/out" 2>&1
is "the GitLab job's script, with a File variable: exit 0" "$?" 0
ok "a wrong SYM_TOKEN fails the step" sh -c "! (cd '$T/ci' && SYM_SERVER=$SYMD_URL SYM_TOKEN=wrong sym upload --force build/app) > /dev/null 2>&1"
done_testing
