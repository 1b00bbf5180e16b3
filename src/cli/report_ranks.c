/* The recordings of many ranks, read in parallel into summaries (report_ranks.h): each
 * thread takes the next file, reads it into a model of its own, keeps its summary and
 * frees the model, so memory is a model per thread plus the summaries. */
#include "report_ranks.h"
#include "recordings.h"
#include "common/decode.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct list {
    char **v;
    int n, cap;
};

static int push(struct list *l, const char *s)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v, l->cap = cap;
    }
    return (l->v[l->n] = strdup(s)) ? (l->n++, 0) : -1;
}

static int by_path(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The recordings under dir, any depth (links to directories not followed). */
static int walk(const char *dir, struct list *l, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "culeak report: cannot read %s: %s\n", dir, strerror(errno));
        return -1;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
            continue;
        char *path;
        if (asprintf(&path, "%s/%s", dir, e->d_name) < 0) {
            rc = -1;
            break;
        }
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 16)
            rc = walk(path, l, depth + 1);
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && recording_is_one(path))
            rc = push(l, path);
        free(path);
    }
    closedir(d);
    return rc;
}

int report_files_expand(const char *const *args, int nargs, char ***out, int *nout)
{
    struct list l = {0};
    int rc = 0;
    for (int i = 0; i < nargs && rc == 0; i++) {
        struct stat st;
        if (stat(args[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
            rc = push(&l, args[i]); /* a file: read (or refused) as always */
            continue;
        }
        int before = l.n;
        size_t len = strlen(args[i]);
        char *dir = strndup(args[i], len > 1 && args[i][len - 1] == '/' ? len - 1 : len);
        rc = dir ? walk(dir, &l, 0) : -1;
        free(dir);
        if (rc == 0 && l.n == before) {
            fprintf(stderr, "culeak report: no recording in %s\n", args[i]);
            rc = -1;
        }
        qsort(l.v + before, (size_t)(l.n - before), sizeof *l.v, by_path);
    }
    if (rc != 0) {
        report_files_free(l.v, l.n);
        return -1;
    }
    *out = l.v;
    *nout = l.n;
    return 0;
}

void report_files_free(char **files, int n)
{
    for (int i = 0; i < n; i++)
        free(files[i]);
    free(files);
}

static int take_rank(void *ctx, const struct culeak_hello *h)
{
    *(int *)ctx = model_hello_rank(h);
    return 1; /* the rest is not needed */
}

/* The rank of a recording's process, from its first record; -1 without one (or unreadable). */
static int recording_rank(const char *path)
{
    int rank = -1;
    uint8_t buf[16384];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    struct culeak_sink sink = {.ctx = &rank, .hello = take_rank};
    struct culeak_decoder d;
    culeak_decoder_init(&d, &sink, 1);
    culeak_decoder_feed(&d, buf, n);
    culeak_decoder_free(&d);
    return rank;
}

int report_files_ranked(const char *const *files, int nfiles)
{
    for (int i = 0; i < nfiles; i++)
        if (recording_rank(files[i]) >= 0)
            return 1;
    return 0;
}

struct work {
    const char *const *files;
    size_t n;
    atomic_size_t next;
    struct rank_summary *out;
    const struct model_options *mo;
    const struct report_options *ro;
    atomic_int failed; /* out of memory */
};

static void read_one(struct work *w, size_t i)
{
    struct rank_summary *s = &w->out[i];
    struct model *m = model_new(w->mo);
    char err[512] = "out of memory";
    int r = m ? model_load_file(m, w->files[i], err, sizeof err) : -1;
    if (r >= 0 && model_process_count(m) == 0) {
        r = -1;
        snprintf(err, sizeof err, "%s: no process in it", w->files[i]);
    }
    if (r < 0) {
        s->file = strdup(w->files[i]);
        s->error = strdup(err);
        s->rank = -1;
        if (!s->file || !s->error)
            w->failed = 1;
    } else if (rank_summarize(m, model_process_count(m) - 1, w->files[i], w->ro, s) != 0) { /* after an exec: its image */
        w->failed = 1;
    }
    model_free(m);
}

static void *worker(void *arg)
{
    struct work *w = arg;
    for (size_t i; (i = atomic_fetch_add(&w->next, 1)) < w->n && !w->failed;)
        read_one(w, i);
    return NULL;
}

int report_ranks_read(const char *const *files, int nfiles, int threads, const struct model_options *mo,
                      const struct report_options *ro, struct ranks_view *out)
{
    struct work w = {.files = files, .n = (size_t)nfiles, .mo = mo, .ro = ro};
    atomic_init(&w.next, 0);
    atomic_init(&w.failed, 0);
    if (!(w.out = calloc(w.n ? w.n : 1, sizeof *w.out)))
        return -1;
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    if (threads > nfiles)
        threads = nfiles;
    if (threads > 256)
        threads = 256;
    pthread_t t[256];
    int started = 0;
    for (; started < threads; started++)
        if (pthread_create(&t[started], NULL, worker, &w) != 0)
            break;
    if (started == 0)
        worker(&w);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    if (w.failed) {
        for (size_t i = 0; i < w.n; i++)
            rank_summary_free(&w.out[i]);
        free(w.out);
        return -1;
    }
    return ranks_view_build(w.out, w.n, out);
}
