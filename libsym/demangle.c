/*
 * demangle.c - C++, Rust (legacy and v0) and D demangling via libiberty.
 *
 * libiberty's cplus_demangle() with DMGL_AUTO recognises C++ (_Z) and
 * Rust (legacy hashes inside _ZN...E, and v0 _R); D (_D) needs
 * DMGL_DLANG explicitly, so it is tried second.  The
 * table builder demangles each distinct linkage name once and stores the
 * result; lookups never call this.
 */
#include <stdlib.h>
#include <string.h>
#include <libiberty/demangle.h>

#include "internal.h"
#include "base.h"

char *symi_demangle(const char *name)
{
	char *d;

	if (!name || !name[0])
		return NULL;
	/* Only names with a known mangling prefix; plain C names pass. */
	if (!(name[0] == '_' && (name[1] == 'Z' || name[1] == 'R' ||
				 name[1] == 'D')) &&
	    strncmp(name, "__Z", 3) != 0)
		return NULL;
	/* DMGL_AUTO tries Rust, then the C++ ABI; D only when asked for. */
	d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
	if (!d && name[1] == 'D')
		d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_DLANG);
	return d;
}

char *sym_demangle(const char *name)
{
	return symi_demangle(name);
}
