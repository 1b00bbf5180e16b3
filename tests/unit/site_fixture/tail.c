/* A unit with DWARF linked after cudart_fake.c, so that cudart's code lies between two
 * units: line info must not leak into it from the unit before. */
#include <stdio.h>

void tail_function(void)
{
    fflush(stdout);
}
