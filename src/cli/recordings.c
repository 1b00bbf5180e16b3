/* The recordings of one job on disk (recordings.h). */
#include "recordings.h"
#include "common/wire.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int recording_is_one(const char *path)
{
    char magic[CULEAK_MAGIC_LEN];
    FILE *f = fopen(path, "rb");
    int ours = f && fread(magic, 1, sizeof magic, f) == sizeof magic && memcmp(magic, CULEAK_MAGIC, sizeof magic) == 0;
    if (f)
        fclose(f);
    return ours;
}

static int add(struct recording_list *l, const char *path)
{
    char **v = realloc(l->paths, (l->n + 1) * sizeof *v);
    if (!v)
        return -1;
    l->paths = v;
    if (!(v[l->n] = strdup(path)))
        return -1;
    l->n++;
    return 0;
}

/* FILE.PID siblings by pid, as numbers: FILE.999 before FILE.1000 (ctx: strlen("FILE.")) */
static int by_pid(const void *a, const void *b, void *ctx)
{
    size_t base = *(const size_t *)ctx;
    unsigned long long x = strtoull(*(char *const *)a + base, NULL, 10);
    unsigned long long y = strtoull(*(char *const *)b + base, NULL, 10);
    return x < y ? -1 : x > y;
}

int recordings_siblings(const char *file, struct recording_list *l)
{
    memset(l, 0, sizeof *l);
    char pattern[PATH_MAX + 16];
    if ((size_t)snprintf(pattern, sizeof pattern, "%s.[0-9]*", file) >= sizeof pattern)
        return 0;
    glob_t g;
    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0)
        return 0;
    int rc = 0;
    size_t base = strlen(file) + 1;
    for (size_t k = 0; k < g.gl_pathc && rc == 0; k++) {
        const char *suffix = g.gl_pathv[k] + base;
        if (strspn(suffix, "0123456789") == strlen(suffix) && recording_is_one(g.gl_pathv[k]))
            rc = add(l, g.gl_pathv[k]);
    }
    globfree(&g);
    if (rc != 0) {
        recordings_free(l);
        return -1;
    }
    qsort_r(l->paths, l->n, sizeof *l->paths, by_pid, &base);
    return 0;
}

/* tmpl with %p, %h, %r and a rolled recording's %t and %n as * (and %% as %), the other
 * glob characters escaped. */
static int template_pattern(const char *tmpl, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *c = tmpl; *c; c++) {
        const char *put = NULL;
        char one[3] = {0};
        if (c[0] == '%' && c[1] && strchr("phrtn", c[1])) {
            put = "*";
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            put = "%";
            c++;
        } else if (strchr("*?[\\", *c)) {
            one[0] = '\\';
            one[1] = *c;
            put = one;
        } else {
            one[0] = *c;
            put = one;
        }
        size_t k = strlen(put);
        if (n + k >= cap)
            return -1;
        memcpy(out + n, put, k);
        n += k;
    }
    out[n] = 0;
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int recordings_of_job(const char *tmpl, time_t since, struct recording_list *l)
{
    memset(l, 0, sizeof *l);
    int parts = strstr(tmpl, "%t") || strstr(tmpl, "%n"); /* record --roll: the parts, and .PID's */
    if (!strstr(tmpl, "%p") && !strstr(tmpl, "%h") && !strstr(tmpl, "%r") && !parts) {
        struct recording_list sib;
        if (recordings_siblings(tmpl, &sib) != 0)
            return -1;
        int rc = recording_is_one(tmpl) ? add(l, tmpl) : 0;
        for (size_t i = 0; i < sib.n && rc == 0; i++)
            rc = add(l, sib.paths[i]);
        recordings_free(&sib);
        if (rc != 0)
            recordings_free(l);
        return rc;
    }
    char pattern[PATH_MAX * 2];
    glob_t g;
    if (template_pattern(tmpl, pattern, sizeof pattern) != 0 || glob(pattern, 0, NULL, &g) != 0)
        return 0;
    size_t pl = strlen(pattern);
    if (parts && pl + 8 < sizeof pattern) { /* a part of a process after the first: NAME.PID */
        memcpy(pattern + pl, ".[0-9]*", 8);
        glob(pattern, GLOB_APPEND, NULL, &g);
        qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, by_name);
    }
    int rc = 0;
    for (size_t k = 0; k < g.gl_pathc && rc == 0; k++) {
        struct stat st;
        if (stat(g.gl_pathv[k], &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since &&
            recording_is_one(g.gl_pathv[k]))
            rc = add(l, g.gl_pathv[k]);
    }
    globfree(&g);
    if (rc != 0)
        recordings_free(l);
    return rc;
}

void recordings_free(struct recording_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
    memset(l, 0, sizeof *l);
}
