/* The cross-rank view as text (ranks.h): the table of ranks, the ranks whose growth
 * differs from the rest and the rank that fills its device first, the call sites merged
 * across ranks with how many ranks show each. */
#include "ranks.h"
#include "model/suspects.h"

#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#define TEXT_SITES 20 /* sites listed; the rest counted */

/* "train_step at /a/b/data.py:88" -> "train_step at data.py:88": the table is read
 * across, the full path is in the JSON and in each rank's own report */
static void short_site(const char *text, char *buf, size_t len)
{
    const char *at = strstr(text, " at "), *slash = at ? strrchr(at, '/') : NULL;
    if (slash)
        snprintf(buf, len, "%.*s%s", (int)(at + 4 - text), text, slash + 1);
    else
        snprintf(buf, len, "%s", text);
}

static void growth_words(int64_t g, char *buf, size_t len)
{
    if (g <= 0) {
        snprintf(buf, len, "flat");
        return;
    }
    char sz[32];
    model_format_size(sz, sizeof sz, (double)g);
    snprintf(buf, len, "+%s", sz);
}

static void oom_words(const struct rank_summary *s, char *buf, size_t len)
{
    if (!s->forecast) {
        snprintf(buf, len, "-");
        return;
    }
    if (s->fill_s > 0)
        model_format_duration(buf, len, s->fill_s);
    else {
        char n[40];
        model_format_count(n, sizeof n, s->fill_marks);
        snprintf(buf, len, "%.36s it.", n);
    }
}

/* "the other 31 ranks are flat", "the other 3 ranks grow +4.0 KiB per iteration (median)" */
static void others_words(const struct ranks_view *r, size_t ok, char *buf, size_t len)
{
    size_t others = ok - r->ndiffer;
    int64_t most = 0;
    for (size_t i = 0; i < ok; i++)
        if (!r->differs[i] && r->v[i].growth > most)
            most = r->v[i].growth;
    if (others == 0)
        snprintf(buf, len, "no other rank was read");
    else if (most == 0)
        snprintf(buf, len, "the other %zu rank%s %s flat", others, others == 1 ? "" : "s", others == 1 ? "is" : "are");
    else {
        char g[40];
        growth_words((int64_t)r->median, g, sizeof g);
        snprintf(buf, len, "the other %zu rank%s grow%s %s per iteration (median)", others, others == 1 ? "" : "s",
                 others == 1 ? "s" : "", g);
    }
}

static void rank_list(const struct ranks_view *r, const struct ranks_site *s, char *buf, size_t len)
{
    size_t n = 0;
    buf[0] = 0;
    for (size_t k = 0; k < s->nwhich && n < len; k++) {
        const struct rank_summary *x = &r->v[s->which[k]];
        int w = x->rank >= 0 ? snprintf(buf + n, len - n, "%s%d", k ? ", " : "", x->rank)
                             : snprintf(buf + n, len - n, "%spid %" PRIu64, k ? ", " : "", x->pid);
        n += w > 0 ? (size_t)w : 0;
    }
    if (s->nranks > s->nwhich && n < len)
        snprintf(buf + n, len - n, ", ...");
}

static void table(FILE *f, const struct ranks_view *r, size_t ok)
{
    int hw = 4;
    for (size_t i = 0; i < ok; i++)
        if ((int)strlen(r->v[i].host) > hw)
            hw = (int)strlen(r->v[i].host);
    fprintf(f, "  %-*s %5s %6s %10s %12s %17s %12s  %s\n", hw, "host", "rank", "device", "peak", "live at end",
            "growth/iteration", "time to OOM", "fastest suspect");
    for (size_t i = 0; i < ok; i++) {
        const struct rank_summary *s = &r->v[i];
        char rank[16], dev[16], peak[32], live[32], g[40], oom[48], site[512];
        snprintf(rank, sizeof rank, s->rank >= 0 ? "%d" : "-", s->rank);
        snprintf(dev, sizeof dev, s->device >= 0 ? "%d%s" : "-", s->device, s->devices > 1 ? "+" : "");
        model_format_size(peak, sizeof peak, (double)s->peak_bytes);
        model_format_size(live, sizeof live, (double)s->live_bytes);
        growth_words(s->growth, g, sizeof g);
        oom_words(s, oom, sizeof oom);
        short_site(s->suspect ? s->suspect : "-", site, sizeof site);
        fprintf(f, "%c %-*s %5s %6s %10s %12s %17s %12s  %s\n", r->differs[i] ? '*' : ' ', hw, s->host, rank, dev,
                peak, live, g, oom, site);
    }
    for (size_t i = ok; i < r->n; i++)
        fprintf(f, "  %s: not read (%s)\n", r->v[i].file, r->v[i].error);
}

