/* `save FILE`: the session's recordings copied out, one per process (a launched or
 * attached job's stream copies, or the recordings `culeak open` read). */
#include "console.h"
#include "common/output_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Copies src to dst, every read and write checked. 0, or -1 with the reason in msg. */
static int copy_file(const char *src, const char *dst, char *msg, size_t msglen)
{
    FILE *in = fopen(src, "rb");
    if (!in) {
        snprintf(msg, msglen, "cannot read the stream copy %s: %s", src, strerror(errno));
        return -1;
    }
    struct culeak_output out;
    if (culeak_output_open(&out, dst) != 0) {
        snprintf(msg, msglen, "cannot write %s: %s", dst, strerror(errno));
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    int bad = 0;
    while (!bad && (n = fread(buf, 1, sizeof buf, in)) > 0)
        bad = fwrite(buf, 1, n, out.f) != n;
    int read_err = ferror(in);
    fclose(in);
    if (culeak_output_close(&out, read_err) != 0 && !read_err) {
        snprintf(msg, msglen, "cannot write %s: %s", dst, strerror(errno));
        return -1;
    }
    if (read_err) {
        snprintf(msg, msglen, "cannot read the stream copy %s", src);
        return -1;
    }
    return 0;
}

int console_save(struct console *c, const char *path, char *msg, size_t msglen)
{
    size_t nsrc = 0, written = 0, partial = 0;
    char lost[300] = "";
    int n = c->live ? (int)c->nreaders : c->tl.npaths;
    for (int i = 0; i < n; i++) {
        const char *src;
        if (c->live) {
            const struct ring_reader *k = c->readers[i];
            if (k->proc < 0)
                continue; /* a connection that never said HELLO: nothing to save */
            src = k->tee_path;
            if (k->tee_lost[0] && !partial++) {
                const struct model_process *p = model_process(c->u.m, k->proc);
                snprintf(lost, sizeof lost, "pid %llu: %s", p ? (unsigned long long)p->pid : 0ull, k->tee_lost);
            }
        } else {
            src = c->tl.paths[i];
        }
        char dst[4200];
        if (nsrc++ == 0)
            snprintf(dst, sizeof dst, "%s", path);
        else
            snprintf(dst, sizeof dst, "%s.%zu", path, nsrc - 1);
        if (copy_file(src, dst, msg, msglen) != 0)
            return -1;
        written++;
    }
    if (!written) {
        snprintf(msg, msglen, "nothing to save yet: no process has connected");
        return -1;
    }
    int w = written == 1 ? snprintf(msg, msglen, "saved the recording to %s", path)
                         : snprintf(msg, msglen, "saved %zu recordings: %s, %s.1 ... %s.%zu", written, path, path,
                                    path, written - 1);
    if (partial && w >= 0 && (size_t)w < msglen) {
        snprintf(msg + w, msglen - (size_t)w, "; %zu incomplete (%s)", partial, lost);
        return -1;
    }
    return 0;
}
