#!/bin/sh
# abi-check.sh [-m MACRO] HEADER MAP - check an installed header against
# its version script.  It fails when:
#  - the functions HEADER exports (declared with MACRO) and the global
#    symbols of MAP differ, or a symbol is global in two version nodes;
#  - an exported declaration has no /** */ comment right before it;
#  - the comment of a function that returns a value has no @return.
# MACRO is the one HEADER defines as __attribute__((visibility("default"))),
# else SYM_API (a header that includes sym.h and uses its macro).
# Used for every installed header: libsym/sym.h with libsym/libsym.map,
# and any other library's header/map pair.
set -e
macro=
if [ "$1" = -m ]; then
	macro=$2
	shift 2
fi
if [ $# -ne 2 ]; then
	echo "usage: abi-check.sh [-m MACRO] HEADER MAP" >&2
	exit 2
fi
hdr=$1 map=$2
for f in "$hdr" "$map"; do
	if [ ! -r "$f" ]; then
		echo "abi-check: cannot read '$f'" >&2
		exit 2
	fi
done
if [ -z "$macro" ]; then
	macro=$(perl -ne 'if (/^\#define \s+ (\w+) \s+ __attribute__ \s*
			\(\( \s* visibility \s* \( \s* "default"/x) {
		print "$1\n"; exit }' "$hdr")
	: "${macro:=SYM_API}"
fi
tmp=${TMPDIR:-/tmp}/abi-check.$$
trap 'rm -f "$tmp".*' EXIT

# One line per exported declaration: "name<TAB>kind<TAB>problem", where
# kind is "void" or "value" and problem is "", "undoc" or "noreturn".
# A declaration is "MACRO <type> name(": the name is the word before the
# first '(', the type is what lies between the macro and the name.
MACRO=$macro perl -0777 -ne '
	my $m = $ENV{MACRO};
	s/^#.*$//mg;
	my $re = qr{ (/\*\* ((?:(?!\*/).)*) \*/ \s*)?	# 1, 2: the comment
		     \b\Q$m\E\b ([^;(]*?)		# 3: the type
		     (\w+) \s* \(			# 4: the name
		   }sx;
	while (/$re/g) {
		my ($has, $doc, $type, $name) = (defined $1, $2, $3, $4);
		(my $t = $type) =~ s/\s+//g;
		my $kind = $t eq "void" ? "void" : "value";
		my $why = !$has ? "undoc" :
			  ($kind eq "value" && $doc !~ /\@return\b/) ?
			  "noreturn" : "";
		print "$name\t$kind\t$why\n";
	}' "$hdr" > "$tmp.decl"
cut -f1 "$tmp.decl" | sort -u > "$tmp.h"

# Global symbols of every version node: "NODE { global: a; b; local: *; }
# [PARENT];".  Comments (/* */ and #) are dropped first.
perl -0777 -ne '
	s{/\*.*?\*/}{}gs; s/#.*$//mg;
	my $scope = "";
	my $tok = qr/ \{ | \} \s* [\w.]* \s* ; | global \s* : | local \s* :
		    | [^\s;{}]+ \s* ; | [\w.]+ /x;
	while (/\G\s*($tok)/gc) {
		my $tok = $1;
		if ($tok =~ /^global/) { $scope = "global"; }
		elsif ($tok =~ /^local/) { $scope = "local"; }
		elsif ($tok =~ /^\}/) { $scope = ""; }
		elsif ($tok =~ /^([^\s;{}]+)\s*;$/ && $scope eq "global") {
			print "$1\n";
		}
	}
	/\G\s*(\S.{0,40})/gs and die "abi-check: cannot parse $ARGV near: $1\n";
' "$map" > "$tmp.all"
sort "$tmp.all" | uniq -d > "$tmp.dup"
if [ -s "$tmp.dup" ]; then
	echo "abi-check: global in more than one node of $map:" \
		$(cat "$tmp.dup") >&2
	exit 1
fi
sort -u "$tmp.all" > "$tmp.m"

if [ ! -s "$tmp.h" ]; then
	echo "abi-check: no $macro declaration in $hdr" >&2
	exit 1
fi
if ! cmp -s "$tmp.h" "$tmp.m"; then
	echo "abi-check: $hdr and $map disagree (< header, > map):" >&2
	diff "$tmp.h" "$tmp.m" | grep '^[<>]' >&2
	exit 1
fi
undoc=$(awk -F '\t' '$3 == "undoc" { print $1 }' "$tmp.decl")
if [ -n "$undoc" ]; then
	echo "abi-check: $macro without a /** */ comment in $hdr:" $undoc >&2
	exit 1
fi
noret=$(awk -F '\t' '$3 == "noreturn" { print $1 }' "$tmp.decl")
if [ -n "$noret" ]; then
	echo "abi-check: no @return in the comment of a function that" \
		"returns a value, in $hdr:" $noret >&2
	exit 1
fi
