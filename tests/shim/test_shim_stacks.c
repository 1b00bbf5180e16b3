/* Stacks and modules: every event but a free has a stack (a free has one with
 * CULEAK_FREE_STACKS=1, and none, with no device or context, by default: HELLO says
 * which); FRAME ids grow by one from 1 and each names a parent already known (0 = root);
 * events reference known frames; the MODULES map covers the client executable and every
 * stack passes through it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_shim_harness.h"
#include "common/wire.h"

/* The module whose segments hold ip, or NULL. */
static const struct th_module *module_of(const struct th_rec *r, uint64_t ip)
{
    for (size_t m = 0; m < r->nmod; m++)
        for (size_t s = 0; s < r->mod[m].nseg; s++) {
            uint64_t lo = r->mod[m].base + r->mod[m].seg[s].vaddr;
            if (ip >= lo && ip < lo + r->mod[m].seg[s].memsz)
                return &r->mod[m];
        }
    return NULL;
}

static const struct th_frame *frame(const struct th_rec *r, uint64_t id)
{
    return id >= 1 && id <= r->nframe ? &r->frame[id - 1] : NULL; /* ids are dense from 1 */
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static void check(const char *client, int free_stacks)
{
    char dir[64];
    struct th_rec rec;
    struct th_run run;
    const char *args[] = {"families", NULL};
    assert_non_null(th_mkdtemp(dir, sizeof dir));
    const char *env[] = {"CULEAK_FREE_STACKS=1", NULL};
    assert_int_equal(th_record(&rec, &run, dir, client, args, free_stacks ? env : NULL, 0), 0);
    assert_int_equal(rec.rc, 0);
    assert_true(rec.nev > 0);
    assert_true(rec.modules_records > 0);
    assert_true(rec.nframe > 0);
    assert_int_equal(rec.hello.flags & CULEAK_HELLO_BARE_FREES, free_stacks ? 0 : CULEAK_HELLO_BARE_FREES);

    for (size_t i = 0; i < rec.nframe; i++) {
        assert_int_equal(rec.frame[i].id, i + 1);
        assert_true(rec.frame[i].parent < rec.frame[i].id);
        assert_int_not_equal(rec.frame[i].ip, 0);
    }

    char exe_suffix[64];
    snprintf(exe_suffix, sizeof exe_suffix, "/%s", client);
    int have_exe = 0;
    for (size_t m = 0; m < rec.nmod; m++)
        have_exe |= ends_with(rec.mod[m].path, exe_suffix);
    if (!have_exe)
        fail_msg("%s: no MODULES entry for the executable", client);

    size_t frees = 0;
    for (size_t i = 0; i < rec.nev; i++) {
        const struct culeak_event *e = &rec.ev[i];
        if (e->op == CULEAK_OP_FREE && !free_stacks) {
            if (e->stack || e->device != -1 || e->ctx)
                fail_msg("%s event %zu (%s): a bare free with stack %llu, device %d", client, i,
                         culeak_api_name(e->api), (unsigned long long)e->stack, (int)e->device);
            frees++;
            continue;
        }
        frees += e->op == CULEAK_OP_FREE;
        if (!e->stack || !frame(&rec, e->stack))
            fail_msg("%s event %zu (%s): stack %llu unknown", client, i, culeak_api_name(e->api),
                     (unsigned long long)e->stack);
        /* the call site lies in the program, not only in the shim or the driver */
        int in_exe = 0, depth = 0;
        for (const struct th_frame *f = frame(&rec, e->stack); f && depth < 256; f = frame(&rec, f->parent), depth++) {
            const struct th_module *mod = module_of(&rec, f->ip);
            in_exe |= mod && ends_with(mod->path, exe_suffix);
        }
        if (!in_exe)
            fail_msg("%s event %zu (%s): no frame in the executable", client, i, culeak_api_name(e->api));
    }
    assert_true(frees > 0);
    th_rec_free(&rec);
    th_rmdir(dir);
}

static void test_static_stacks(void **s) { check("client_static", 0); }
static void test_runtime_stacks(void **s) { check("client_runtime", 0); }
static void test_static_free_stacks(void **s) { check("client_static", 1); }
static void test_runtime_free_stacks(void **s) { check("client_runtime", 1); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_static_stacks),
        cmocka_unit_test(test_runtime_stacks),
        cmocka_unit_test(test_static_free_stacks),
        cmocka_unit_test(test_runtime_free_stacks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
