/* `culeak dump FILE`: the stream as JSON Lines, one object per record. */
#include "common/apis.h"
#include "commands.h"
#include "common/decode.h"
#include "common/json.h"
#include "common/recording_part.h"
#include "common/recording_read.h"
#include "options.h"
#include "common/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dump_state {
    FILE *out;
    struct culeak_decoder dec;
    size_t skip;               /* a later part's header, not fed: its stream goes on after it */
    int rolled;                /* the file read ended in a ROLL: its stream goes on in the next */
    int failed;                /* a file of it could not be read (said): no more on its end */
    uint64_t roll_part, roll_offset;
    uint64_t *parent, *ip; /* trace tree by node id, to print events' stacks */
    size_t nframes, cap;
    int hello, exited; /* records seen: a recording without EXIT ends before its process */
};

static int dump_hello(void *ctx, const struct culeak_hello *h)
{
    ((struct dump_state *)ctx)->hello = 1;
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"hello\",\"version\":%" PRIu64 ",\"pid\":%" PRIu64 ",\"ppid\":%" PRIu64
               ",\"realtime_ns\":%" PRIu64 ",\"monotonic_ns\":%" PRIu64 ",\"host\":",
            h->version, h->pid, h->ppid, h->realtime_ns, h->monotonic_ns);
    json_write_str(f, h->host.p, h->host.n);
    fputs(",\"exe\":", f);
    json_write_str(f, h->exe.p, h->exe.n);
    fputs(",\"argv\":[", f);
    for (size_t i = 0; i < h->argc; i++) {
        if (i)
            putc(',', f);
        json_write_str(f, h->argv[i].p, h->argv[i].n);
    }
    fputs("],\"env\":{", f);
    for (size_t i = 0; i < h->nenv; i++) {
        const char *eq = memchr(h->env[i].p, '=', h->env[i].n);
        size_t kn = eq ? (size_t)(eq - h->env[i].p) : h->env[i].n;
        if (i)
            putc(',', f);
        json_write_str(f, h->env[i].p, kn);
        putc(':', f);
        json_write_str(f, eq ? eq + 1 : "", eq ? h->env[i].n - kn - 1 : 0);
    }
    fprintf(f, "},\"depth_limit\":%" PRIu64 ",\"flags\":%" PRIu64 "}\n", h->depth_limit, h->flags);
    return 0;
}

static int dump_modules(void *ctx, const struct culeak_modules *m)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"modules\",\"generation\":%" PRIu64 ",\"modules\":[", m->generation);
    for (size_t i = 0; i < m->count; i++) {
        fputs(i ? ",{\"path\":" : "{\"path\":", f);
        json_write_str(f, m->mod[i].path.p, m->mod[i].path.n);
        fprintf(f, ",\"base\":\"0x%" PRIx64 "\",\"segments\":[", m->mod[i].base);
        for (size_t s = 0; s < m->mod[i].nseg; s++)
            fprintf(f, "%s[\"0x%" PRIx64 "\",%" PRIu64 "]", s ? "," : "", m->mod[i].seg[s].vaddr,
                    m->mod[i].seg[s].memsz);
        fputs("]}", f);
    }
    fputs("]}\n", f);
    return 0;
}

static int dump_frame(void *ctx, uint64_t id, uint64_t parent, uint64_t ip)
{
    struct dump_state *d = ctx;
    fprintf(d->out, "{\"type\":\"frame\",\"id\":%" PRIu64 ",\"parent\":%" PRIu64 ",\"ip\":\"0x%" PRIx64 "\"}\n",
            id, parent, ip);
    if (id >= d->cap) {
        size_t cap = d->cap ? d->cap : 1024;
        while (cap <= id)
            cap *= 2;
        if (cap > (size_t)1 << 28)
            return 0; /* absurd id: print it, do not index it */
        uint64_t *np = realloc(d->parent, cap * sizeof *np), *ni;
        if (!np)
            return 0;
        d->parent = np;
        ni = realloc(d->ip, cap * sizeof *ni);
        if (!ni)
            return 0;
        d->ip = ni;
        memset(d->parent + d->cap, 0xff, (cap - d->cap) * sizeof *np);
        d->cap = cap;
    }
    d->parent[id] = parent;
    d->ip[id] = ip;
    return 0;
}

