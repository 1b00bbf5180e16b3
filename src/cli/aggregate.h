/* `culeak aggregate`, and the interval that it and `record --aggregate` take. */
#ifndef CULEAK_CLI_AGGREGATE_H
#define CULEAK_CLI_AGGREGATE_H

#include <stdint.h>

/* "10s", "500ms", "2m", "1h" (a bare number: seconds), from 1 ms to 24 h: 0, or -1. */
int cli_parse_interval(const char *arg, uint64_t *ns);

#endif
