/*
 * upload_sources.h - `sym upload --sources DIR|TARBALL`: the source files
 * a debug file's line tables name, found in a directory or a tarball and
 * put to symd one request each (PUT /v1/source/<id>/<path>,
 * docs/http-api.md "Sources").
 */
#ifndef SYM_TOOLS_UPLOAD_SOURCES_H
#define SYM_TOOLS_UPLOAD_SOURCES_H

#include "client.h"

/**
 * upload_sources() - upload the sources of @path's DWARF.
 * The paths are those sym_file_sources() lists (absolute, normalized).
 * Each is looked for in @from by its longest tail: for /b/src/lib/x.c,
 * FROM/b/src/lib/x.c, then FROM/src/lib/x.c, FROM/lib/x.c and FROM/x.c;
 * the first regular file found goes up.  So FROM may be the source tree
 * at any level (its root, or the directory the build ran in).  A
 * TARBALL (a regular file; any compression GNU tar reads) is unpacked
 * into a temporary directory by tar(1) and looked into the same way.
 * Files of FROM the line tables do not name are never sent.
 * Prints one line on stdout: "<id>  <path>  sources  uploaded N of M
 * named (K not found)", then "<id>  <path>  source not found: P" for
 * each named path not found; errors on stderr.
 * @param id     the build ID of @path
 * @param from   DIR or TARBALL (borrowed)
 * @param[out] stop  set to a reason when the rest of the uploads need
 *                   not be tried (server unreachable, token refused)
 * @return true when every source found went up (none found is true)
 */
bool upload_sources(struct client *c, const char *path, const char *id,
		    const char *from, const char **stop);

#endif /* SYM_TOOLS_UPLOAD_SOURCES_H */
