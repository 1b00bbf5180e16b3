/* The cross-rank view as the JSON member "cross_rank" (ranks.h; culeak(1) gives the
 * schema): the rule's figures, one object per rank, the ranks that differ, the rank that
 * fills its device first, the call sites across ranks, the heat map's marks and cells. */
#include "ranks.h"
#include "common/json.h"

#include <inttypes.h>
#include <stdint.h>

static void rank_ref(FILE *f, const struct rank_summary *s)
{
    fprintf(f, "\"rank\":%d,\"host\":", s->rank);
    json_write_cstr(f, s->host);
    fprintf(f, ",\"pid\":%" PRIu64, s->pid);
}

static void one_rank(FILE *f, const struct ranks_view *r, size_t i)
{
    const struct rank_summary *s = &r->v[i];
    fputs("{", f);
    rank_ref(f, s);
    fputs(",\"file\":", f);
    json_write_cstr(f, s->file);
    if (s->error) {
        fputs(",\"error\":", f);
        json_write_cstr(f, s->error);
        fputs("}", f);
        return;
    }
    fprintf(f, ",\"device\":%d,\"devices\":%d,\"peak_bytes\":%" PRIu64 ",\"live_bytes\":%" PRIu64
               ",\"leaked_bytes\":%" PRIu64 ",\"leaked_allocations\":%" PRIu64 ",\"growth_per_iteration\":%" PRId64
               ",\"differs\":%s,\"unended\":%s,\"fastest_suspect\":",
            s->device, s->devices, s->peak_bytes, s->live_bytes, s->leaked_bytes, s->leaked_count, s->growth,
            r->differs[i] ? "true" : "false", s->unended ? "true" : "false");
    json_write_cstr(f, s->suspect);
    fputs(",\"series\":", f);
    json_write_cstr(f, s->series);
    if (s->forecast)
        fprintf(f, ",\"full_device\":%d,\"seconds_to_full\":%.3f,\"iterations_to_full\":%.1f}", s->fill_device,
                s->fill_s, s->fill_marks);
    else
        fputs(",\"full_device\":null,\"seconds_to_full\":null,\"iterations_to_full\":null}", f);
}

static void one_site(FILE *f, const struct ranks_view *r, const struct ranks_site *s)
{
    fputs("{\"site\":", f);
    json_write_cstr(f, s->text);
    fprintf(f, ",\"ranks\":%zu,\"of\":%zu,\"bytes\":%" PRIu64 ",\"allocations\":%" PRIu64
               ",\"growth_per_iteration\":%" PRId64 ",\"growing\":",
            s->nranks, r->ok, s->bytes, s->count, s->per_mark);
    if (s->fastest != SIZE_MAX) {
        fputs("{", f);
        rank_ref(f, &r->v[s->fastest]);
        fputs("}", f);
    } else
        fputs("null", f);
    fputs(",\"first_ranks\":[", f);
    for (size_t k = 0; k < s->nwhich; k++) {
        fputs(k ? ",{" : "{", f);
        rank_ref(f, &r->v[s->which[k]]);
        fputs("}", f);
    }
    fputs("]}", f);
}

int ranks_json(FILE *f, const struct ranks_view *r, const struct report_options *o)
{
    (void)o;
    fprintf(f, "\"cross_rank\":{\"recordings\":%zu,\"read\":%zu,\"hosts\":%zu,\"leaked_bytes\":%" PRIu64
               ",\"leaked_allocations\":%" PRIu64 ",\"rule\":{\"median_growth\":%.1f,\"mad\":%.1f,"
               "\"mad_scale\":%.4f,\"times\":%.1f,\"floor_bytes\":%d},\"ranks\":[",
            r->n, r->ok, r->hosts, r->leaked_bytes, r->leaked_count, r->median, r->mad, RANKS_MAD_SCALE,
            RANKS_MAD_TIMES, RANKS_GROWTH_FLOOR);
    for (size_t i = 0; i < r->n; i++) {
        if (i)
            putc(',', f);
        one_rank(f, r, i);
    }
    fputs("],\"differ\":[", f);
    for (size_t i = 0, k = 0; i < r->ok; i++)
        if (r->differs[i]) {
            fputs(k++ ? ",{" : "{", f);
            rank_ref(f, &r->v[i]);
            fprintf(f, ",\"growth_per_iteration\":%" PRId64 ",\"site\":", r->v[i].growth);
            json_write_cstr(f, r->v[i].suspect);
            fputs("}", f);
        }
    fputs("],\"first_to_fill\":", f);
    if (r->first_full != SIZE_MAX) {
        const struct rank_summary *s = &r->v[r->first_full];
        fputs("{", f);
        rank_ref(f, s);
        fprintf(f, ",\"device\":%d,\"seconds\":%.3f,\"iterations\":%.1f}", s->fill_device, s->fill_s, s->fill_marks);
    } else
        fputs("null", f);
    fputs(",\"sites\":[", f);
    for (size_t k = 0; k < r->nsites; k++) {
        if (k)
            putc(',', f);
        one_site(f, r, &r->sites[k]);
    }
    fputs("],\"heatmap\":{\"marks\":[", f);
    for (size_t c = 0; c < r->ncolumns; c++) {
        if (c)
            putc(',', f);
        json_write_cstr(f, r->columns[c]);
    }
    fputs("],\"live_bytes\":[", f);
    for (size_t i = 0; i < r->ok; i++) {
        fputs(i ? ",[" : "[", f);
        for (size_t c = 0; c < r->ncolumns; c++) {
            int known;
            uint64_t v = ranks_cell(r, i, c, &known);
            if (known)
                fprintf(f, "%s%" PRIu64, c ? "," : "", v);
            else
                fprintf(f, "%snull", c ? "," : "");
        }
        putc(']', f);
    }
    fputs("]}}", f);
    return ferror(f) ? -1 : 0;
}
