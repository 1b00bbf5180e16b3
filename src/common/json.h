/* Minimal JSON output helpers shared by `dump`, `report` and `check`. */
#ifndef CULEAK_JSON_H
#define CULEAK_JSON_H

#include <stdio.h>
#include <stddef.h>

/* Writes s[0..n) as a JSON string literal, quotes included; bytes that are not
 * printable ASCII or valid UTF-8 are escaped so the output always parses. */
void json_write_str(FILE *f, const char *s, size_t n);
void json_write_cstr(FILE *f, const char *s); /* NULL writes null */

#endif
