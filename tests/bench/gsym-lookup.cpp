// gsym-lookup.cpp - LLVM's GSYM reader as a whole process, the peer of
// `sym lookup -f -i` in tests/bench/gsym-bench.sh (issue 19).
//
//     gsym-lookup FILE.gsym < ADDRS
//
// Opens FILE.gsym with libLLVM-14's GsymReader::openFile() (which maps
// it) and, for each hex address on stdin (one a line, 0x optional),
// calls GsymReader::lookup() and prints what a lean `sym lookup -f -i`
// prints: for each frame, innermost first, the function name on one
// line and DIR/BASE:LINE on the next; "??" and "??:0" when the address
// has no answer.  Output goes through one buffered stdout, as sym's.
//
// Built by tests/bench/gsym-bench.sh with
//     c++ -O2 $(llvm-config-14 --cxxflags) gsym-lookup.cpp \
//         $(llvm-config-14 --ldflags --libs)
#include <llvm/DebugInfo/GSYM/GsymReader.h>
#include <llvm/DebugInfo/GSYM/LookupResult.h>
#include <llvm/Support/Error.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace llvm;
using namespace llvm::gsym;

static void put(StringRef s) { fwrite(s.data(), 1, s.size(), stdout); }

static void print_result(const LookupResult &r) {
	for (const SourceLocation &loc : r.Locations) {
		put(loc.Name);
		putchar('\n');
		if (loc.Base.empty()) {
			fputs("??:0\n", stdout);
			continue;
		}
		if (!loc.Dir.empty()) {
			put(loc.Dir);
			putchar('/');
		}
		put(loc.Base);
		printf(":%u\n", loc.Line);
	}
	if (r.Locations.empty()) {
		put(r.FuncName);
		fputs("\n??:0\n", stdout);
	}
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: gsym-lookup FILE.gsym < ADDRS\n");
		return 2;
	}
	Expected<GsymReader> gr = GsymReader::openFile(argv[1]);
	if (!gr) {
		fprintf(stderr, "gsym-lookup: %s: %s\n", argv[1],
			toString(gr.takeError()).c_str());
		return 1;
	}
	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
	char line[128];
	while (fgets(line, sizeof line, stdin)) {
		char *end;
		uint64_t addr = strtoull(line, &end, 16);
		if (end == line)
			continue;
		Expected<LookupResult> r = gr->lookup(addr);
		if (!r) {
			consumeError(r.takeError());
			fputs("??\n??:0\n", stdout);
			continue;
		}
		print_result(*r);
	}
	return fflush(stdout) ? 1 : 0;
}
