/*
 * buildid.c - `sym buildid FILE...`: print the GNU build ID of each file.
 *
 * Output, one line per file, in the order given, like sha256sum(1):
 *
 *	<lowercase hex build ID>  <file>
 *
 * always with the file name, even for one file, so that scripts parse one
 * format (`cut -d' ' -f1` gives the ID).  A file without a build ID
 * prints "<file>: none" on stdout and a file that cannot be read prints
 * "sym buildid: '<file>': <error>" on stderr; either makes the exit status
 * 1, after every file has been tried.
 *
 * With -k (--module-id) each file gets its module ID instead, the name
 * the recorder, libsymprof, sym upload, the store and symd give it
 * (sym_file_module_id(): the GNU build ID, else one derived from the Go
 * build ID note or from the file's head, tail and size), with its kind
 * as a middle column:
 *
 *	<lowercase hex module ID>  <gnu|go|file>  <file>
 *
 * Every ELF file has one, so only an unreadable file fails.
 */
#include <getopt.h>
#include <string.h>

#include "tools.h"
#include "base.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: sym buildid [-k] FILE...\n\n"
		   "Print the GNU build ID (NT_GNU_BUILD_ID) of each ELF file "
		   "as\n\"<hex>  <file>\", one line per file.  A file without "
		   "one prints\n\"<file>: none\".  Exit status 1 when any file "
		   "has none or fails.\n\n"
		   "  -k, --module-id  print the module ID symd names the file "
		   "by, and its\n"
		   "                   kind: \"<hex>  <gnu|go|file>  <file>\" "
		   "(docs/store.md)\n");
}

int cmd_buildid(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "module-id", no_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 },
	};
	char hex[2 * 64 + 1];
	int status = TOOL_EXIT_OK;
	bool modid = false;
	int c, i, err, kind = SYM_MODID_NONE;

	while ((c = getopt_long(argc, argv, "hk", longopts, NULL)) != -1) {
		switch (c) {
		case 'k':
			modid = true;
			break;
		case 'h':
			usage(stdout);
			return TOOL_EXIT_OK;
		default:
			usage(stderr);
			return TOOL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return TOOL_EXIT_USAGE;
	}
	for (i = optind; i < argc; i++) {
		err = modid ? sym_file_module_id(argv[i], hex, sizeof(hex),
						 &kind)
			    : sym_file_build_id(argv[i], hex, sizeof(hex));
		if (err == -SYM_E_NOTFOUND) {
			printf("%s: none\n", argv[i]);
			status = TOOL_EXIT_FAIL;
		} else if (err) {
			tool_err_code(argv[i], err);
			status = TOOL_EXIT_FAIL;
		} else if (modid) {
			printf("%s  %s  %s\n", hex, sym_modid_kind_name(kind),
			       argv[i]);
		} else {
			printf("%s  %s\n", hex, argv[i]);
		}
	}
	if (fflush(stdout) != 0)
		status = TOOL_EXIT_FAIL;
	return status;
}
