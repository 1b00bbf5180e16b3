/* Sizes in words: the one formatter of a number of bytes that the console, the reports
 * and the suspects' sentences share. */
#ifndef CULEAK_UNITS_H
#define CULEAK_UNITS_H

#include <stddef.h>
#include <stdint.h>

enum culeak_units_style {
    /* three significant digits, in the unit where the value is below 1000, at most 9
     * characters: "512 B", "1.50 KiB", "64.0 MiB", "0.97 MiB", "512 KiB" */
    CULEAK_UNITS_SHORT,
    /* one decimal, in the largest unit not above the size: "1.5 KiB", "1023.9 KiB"
     * (the reports write the exact bytes beside it) */
    CULEAK_UNITS_ONE_DECIMAL,
};

/* bytes in powers of 1024 (B, KiB ... EiB), rounded down: a size never reads larger than
 * it is, nor as 1024 of a unit. Below 1024: "N B". Returns buf. */
char *culeak_units_size(char *buf, size_t len, uint64_t bytes, enum culeak_units_style style);

#endif
