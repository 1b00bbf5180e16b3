/* The functions of a module's compile units by address: an index built once per CU, so
 * that the scopes of an address are found by a binary search and a walk down one function
 * instead of dwarf_getscopes' walk over the whole CU (a report of N sites in one big
 * source file was quadratic in N). */
#ifndef CULEAK_SYM_SCOPES_H
#define CULEAK_SYM_SCOPES_H

#include <elfutils/libdw.h>

struct scope_index;

struct scope_index *scope_index_new(void);
void scope_index_free(struct scope_index *x);
/* The function-like DIEs (the subprogram, then each inlined instance inside it) that
 * physically contain pc (a DWARF address of cudie's CU), outermost first, into path (at
 * most max). Returns their count; 0 when the CU has no function there that the index
 * knows (the caller asks dwarf_getscopes). */
int scope_index_path(struct scope_index *x, Dwarf_Die *cudie, Dwarf_Addr pc, Dwarf_Die *path, int max);

#endif