static int dump_event(void *ctx, const struct culeak_event *e)
{
    struct dump_state *d = ctx;
    FILE *f = d->out;
    fprintf(f, "{\"type\":\"%s\",\"seq\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"tid\":%" PRIu64
               ",\"api\":\"%s\",\"kind\":\"%s\",\"size\":%" PRIu64 ",\"addr\":\"0x%" PRIx64
               "\",\"aux\":\"0x%" PRIx64 "\",\"device\":%d,\"ctx\":\"0x%" PRIx64 "\",\"result\":%" PRIu64
               ",\"held\":%s,\"stack_id\":%" PRIu64 ",\"stack\":[",
            culeak_op_name(e->op), e->seq, e->t_ns, e->tid, culeak_api_name(e->api),
            culeak_kind_name(e->kind), e->size, e->addr, e->aux, e->device, e->ctx, e->result,
            (e->flags & 1) ? "true" : "false", e->stack);
    /* walk leaf -> root; the depth bound guards against a corrupt (cyclic) tree */
    uint64_t id = e->stack;
    for (int n = 0; id != 0 && id < d->cap && d->parent[id] != UINT64_MAX && n < 4096; n++) {
        fprintf(f, "%s\"0x%" PRIx64 "\"", n ? "," : "", d->ip[id]);
        id = d->parent[id];
    }
    fputs("]}\n", f);
    return 0;
}

static int dump_mark(void *ctx, const struct culeak_mark *m)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"mark\",\"seq\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"tid\":%" PRIu64 ",\"label\":",
            m->seq, m->t_ns, m->tid);
    json_write_str(f, m->label.p, m->label.n);
    fprintf(f, ",\"flags\":%" PRIu64, m->flags);
    if (m->mem_total)
        fprintf(f, ",\"device\":%d,\"mem_free\":%" PRIu64 ",\"mem_total\":%" PRIu64, (int)m->mem_device,
                m->mem_free, m->mem_total);
    fputs("}\n", f);
    return 0;
}

static int dump_pyframe(void *ctx, const struct culeak_pyframe *p)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"pyframe\",\"id\":%" PRIu64 ",\"ip\":\"0x%" PRIx64 "\",\"file\":", p->id,
            p->id | CULEAK_PYFRAME_TAG);
    json_write_str(f, p->file.p, p->file.n);
    fputs(",\"function\":", f);
    json_write_str(f, p->function.p, p->function.n);
    fprintf(f, ",\"line\":%" PRIu64 ",\"firstlineno\":%" PRIu64 "%s}\n", p->line, p->firstlineno,
            p->flags & CULEAK_PYFRAME_BACKWARD ? ",\"autograd_backward\":true" : "");
    return 0;
}

static int dump_exit(void *ctx, const struct culeak_exit *x)
{
    ((struct dump_state *)ctx)->exited = 1;
    fprintf(((struct dump_state *)ctx)->out,
            "{\"type\":\"exit\",\"seq\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"reason\":%" PRIu64 "}\n", x->seq,
            x->t_ns, x->reason);
    return 0;
}

static int dump_lost(void *ctx, uint64_t count, uint64_t first, uint64_t last)
{
    fprintf(((struct dump_state *)ctx)->out, "{\"type\":\"lost\",\"count\":%" PRIu64 ",\"first_seq\":%" PRIu64 ",\"last_seq\":%" PRIu64 "}\n",
            count, first, last);
    return 0;
}

static int dump_note(void *ctx, struct culeak_str s)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fputs("{\"type\":\"note\",\"text\":", f);
    json_write_str(f, s.p, s.n);
    fputs("}\n", f);
    return 0;
}

static int dump_holder(void *ctx, uint64_t addr, struct culeak_str words)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"holder\",\"addr\":\"0x%" PRIx64 "\",\"words\":", addr);
    json_write_str(f, words.p, words.n);
    fputs("}\n", f);
    return 0;
}

static int dump_roll(void *ctx, const struct culeak_roll *r)
{
    struct dump_state *st = ctx;
    fprintf(st->out, "{\"type\":\"roll\",\"which\":\"%s\",\"part\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"name\":",
            r->which == CULEAK_ROLL_NEXT ? "next" : "previous", r->part, r->offset);
    json_write_str(st->out, r->name.p, r->name.n);
    fputs("}\n", st->out);
    if (r->which == CULEAK_ROLL_NEXT) {
        st->rolled = 1;
        st->roll_part = r->part;
        st->roll_offset = r->offset;
    }
    return 0;
}

static int feed(void *ctx, const uint8_t *bytes, size_t n)
{
    struct dump_state *st = ctx;
    size_t k = st->skip < n ? st->skip : n;
    st->skip -= k;
    return k < n && culeak_decoder_feed(&st->dec, bytes + k, n - k) != 0;
}

/* Does the stream read so far (none: after NULL) go on in path, a rolled recording's next
 * part? 1 yes, 0 path starts a stream, -1 path is a later part of another. */
static int goes_on(struct dump_state *st, const char *after, const char *path)
{
    struct culeak_part_head h;
    if (culeak_part_head(path, &h) != 1)
        return 0;
    if (after && st->rolled && st->roll_part + 1 == h.part && st->roll_offset == h.offset) {
        st->skip = h.header_len;
        st->rolled = 0;
        return 1;
    }
    return -1;
}

