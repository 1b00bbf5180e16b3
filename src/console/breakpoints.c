/* Breakpoints on call sites: parsing, conditions, the list. */
#include "breakpoints.h"
#include "fmt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Joins argv[from..argc) with single spaces (so "live>64" and "live > 64 MiB" read alike). */
static void join(int argc, char **argv, int from, char *buf, size_t len)
{
    buf[0] = 0;
    size_t n = 0;
    for (int i = from; i < argc; i++) {
        int w = snprintf(buf + n, len - n, "%s%s", n ? " " : "", argv[i]);
        if (w < 0 || (size_t)w >= len - n)
            return;
        n += (size_t)w;
    }
}

int bp_parse_cond(const char *text, struct bp_spec *out, char *err, size_t errlen)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", text);
    char *p = buf;
    while (*p == ' ')
        p++;
    if (strncmp(p, "if ", 3) == 0)
        p += 3;
    while (*p == ' ')
        p++;
    if (!*p) {
        out->cond = BP_ANY;
        out->value = 0;
        return 0;
    }
    const char *kw[] = {"live", "grows", "count"};
    int which = -1;
    size_t kl = 0;
    for (int i = 0; i < 3; i++) {
        kl = strlen(kw[i]);
        if (strncmp(p, kw[i], kl) == 0 && (p[kl] == ' ' || p[kl] == '>' || p[kl] == 0)) {
            which = i;
            break;
        }
    }
    if (which < 0) {
        snprintf(err, errlen, "unknown condition '%s' (try: live > SIZE, grows SIZE, count > N)", p);
        return -1;
    }
    p += kl;
    while (*p == ' ')
        p++;
    if (which != 1) {
        if (*p == '>') {
            p++;
            if (*p == '=')
                p++;
        } else {
            snprintf(err, errlen, "expected '>' after '%s'", kw[which]);
            return -1;
        }
    } else if (*p == '>') {
        p++;
    }
    while (*p == ' ')
        p++;
    /* sizes may be written "64 MiB": drop the space between number and unit */
    char val[64];
    size_t n = 0;
    for (; *p && n + 1 < sizeof val; p++)
        if (*p != ' ')
            val[n++] = *p;
    val[n] = 0;
    if (!n) {
        snprintf(err, errlen, "'%s' needs a %s", kw[which], which == 2 ? "count" : "size");
        return -1;
    }
    if (which == 2) {
        if (parse_u64(val, &out->value) != 0) {
            snprintf(err, errlen, "bad count '%s'", val);
            return -1;
        }
        out->cond = BP_COUNT_ABOVE;
    } else {
        if (parse_size(val, &out->value) != 0) {
            snprintf(err, errlen, "bad size '%s' (e.g. 4096, 64KiB, 10MiB, 1.5GiB)", val);
            return -1;
        }
        out->cond = which == 0 ? BP_LIVE_ABOVE : BP_GROWS;
        if (out->cond == BP_GROWS && !out->value) {
            snprintf(err, errlen, "'grows' needs a size above 0 (without a condition, break pauses at every "
                                  "allocation)");
            return -1;
        }
    }
    return 0;
}

int bp_parse(int argc, char **argv, struct bp_spec *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (argc < 1 || !argv[0][0]) {
        snprintf(err, errlen, "break needs a SITE: a table id, a function name or file:line");
        return -1;
    }
    if (strlen(argv[0]) >= sizeof out->site) {
        snprintf(err, errlen, "site name too long");
        return -1;
    }
    snprintf(out->site, sizeof out->site, "%s", argv[0]);
    char cond[256];
    join(argc, argv, 1, cond, sizeof cond);
    return bp_parse_cond(cond, out, err, errlen);
}

int bp_cond_met(enum bp_cond cond, uint64_t value, uint64_t base, uint64_t live_bytes, uint64_t live_count)
{
    switch (cond) {
    case BP_ANY:
        return 1;
    case BP_LIVE_ABOVE:
        return live_bytes > value;
    case BP_GROWS:
        return live_bytes >= base && live_bytes - base >= value;
    case BP_COUNT_ABOVE:
        return live_count > value;
    }
    return 0;
}

int bp_hit(struct breakpoint *b, uint64_t live_bytes, uint64_t live_count)
{
    int grows = b->spec.cond == BP_GROWS;
    if (!bp_cond_met(b->spec.cond, b->spec.value, b->base + (grows ? b->grown : 0), live_bytes, live_count))
        return 0;
    b->hits++;
    if (grows && b->spec.value)
        b->grown = (live_bytes - b->base) / b->spec.value * b->spec.value;
    if (b->ignore) {
        b->ignore--;
        return 0;
    }
    return 1;
}

