/* A property of the stream's compact records (the encoder in src/shim/stream.c, the
 * decoder in src/common/decode.c): whatever a program does, the recording read back says
 * it, event by event and field by field. The encoder lives inside the shim, so the
 * program is a client of the fake driver (`repeats SEED N`: random steps across two
 * devices, three contexts, two sites, two sizes, device, pinned host, reserved and VMM
 * memory (on either device, whatever the context's), frees of each, contexts made and
 * destroyed between them) run under the shim;
 * every event it caused is rebuilt from what it printed and compared whole with the
 * decoded one. ALLOC_AGAIN and FREE_AGAIN records stand for most of them: one taken for
 * a repeat when its device, context, size, kind or stack differs shows here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "common/wire.h"

static char dir[64];
static struct th_rec rec;
static struct th_run run;

static int setup(void **s) { return th_mkdtemp(dir, sizeof dir) ? 0 : -1; }
static int teardown(void **s)
{
    th_rmdir(dir);
    th_rec_free(&rec);
    return 0;
}

static void show(const char *what, const struct culeak_event *e)
{
    fprintf(stderr, "  %s: seq %llu tid %llu op %u api %u kind %u device %d ctx 0x%llx size %llu addr 0x%llx "
                    "aux %llu result %llu stack %llu flags %llu\n",
            what, (unsigned long long)e->seq, (unsigned long long)e->tid, e->op, e->api, e->kind, e->device,
            (unsigned long long)e->ctx, (unsigned long long)e->size, (unsigned long long)e->addr,
            (unsigned long long)e->aux, (unsigned long long)e->result, (unsigned long long)e->stack,
            (unsigned long long)e->flags);
}

/* The decoded event i against the one expected, every field but the time. */
static void same(size_t i, const char *step, const struct culeak_event *want)
{
    assert_true(i < rec.nev);
    const struct culeak_event *got = &rec.ev[i];
    if (got->seq != want->seq || got->tid != want->tid || got->op != want->op || got->api != want->api ||
        got->kind != want->kind || got->device != want->device || got->ctx != want->ctx ||
        got->size != want->size || got->addr != want->addr || got->aux != want->aux ||
        got->result != want->result || got->stack != want->stack || got->flags != want->flags) {
        show("expected", want);
        show("recorded", got);
        fail_msg("event %zu (step '%s') differs", i, step);
    }
}

/* A value learned at its first sight (an address, a context, a stack), the same at
 * every later one. */
static uint64_t learn(uint64_t *slot, uint64_t v)
{
    if (!*slot)
        *slot = v;
    return *slot;
}

/* How many records of each type the recording holds (CULEAK_MAGIC's 8 bytes skipped). */
static void count_types(size_t *count, size_t ntypes)
{
    char path[128];
    snprintf(path, sizeof path, "%s/rec.culeak", dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static uint8_t buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > CULEAK_MAGIC_LEN && n < sizeof buf);
    memset(count, 0, ntypes * sizeof *count);
    for (size_t at = CULEAK_MAGIC_LEN; at < n;) {
        uint8_t type;
        const uint8_t *payload;
        size_t plen;
        long used = culeak_next_record(buf + at, n - at, &type, &payload, &plen);
        assert_true(used > 0);
        at += (size_t)used;
        if (type < ntypes)
            count[type]++;
    }
}

struct block {
    char how;
    size_t size;
    uint64_t addr;
};