static void verdict(FILE *f, const struct ranks_view *r, size_t ok)
{
    char others[128], g[40], name[300], site[512];
    others_words(r, ok, others, sizeof others);
    for (size_t i = 0; i < ok; i++) {
        if (!r->differs[i])
            continue;
        const struct rank_summary *s = &r->v[i];
        ranks_name(s, name, sizeof name);
        growth_words(s->growth, g, sizeof g);
        short_site(s->suspect ? s->suspect : "?", site, sizeof site);
        if (s->growth > 0)
            fprintf(f, "%s grows %s per iteration in %s; %s\n", name, g, site, others);
        else
            fprintf(f, "%s is flat; %s\n", name, others);
    }
    if (r->ndiffer == 0 && ok > 1) {
        growth_words((int64_t)r->median, g, sizeof g);
        if (r->median > 0)
            fprintf(f, "No rank differs from the rest: the %zu ranks grow %s per iteration (median)\n", ok, g);
        else
            fprintf(f, "No rank differs from the rest: %s %zu ranks are flat\n", ok == 2 ? "both" : "all", ok);
    }
    char med[40], mad[40];
    model_format_size(med, sizeof med, r->median);
    model_format_size(mad, sizeof mad, r->mad);
    fprintf(f, "  (a rank differs when its growth per iteration is more than %.0f x %.4f x MAD and 4 KiB away from "
               "the ranks' median: median %s, MAD %s)\n", RANKS_MAD_TIMES, RANKS_MAD_SCALE, med, mad);
    if (r->first_full != SIZE_MAX) {
        const struct rank_summary *s = &r->v[r->first_full];
        char when[48], its[48];
        ranks_name(s, name, sizeof name);
        model_format_duration(when, sizeof when, s->fill_s);
        model_format_count(its, sizeof its, s->fill_marks);
        if (s->fill_s > 0)
            fprintf(f, "%s fills device %d first: in %s (%s iterations) at that pace\n", name, s->fill_device, when,
                    its);
        else
            fprintf(f, "%s fills device %d first: in %s iterations at that pace\n", name, s->fill_device, its);
    }
}

static void sites(FILE *f, const struct ranks_view *r, size_t ok)
{
    if (!r->nsites)
        return;
    fprintf(f, "\nCALL SITES ACROSS RANKS: %zu site%s, growing first\n", r->nsites, r->nsites == 1 ? "" : "s");
    for (size_t k = 0; k < r->nsites && k < TEXT_SITES; k++) {
        const struct ranks_site *s = &r->sites[k];
        char site[512], list[200], sz[32], g[40], name[300];
        short_site(s->text, site, sizeof site);
        rank_list(r, s, list, sizeof list);
        fprintf(f, "  %s on %zu of %zu rank%s (%s)", site, s->nranks, ok, ok == 1 ? "" : "s", list);
        if (s->count) {
            model_format_size(sz, sizeof sz, (double)s->bytes);
            fprintf(f, ": %s leaked in %" PRIu64 " allocation%s", sz, s->count, s->count == 1 ? "" : "s");
        }
        if (s->fastest != SIZE_MAX) {
            growth_words(s->per_mark, g, sizeof g);
            ranks_name(&r->v[s->fastest], name, sizeof name);
            fprintf(f, "%sgrows %s per iteration on %s", s->count ? "; " : ": ", g, name);
        }
        putc('\n', f);
    }
    if (r->nsites > TEXT_SITES)
        fprintf(f, "  ... and %zu more (--format json lists them all)\n", r->nsites - TEXT_SITES);
}

int ranks_text(FILE *f, const struct ranks_view *r, const struct report_options *o)
{
    (void)o;
    size_t ok = r->ok;
    fprintf(f, "RANKS: %zu recording%s of %zu host%s\n", ok, ok == 1 ? "" : "s", r->hosts, r->hosts == 1 ? "" : "s");
    table(f, r, ok);
    verdict(f, r, ok);
    sites(f, r, ok);
    return ferror(f) ? -1 : 0;
}
