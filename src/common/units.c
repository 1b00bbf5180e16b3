/* Sizes in words (units.h), in integers: exact for every uint64_t and no libm. */
#include "common/units.h"

#include <inttypes.h>
#include <stdio.h>

char *culeak_units_size(char *buf, size_t len, uint64_t bytes, enum culeak_units_style style)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024) {
        snprintf(buf, len, "%" PRIu64 " B", bytes);
        return buf;
    }
    unsigned u = 1;
    while (u < 6 && bytes >> (10 * (u + 1)) != 0)
        u++;
    unsigned decimals = 1;
    if (style == CULEAK_UNITS_SHORT) {
        uint64_t whole = bytes >> (10 * u);
        if (whole >= 1000 && u < 6) { /* "1000 KiB" would be four digits: 0.97 MiB */
            u++;
            whole = 0;
        }
        decimals = whole < 10 ? 2 : whole < 100 ? 1 : 0;
    }
    uint64_t scale = decimals == 2 ? 100 : decimals == 1 ? 10 : 1;
    uint64_t v = (uint64_t)(((unsigned __int128)bytes * scale) >> (10 * u)); /* rounded down */
    if (decimals)
        snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64 " %s", v / scale, (int)decimals, v % scale, unit[u]);
    else
        snprintf(buf, len, "%" PRIu64 " %s", v, unit[u]);
    return buf;
}
