/*
 * lookup.c - `sym lookup BUILDID ADDR...`: symbolize addresses of a module
 * known only by its build ID, from the table in the store.
 *
 * It is `sym addr2line` without a file (tools/addr2line.c does both): the
 * same options and output styles, addresses from argv or from stdin one
 * per line, answered from the stored table inside LMDB read transactions.
 * Nothing is parsed.  When the store has no table for the build ID, one
 * line says so, with the reason of a negative entry when there is one,
 * and the exit status is 1.
 *
 * With --server URL the answers come from symd instead of the store:
 * each batch of addresses is one POST /v1/symbolize/<build_id>, with
 * --wait-ms (default 10000) for a build ID the server must first fetch
 * or convert, and the frames of the JSON reply are printed by the same
 * styles (tools/client.c).  The reply carries no discriminator, symbol
 * or declaration fields, so the GNU and LLVM styles match `sym addr2line`
 * on the file except for "(discriminator N)", while JSON's StartAddress
 * of inlined frames, StartFileName and StartLine, and the elfutils
 * style's symbol names are missing.  A build ID the server has not got
 * (missing), cannot convert (error) or has not finished (pending) is one
 * line on stderr and exit status 1.
 *
 * Without the ELF file, two details of the output are fixed rather than
 * read from its header: addresses print with 16 hex digits (-a in the GNU
 * and elfutils styles), and an address without a symbol prints as
 * "()+0x..." with -S, as eu-addr2line does for shared objects and PIEs.
 */
#include "tools.h"
#include "base.h"

int cmd_lookup(int argc, char **argv)
{
	return tool_addr2line(argc, argv, true);
}
