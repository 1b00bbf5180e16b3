/* `culeak aggregate [--interval TIME] -o OUT FILE`: a full recording made into the
 * aggregated one `record --aggregate` would have written of the same run (the filter of
 * common/aggregate.h, run over the file): to keep an old recording small, or to compare
 * what an aggregated recording tells with what the full one does. */
#include "aggregate.h"
#include "commands.h"
#include "common/aggregate.h"
#include "common/recording_read.h"
#include "common/wire.h"
#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_OUTPUT = 'o', OPT_INTERVAL = 256 };

static const struct cli_option aggregate_options[] = {
    {"output", OPT_OUTPUT, "FILE", "write the aggregated recording to FILE (required)"},
    {"interval", OPT_INTERVAL, "TIME", "the longest time between two counts (10s; ms, s, m, h)"},
    CLI_HELP,
    {0},
};

const struct cli_command cli_aggregate = {
    .name = "aggregate",
    .summary = "make a full recording into an aggregated one",
    .synopsis = "[--interval TIME] -o OUT FILE",
    .about = "Writes to OUT the recording `culeak record --aggregate` would have written of\n"
             "the run FILE recorded: allocations made and freed within an interval or between\n"
             "two marks are counted per call site, the rest kept as it is. Exit status: 0, or 1\n"
             "when FILE cannot be read or is corrupt (OUT then holds what came before), 3 when\n"
             "FILE was cut off (OUT holds all of it).\n",
    .options = aggregate_options,
    .run = cmd_aggregate,
};

int cli_parse_interval(const char *arg, uint64_t *ns)
{
    char *end;
    double v = strtod(arg, &end);
    double unit = 1e9;
    if (end == arg)
        return -1;
    if (!strcmp(end, "ms"))
        unit = 1e6;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        unit = 60e9;
    else if (!strcmp(end, "h"))
        unit = 3600e9;
    else if (*end && strcmp(end, "s"))
        return -1;
    double t = v * unit;
    if (!(t >= 1e6 && t <= 86400e9))
        return -1;
    *ns = (uint64_t)t;
    return 0;
}

struct agg_args {
    const char *out;
    uint64_t interval_ns;
};

static int on_option(void *ctx, int key, const char *arg)
{
    struct agg_args *a = ctx;
    if (key == OPT_OUTPUT) {
        a->out = arg;
        return 0;
    }
    if (key == OPT_INTERVAL && cli_parse_interval(arg, &a->interval_ns) == 0)
        return 0;
    if (key == OPT_INTERVAL)
        return cli_error(&cli_aggregate, "--interval %s: a time from 1ms to 24h, such as 10s, 500ms or 5m", arg);
    return cli_error(&cli_aggregate, "option %d is not handled", key);
}

struct copy {
    struct culeak_agg *agg;
    FILE *out;
    uint64_t seen; /* bytes of the file so far: its MAGIC is checked, not fed */
    int bad_magic, write_failed;
};

static void to_file(void *ctx, const void *p, size_t n)
{
    struct copy *c = ctx;
    if (!c->write_failed && fwrite(p, 1, n, c->out) != n)
        c->write_failed = errno ? errno : EIO;
}

static int from_file(void *ctx, const uint8_t *bytes, size_t n)
{
    struct copy *c = ctx;
    while (c->seen < CULEAK_MAGIC_LEN && n) {
        if (*bytes != (uint8_t)CULEAK_MAGIC[c->seen]) {
            c->bad_magic = 1;
            return 1;
        }
        c->seen++, bytes++, n--;
    }
    c->seen += n;
    return n && culeak_agg_feed(c->agg, bytes, n) != 0;
}

int cmd_aggregate(int argc, char **argv)
{
    struct agg_args a = {NULL, CULEAK_AGGREGATE_INTERVAL_NS};
    int status;
    int i = cli_parse(&cli_aggregate, argc, argv, on_option, &a, &status);
    if (i < 0)
        return status;
    if (!a.out)
        return cli_error(&cli_aggregate, "missing -o OUT");
    if (argc - i != 1)
        return cli_error(&cli_aggregate, "give one recording (culeak aggregate -o OUT FILE)");
    struct copy c = {0};
    if (!(c.out = fopen(a.out, "wbx"))) { /* never over an existing file, the input least of all */
        cli_fail(&cli_aggregate, "cannot write %s: %s", a.out, strerror(errno));
        return 1;
    }
    if (!(c.agg = culeak_agg_new(a.interval_ns, 0, to_file, &c))) {
        fclose(c.out);
        cli_fail(&cli_aggregate, "out of memory");
        return 1;
    }
    fwrite(CULEAK_MAGIC, 1, CULEAK_MAGIC_LEN, c.out);
    char err[512] = "";
    int r = culeak_read_recording(argv[i], from_file, &c, err, sizeof err);
    if (r == 0 || c.bad_magic)
        culeak_agg_finish(c.agg);
    culeak_agg_free(c.agg);
    if (fclose(c.out) != 0 && !c.write_failed)
        c.write_failed = errno ? errno : EIO;
    if (r < 0 || c.bad_magic || c.seen < CULEAK_MAGIC_LEN) /* nothing of it is written */
        unlink(a.out);
    if (r < 0) {
        cli_fail(&cli_aggregate, "cannot read %s", err);
        return 1;
    }
    if (c.bad_magic || c.seen < CULEAK_MAGIC_LEN) {
        cli_fail(&cli_aggregate, "%s: not a culeak recording", argv[i]);
        return 1;
    }
    if (r == 1) {
        cli_fail(&cli_aggregate, "%s is corrupt: %s holds what came before the damage", argv[i], a.out);
        return 1;
    }
    if (c.write_failed) {
        cli_fail(&cli_aggregate, "cannot write %s: %s", a.out, strerror(c.write_failed));
        return 1;
    }
    return 0;
}
