/* SPDX-License-Identifier: MIT */
/* demangle.c - C++ and Rust symbol names as people read them ("_ZNK6MatrixlsEi" ->
 * "Matrix::operator<<(int) const", "_RNvCs1234_7mycrate3foo" -> "mycrate::foo"), for the
 * native frames of sym-native.c. The demangler is libiberty's cplus_demangle, the one
 * binutils' c++filt, addr2line -C and GDB use: it follows the Itanium C++ ABI and both
 * Rust manglings (legacy, whose trailing hash it drops, and v0), and it is written in C,
 * so the library needs no C++ runtime (__cxa_demangle would, and knows C++ only). Only
 * this file includes its header. */
#include "internal.h"

#include <libiberty/demangle.h>

char *nt_demangle(const char *name)
{
	/* only the manglings of C++ (_Z, and its dotted clone suffixes) and Rust v0 (_R):
	 * a plain C name is left alone without the demangler looking at it */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	if (strlen(name) > NT_MAX_NAME_LEN)
		return NULL; /* the demangler recurses on nesting: keep hostile names short */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