char *bp_cond_describe(char *buf, size_t len, enum bp_cond cond, uint64_t value)
{
    char s[32];
    switch (cond) {
    case BP_ANY:
        snprintf(buf, len, "any allocation");
        break;
    case BP_LIVE_ABOVE:
        snprintf(buf, len, "live > %s", fmt_size(s, sizeof s, value));
        break;
    case BP_GROWS:
        snprintf(buf, len, "grows %s", fmt_size(s, sizeof s, value));
        break;
    case BP_COUNT_ABOVE:
        snprintf(buf, len, "count > %llu", (unsigned long long)value);
        break;
    }
    return buf;
}

struct breakpoint *bp_add(struct bp_list *l, const struct bp_spec *spec)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        struct breakpoint *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    struct breakpoint *b = &l->v[l->n++];
    memset(b, 0, sizeof *b);
    b->id = ++l->next_id;
    b->enabled = 1;
    b->spec = *spec;
    return b;
}

struct breakpoint *bp_find(struct bp_list *l, int id)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->v[i].id == id)
            return &l->v[i];
    return NULL;
}

int bp_delete(struct bp_list *l, int id)
{
    for (size_t i = 0; i < l->n; i++) {
        if (l->v[i].id == id) {
            free(l->v[i].members);
            free(l->v[i].commands);
            memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof *l->v);
            l->n--;
            return 0;
        }
    }
    return -1;
}

void bp_clear(struct bp_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].members);
        free(l->v[i].commands);
    }
    l->n = 0;
}

void bp_free(struct bp_list *l)
{
    bp_clear(l);
    free(l->v);
    memset(l, 0, sizeof *l);
}

size_t bp_count_enabled(const struct bp_list *l)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->v[i].enabled != 0;
    return n;
}

int bp_has_member(const struct breakpoint *b, int proc, uint64_t stack)
{
    for (size_t i = 0; i < b->nmembers; i++)
        if (b->members[i].stack == stack && b->members[i].proc == proc)
            return 1;
    return 0;
}

int bp_add_member(struct breakpoint *b, int proc, uint64_t stack)
{
    if (bp_has_member(b, proc, stack))
        return 0;
    if (b->nmembers == b->capmembers) {
        size_t cap = b->capmembers ? b->capmembers * 2 : 8;
        struct bp_member *v = realloc(b->members, cap * sizeof *v);
        if (!v)
            return -1;
        b->members = v;
        b->capmembers = cap;
    }
    b->members[b->nmembers++] = (struct bp_member){proc, stack};
    return 1;
}

int bp_set_commands(struct breakpoint *b, const char *text)
{
    char *copy = text && *text ? strdup(text) : NULL;
    if (text && *text && !copy)
        return -1;
    free(b->commands);
    b->commands = copy;
    return 0;
}

/* A word as cmd_split reads it back: quoted when it has blanks or quotes of one kind. */
static void write_word(FILE *f, const char *w)
{
    if (*w && !strpbrk(w, " \t\"'"))
        fputs(w, f);
    else if (!strchr(w, '"'))
        fprintf(f, "\"%s\"", w);
    else
        fprintf(f, "'%s'", w);
}

/* The site of a breakpoint set by a table id: "FILE:LINE" of its text ("fn at a.c:12"),
 * else its text; a name that finds the same site in another run. */
static const char *site_of_row(const struct breakpoint *b, char *buf, size_t len)
{
    const char *at = strstr(b->what, " at ");
    snprintf(buf, len, "%s", at ? at + 4 : b->what);
    char *sp = strchr(buf, ' ');
    if (at && sp)
        *sp = 0;
    return buf;
}

void bp_write_commands(FILE *f, const struct bp_list *l)
{
    fputs("# culeak breakpoints: culeak -x FILE sets them again\n", f);
    for (size_t i = 0; i < l->n; i++) {
        const struct breakpoint *b = &l->v[i];
        char site[256];
        fputs(b->temporary ? "tbreak " : "break ", f);
        write_word(f, b->by_row ? site_of_row(b, site, sizeof site) : b->spec.site);
        unsigned long long v = (unsigned long long)b->spec.value; /* in bytes: exact */
        if (b->spec.cond == BP_LIVE_ABOVE)
            fprintf(f, " live > %llu", v);
        else if (b->spec.cond == BP_GROWS)
            fprintf(f, " grows %llu", v);
        else if (b->spec.cond == BP_COUNT_ABOVE)
            fprintf(f, " count > %llu", v);
        fputc('\n', f);
        if (b->ignore)
            fprintf(f, "ignore $bpnum %llu\n", (unsigned long long)b->ignore);
        if (b->commands) {
            fputs("commands $bpnum\n", f);
            for (const char *p = b->commands; *p;) {
                size_t n = strcspn(p, "\n");
                fprintf(f, "  %.*s\n", (int)n, p);
                p += n + (p[n] == '\n');
            }
            fputs("end\n", f);
        }
        if (!b->enabled)
            fputs("disable $bpnum\n", f);
    }
}
