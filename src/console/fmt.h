/* Sizes, counts and durations as the console shows and reads them (no curses). */
#ifndef CULEAK_CONSOLE_FMT_H
#define CULEAK_CONSOLE_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "0 B", "512 B", "1.50 KiB", "64.0 MiB", "2.00 GiB" (culeak_units_size, short). */
char *fmt_size(char *buf, size_t len, uint64_t bytes);
/* Signed change: "+1.5 MiB", "-512 B", "0". */
char *fmt_delta(char *buf, size_t len, int64_t bytes);
/* 1234567 -> "1234567" below a million, then "1.2M", "3.4G". */
char *fmt_count(char *buf, size_t len, uint64_t n);
/* Seconds as "12.3s", "4m05s", "1h02m". */
char *fmt_duration(char *buf, size_t len, double seconds);

/* A command line (or file names) in width columns: as it is when it fits; else with the
 * first word's directory left out ("./bin/late 400 70" -> "late 400 70"), then the other
 * words' too ("python3 /a/train.py" -> "python3 train.py"), and cut with "..." when that
 * is still too long. Returns buf. */
char *fmt_fit_command(char *buf, size_t len, const char *cmd, int width);
/* text cut to width columns (a UTF-8 character a column) where it does not fit: at the last
 * blank that leaves more than half of the line, the words' trailing ',', ';' or ':' dropped,
 * then "..."; a text without such a blank is cut inside its word. */
char *fmt_fit_words(char *buf, size_t len, const char *text, int width);

/* The plural ending of a count: "" for 1, "s" otherwise ("1 site", "2 sites"). */
static inline const char *plural(uint64_t n) { return n == 1 ? "" : "s"; }

/* "64MiB", "64 MiB", "1.5G", "4096", "10kb" (units are powers of 1024). 0 on success. */
int parse_size(const char *s, uint64_t *out);
/* "12", "12.5s", "250ms", "3m", "1h": seconds. 0 on success. */
int parse_seconds(const char *s, double *out);
/* Whole non-negative decimal number. 0 on success. */
int parse_u64(const char *s, uint64_t *out);

#endif