static uint64_t check_seed(unsigned seed, int steps)
{
    char a[16], b[16];
    snprintf(a, sizeof a, "%u", seed);
    snprintf(b, sizeof b, "%d", steps);
    const char *args[] = {"repeats", a, b, NULL};
    th_rec_free(&rec);
    assert_int_equal(th_record(&rec, &run, dir, "client_static", args, NULL, 1), 0);
    assert_true(th_exited_ok(&run));
    if (rec.rc != 0)
        fail_msg("seed %u: decode %d: %s", seed, rec.rc, rec.err);
    assert_true(rec.nev > 0);
    /* the setup's context of its own on device 1 */
    const struct culeak_event *e0 = &rec.ev[0];
    assert_int_equal(e0->op, CULEAK_OP_CTX_CREATE);
    assert_int_equal(e0->device, 1);
    static const int dev[3] = {0, 1, 1};
    uint64_t ctx[3] = {0, 0, e0->addr}, stack[8] = {0}, tid = e0->tid, seq = e0->seq;
    uint64_t vmm_again = 0; /* VMM allocations one after another in one context, on two devices */
    int vmm_dev = -1;
    static struct block blk[4096];
    size_t nb = 0, i = 1, allocs = 0, frees = 0, again_dev = 0;
    int cur = 0, prev_dev = -2;
    uint64_t prev_ctx = 0;
    char *save = NULL;
    for (char *line = strtok_r(run.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char how;
        int n1 = 0;
        size_t size = 0;
        if (strncmp(line, "client_static repeats ok", 24) == 0)
            break;
        struct culeak_event want = {.tid = tid, .device = -1};
        if (sscanf(line, "c %d", &cur) == 1) {
            continue;
        } else if (sscanf(line, "%c %d %zu", &how, &n1, &size) == 3 && (how == 'a' || how == 'h')) {
            want.op = CULEAK_OP_ALLOC;
            want.api = how == 'a' ? CULEAK_API_CU_MEM_ALLOC : CULEAK_API_CU_MEM_ALLOC_HOST;
            want.kind = how == 'a' ? CULEAK_KIND_DEVICE : CULEAK_KIND_HOST_PINNED;
            want.stack = learn(&stack[n1 * 2 + (how == 'h')], rec.ev[i].stack);
        } else if (sscanf(line, "r %zu", &size) == 1) {
            how = 'r';
            want.op = CULEAK_OP_ALLOC;
            want.api = CULEAK_API_CU_MEM_ADDRESS_RESERVE;
            want.kind = CULEAK_KIND_ADDRESS_RESERVE;
            want.stack = learn(&stack[4], rec.ev[i].stack);
        } else if (sscanf(line, "v %d", &n1) == 1) {
            how = 'v';
            size = 2u << 20; /* SZ_VMM */
            want.op = CULEAK_OP_ALLOC;
            want.api = CULEAK_API_CU_MEM_CREATE;
            want.kind = CULEAK_KIND_VMM_PHYSICAL;
            want.stack = learn(&stack[5], rec.ev[i].stack);
        } else if (sscanf(line, "f %d", &n1) == 1) {
            assert_true(n1 >= 0 && (size_t)n1 < nb);
            const struct block *k = &blk[n1];
            want.op = CULEAK_OP_FREE;
            want.api = k->how == 'a'   ? CULEAK_API_CU_MEM_FREE
                       : k->how == 'h' ? CULEAK_API_CU_MEM_FREE_HOST
                       : k->how == 'v' ? CULEAK_API_CU_MEM_RELEASE
                                       : CULEAK_API_CU_MEM_ADDRESS_FREE;
            want.kind = k->how == 'a'   ? CULEAK_KIND_DEVICE
                        : k->how == 'h' ? CULEAK_KIND_HOST_PINNED
                        : k->how == 'v' ? CULEAK_KIND_VMM_PHYSICAL
                                        : CULEAK_KIND_ADDRESS_RESERVE;
            want.addr = k->addr;
            want.size = k->how == 'r' ? k->size : 0;
            want.seq = ++seq;
            same(i++, line, &want);
            frees++;
            continue;
        } else if (strcmp(line, "x") == 0) {
            /* a context made and destroyed: two events of their own kinds */
            assert_true(i + 1 < rec.nev);
            assert_int_equal(rec.ev[i].op, CULEAK_OP_CTX_CREATE);
            assert_int_equal(rec.ev[i].device, dev[cur]);
            assert_int_equal(rec.ev[i].seq, ++seq);
            assert_int_equal(rec.ev[i + 1].api, CULEAK_API_CU_CTX_DESTROY);
            assert_int_equal(rec.ev[i + 1].ctx, rec.ev[i].addr);
            assert_int_equal(rec.ev[i + 1].seq, ++seq);
            i += 2;
            continue;
        } else {
            fail_msg("seed %u: the client printed '%s'", seed, line);
        }
        /* an allocation: in the current context, on its device */
        assert_true(i < rec.nev);
        want.size = size;
        want.device = how == 'v' ? n1 : dev[cur];
        want.ctx = learn(&ctx[cur], rec.ev[i].ctx);
        want.addr = rec.ev[i].addr; /* the driver's choice */
        want.seq = ++seq;
        assert_true(want.addr != 0);
        assert_true(nb < 4096);
        blk[nb++] = (struct block){how, size, want.addr};
        same(i++, line, &want);
        again_dev += want.device != prev_dev || want.ctx != prev_ctx;
        if (how == 'v' && vmm_dev >= 0 && want.ctx == prev_ctx && want.device != vmm_dev)
            vmm_again++;
        vmm_dev = how == 'v' ? want.device : -1;
        prev_dev = want.device;
        prev_ctx = want.ctx;
        allocs++;
    }
    assert_int_equal(i, rec.nev); /* nothing more was recorded */
    /* the contexts and the stacks of different places differ */
    assert_true(ctx[0] != ctx[1] && ctx[1] != ctx[2] && ctx[0] != ctx[2]);
    for (int x = 0; x < 6; x++)
        for (int y = x + 1; y < 6; y++)
            assert_true(!stack[x] || stack[x] != stack[y]);
    size_t count[32];
    count_types(count, 32);
    printf("# seed %u: %zu events (%zu allocations, %zu frees; %zu of the allocations on another device or "
           "context than the one before, %llu VMM allocations in one context on another device than the VMM one before); "
           "records ALLOC %zu ALLOC_AGAIN %zu FREE %zu FREE_AGAIN %zu\n",
           seed, rec.nev, allocs, frees, again_dev, (unsigned long long)vmm_again, count[CULEAK_REC_ALLOC], count[CULEAK_REC_ALLOC_AGAIN],
           count[CULEAK_REC_FREE], count[CULEAK_REC_FREE_AGAIN]);
    assert_true(count[CULEAK_REC_ALLOC_AGAIN] > 0);
    assert_true(count[CULEAK_REC_FREE_AGAIN] > 0);
    return vmm_again;
}

static void test_random_steps(void **s)
{
    uint64_t vmm_again = 0;
    for (unsigned seed = 1; seed <= 6; seed++)
        vmm_again += check_seed(seed, 400);
    assert_true(vmm_again > 0); /* the case a repeat's device check is for came up */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_steps),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