/* Ends the stream read so far: 0; 1 unreadable; 3 cut off, or ended before its process. */
static int end_stream(struct dump_state *st, const char *path)
{
    int rc = 0;
    if (st->failed) {
        rc = 1;
    } else if (st->rolled) {
        fprintf(stderr, "culeak: %s goes on in a part not given\n", path);
        rc = 3;
    } else if (culeak_decoder_finish(&st->dec) != 0) {
        cli_fail(&cli_dump, "cannot read %s: %s", path, st->dec.error);
        rc = 3;
    } else if (st->hello && !st->exited) { /* cut between two records, or its process killed */
        fprintf(stderr, "culeak: %s ends before its process did (no exit record: the process was killed, "
                        "or the recording could not be written on)\n", path);
        rc = 3;
    }
    culeak_decoder_free(&st->dec);
    free(st->parent);
    free(st->ip);
    return rc;
}

static int dump_churn(void *ctx, const struct culeak_churn *c)
{
    FILE *f = ((struct dump_state *)ctx)->out;
    fprintf(f, "{\"type\":\"churn\",\"interval_ns\":%" PRIu64 ",\"t_first_ns\":%" PRIu64 ",\"t_last_ns\":%" PRIu64
               ",\"units\":[", c->interval_ns, c->t_first, c->t_last);
    for (size_t i = 0; i < c->nunits; i++) {
        const struct culeak_churn_unit *u = &c->unit[i];
        fprintf(f, "%s{\"stack\":%" PRIu64 ",\"kind\":\"%s\",\"device\":%d,\"count\":%" PRIu64
                   ",\"bytes\":%" PRIu64 ",\"peak\":%" PRIu64,
                i ? "," : "", u->stack, culeak_kind_name(u->kind), (int)u->device, u->count, u->bytes, u->peak);
        if (u->thread)
            fprintf(f, ",\"tid\":%" PRIu64 ",\"several_threads\":%s", (u->thread - 1) >> 1,
                    (u->thread - 1) & 1 ? "true" : "false");
        putc('}', f);
    }
    fputs("],\"peaks\":[", f);
    for (size_t i = 0; i < c->npeaks; i++) {
        const struct culeak_churn_peak *p = &c->peak[i];
        fprintf(f, "%s{\"device\":", i ? "," : "");
        if (p->all_devices)
            fputs("\"all\"", f);
        else
            fprintf(f, "%d", (int)p->device);
        fprintf(f, ",\"kind\":\"%s\",\"bytes\":%" PRIu64 ",\"t_ns\":%" PRIu64 ",\"seq\":%" PRIu64 "}",
                p->slot < CULEAK_KIND_COUNT ? culeak_kind_name(p->slot) : "device memory", p->bytes, p->t_ns, p->seq);
    }
    fputs("]}\n", f);
    return 0;
}

const struct cli_command cli_dump = {
    .name = "dump",
    .summary = "print a recording as JSON Lines",
    .synopsis = "FILE...",
    .about = "Prints every record of culeak recordings as JSON Lines. Stacks list frame ips,\n"
             "innermost first; an ip with bit 63 set is the Python frame of that pyframe record.\n"
             "The parts of a rolled recording (record --roll), given in order, print as one stream.\n",
    .options = cli_help_only,
    .run = cmd_dump,
};

int cmd_dump(int argc, char **argv)
{
    int status;
    int first = cli_parse_files(&cli_dump, argc, argv, "the recordings to print", &status);
    if (first < 0)
        return status;
    status = 0;
    struct dump_state st = {.out = stdout};
    struct culeak_sink sink = {
        .ctx = &st, .hello = dump_hello, .modules = dump_modules, .frame = dump_frame,
        .event = dump_event, .mark = dump_mark, .exit = dump_exit, .note = dump_note,
        .pyframe = dump_pyframe, .lost = dump_lost, .holder = dump_holder, .roll = dump_roll,
        .churn = dump_churn,
    };
    const char *prev = NULL;
    for (int i = first; i < argc; i++) {
        int on = goes_on(&st, prev ? argv[i] : NULL, argv[i]);
        if (on < 0) {
            cli_fail(&cli_dump, "cannot read %s: a later part of a rolled recording, given without the part before "
                                "it (give the parts in order)", argv[i]);
            status = 1;
            continue;
        }
        if (!on) {
            if (prev) {
                int rc = end_stream(&st, prev);
                status = status ? status : rc;
            }
            st = (struct dump_state){.out = stdout};
            culeak_decoder_init(&st.dec, &sink, 1);
        }
        char err[512];
        int r = culeak_read_recording(argv[i], feed, &st, err, sizeof err);
        fflush(stdout);
        if (r < 0)
            cli_fail(&cli_dump, "cannot read %s", err);
        else if (r)
            cli_fail(&cli_dump, "cannot read %s: %s", argv[i], st.dec.error);
        st.failed |= r != 0;
        prev = argv[i];
    }
    if (prev) {
        int rc = end_stream(&st, prev);
        status = status ? status : rc;
    }
    return status;
}
