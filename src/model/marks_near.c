/* The marks nearest a name that is none (model.h model_nearest_marks): "no mark 'iteration
 * 700'" then names the marks a typo or an off-by-one meant. */
#include "model_internal.h"

#include <stdlib.h>
#include <string.h>

struct near {
    const char *label;
    uint64_t score; /* smaller is nearer */
};

/* The label with its digits as '#', and its first number (UINT64_MAX: none). */
static void shape(const char *s, char *key, size_t len, uint64_t *num)
{
    size_t n = 0;
    *num = UINT64_MAX;
    for (const char *c = s; *c && n + 1 < len; c++) {
        if (*c >= '0' && *c <= '9') {
            if (*num == UINT64_MAX && (c == s || !(c[-1] >= '0' && c[-1] <= '9'))) {
                uint64_t v = 0;
                for (const char *d = c; *d >= '0' && *d <= '9' && v < UINT64_MAX / 16; d++)
                    v = v * 10 + (uint64_t)(*d - '0');
                *num = v;
            }
            if (c == s || !(c[-1] >= '0' && c[-1] <= '9'))
                key[n++] = '#';
        } else {
            key[n++] = *c;
        }
    }
    key[n] = 0;
}

/* Edit distance of two short strings (longer ones compare by their first 63 bytes). */
static unsigned distance(const char *a, const char *b)
{
    unsigned row[64];
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63)
        la = 63;
    if (lb > 63)
        lb = 63;
    for (size_t j = 0; j <= lb; j++)
        row[j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++) {
        unsigned diag = row[0];
        row[0] = (unsigned)i;
        for (size_t j = 1; j <= lb; j++) {
            unsigned up = row[j];
            unsigned best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static int by_score(const void *x, const void *y)
{
    const struct near *a = x, *b = y;
    if (a->score != b->score)
        return a->score < b->score ? -1 : 1;
    return strcmp(a->label, b->label);
}

size_t model_nearest_marks(const struct model *m, const char *name, const char **out, size_t max)
{
    char key[128], k2[128];
    uint64_t num, n2;
    shape(name, key, sizeof key, &num);
    size_t total = 0;
    for (int i = 0; i < m->nprocs; i++)
        total += m->procs[i]->nmarks;
    struct near *v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return 0;
    size_t n = 0;
    struct u64map seen; /* labels are interned: one pointer per text */
    u64map_init(&seen);
    for (int i = 0; i < m->nprocs; i++) {
        for (size_t k = 0; k < m->procs[i]->nmarks; k++) {
            const char *label = m->procs[i]->marks[k].label;
            if (!label || !*label || strcmp(label, name) == 0 || u64map_get(&seen, (uintptr_t)label) != UINT32_MAX)
                continue;
            if (u64map_put(&seen, (uintptr_t)label, 0) != 0)
                break;
            shape(label, k2, sizeof k2, &n2);
            /* the same pattern ("iteration #"): by how far the numbers are; else by the
             * edit distance, after every label of the pattern */
            if (num != UINT64_MAX && n2 != UINT64_MAX && strcmp(key, k2) == 0)
                v[n].score = num > n2 ? num - n2 : n2 - num;
            else
                v[n].score = ((uint64_t)1 << 62) + distance(name, label);
            v[n++].label = label;
        }
    }
    u64map_free(&seen);
    qsort(v, n, sizeof *v, by_score);
    size_t k = 0;
    for (; k < n && k < max; k++)
        out[k] = v[k].label;
    free(v);
    return k;
}
