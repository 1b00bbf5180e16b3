/* The leak report of many ranks (the formats' `ranks` writers, formats.c): the
 * cross-rank view first; then, when the processes were also read into one model m (few of
 * them), the report of each process as a single recording has it; else the totals. */
#include "ranks.h"
#include "report/formats.h"
#include "common/json.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

int ranks_report_text(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o)
{
    if (ranks_text(f, r, o) != 0)
        return -1;
    putc('\n', f);
    if (m)
        return report_text(f, m, o, NULL);
    fprintf(f, "LEAK SUMMARY: %" PRIu64 " bytes leaked in %" PRIu64 " allocations across %zu recordings\n",
            r->leaked_bytes, r->leaked_count, r->ok);
    fprintf(f, "  (each recording's own report: culeak report FILE)\n");
    return ferror(f) ? -1 : 0;
}

int ranks_report_json(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o)
{
    if (m) { /* the one-model report's object, "cross_rank" added to its members */
        char *buf = NULL;
        size_t n = 0;
        FILE *mem = open_memstream(&buf, &n);
        int rc = mem ? report_json(mem, m, o, NULL) : -1;
        if (mem && fclose(mem) != 0)
            rc = -1;
        while (rc == 0 && n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
            n--;
        if (rc == 0 && (n < 2 || buf[n - 1] != '}'))
            rc = -1;
        if (rc == 0) {
            fwrite(buf, 1, n - 1, f);
            putc(',', f);
            rc = ranks_json(f, r, o);
            fputs("}\n", f);
        }
        free(buf);
        return rc != 0 || ferror(f) ? -1 : 0;
    }
    fprintf(f, "{\"version\":%d,", REPORT_JSON_VERSION);
    if (ranks_json(f, r, o) != 0)
        return -1;
    fputs(",\"processes\":[", f);
    for (size_t i = 0; i < r->ok; i++) {
        fprintf(f, "%s{\"pid\":%" PRIu64 ",\"rank\":%d,\"host\":", i ? "," : "", r->v[i].pid, r->v[i].rank);
        json_write_cstr(f, r->v[i].host);
        putc('}', f);
    }
    fprintf(f, "],\"summary\":{\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64 "}}\n", r->leaked_bytes,
            r->leaked_count);
    return ferror(f) ? -1 : 0;
}

int ranks_report_html(FILE *f, struct model *m, const struct ranks_view *r, const struct report_options *o)
{
    (void)m; /* the page is the view's */
    return ranks_html(f, r, o);
}
