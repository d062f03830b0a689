#!/bin/sh
# t0012-docs-links.sh - the docs point only at what the repository has:
# every relative link and path named in docs/*.md, docs/*.1, docs/*.8 and
# README.md is a tracked file or directory, and none points at the
# project's notes outside the checkout (../shared); the checker
# (tests/e2e/lib/docs_links.py) catches a broken one in a scratch repo.
# And `make install` puts every document the man pages cite in
# $(docdir) (share/doc/symd), and `make uninstall` takes them away.
. "$(dirname "$0")/lib/lib.sh"
need git python3
CHECK="python3 $SYM_ROOT/tests/e2e/lib/docs_links.py"
plan 7

$CHECK "$SYM_ROOT" > "$T/bad" 2>&1
is "every path the docs name is in the repository" \
	"$? $(cat "$T/bad")" "0 "

# The checker fails on what it is meant to catch.
R=$T/repo
mkdir -p "$R/docs/sub" "$R/symd"
: > "$R/symd/api.c"
: > "$R/docs/sub/x.md"
printf '.TH S 1\nSee docs/a.md.\n' > "$R/docs/sym.1"
printf '.TH S 8\n' > "$R/docs/symd.8"
cat > "$R/docs/a.md" <<'EOD'
[ok](sub/x.md) and [web](https://example.org/) and `symd/api.c`,
[broken](sub/y.md), `symd/gone.c`, see PRODUCT.md (in `../shared`).
EOD
echo '[a](docs/a.md) [b](docs/b.md)' > "$R/README.md"
git -C "$R" init -q && git -C "$R" add -A
$CHECK "$R" > "$T/bad2" 2>&1
is "the checker finds a broken link, a missing path, a missing document and ../shared" \
	"$? $(cat "$T/bad2")" "1 docs/a.md:2: points outside the repository: ../shared
docs/a.md:2: no such file in the repository: ../shared
docs/a.md:2: no such file in the repository: PRODUCT.md
docs/a.md:2: no such file in the repository: sub/y.md
docs/a.md:2: no such file in the repository: symd/gone.c
README.md:1: no such file in the repository: docs/b.md"

# The documents the man pages cite, installed.
$CHECK "$SYM_ROOT" --cited > "$T/cited"
ok "the man pages cite documents (http-api.md among them)" \
	grep -qx 'http-api.md' "$T/cited"
D=$T/dest
make -C "$SYM_ROOT" --no-print-directory install DESTDIR="$D" \
	prefix=/opt/sym > "$T/install.out" 2>&1
is "make install DESTDIR prefix=/opt/sym" "$?" 0
missing=
while read -r doc; do
	cmp -s "$SYM_ROOT/docs/$doc" "$D/opt/sym/share/doc/symd/$doc" ||
		missing="$missing $doc"
done < "$T/cited"
is "every cited document is in share/doc/symd" "$missing" ""
# What the installed documents link to is installed too.
is "the installed documents' links resolve among them" \
	"$(cd "$D/opt/sym/share/doc/symd" && grep -ohE '\]\([a-z0-9-]+\.md' *.md |
	   sed 's/^](//' | sort -u | while read -r f; do
		[ -f "$f" ] || echo "$f"; done)" ""
make -C "$SYM_ROOT" --no-print-directory uninstall DESTDIR="$D" \
	prefix=/opt/sym > "$T/uninstall.out" 2>&1
ok "make uninstall removes them and share/doc/symd" \
	test ! -e "$D/opt/sym/share/doc/symd"
done_testing
