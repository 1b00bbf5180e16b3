/* The model's held observer: an event the process holds for an answer is shown to the
 * observer before the model takes it in (the console answers a held allocation that no
 * breakpoint can stop without waiting for that work), then as an event as before; other
 * events are not shown there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "stream_builder.h"
#include "model_fixture.h"

#include <string.h>

#define APP "/opt/app/bin/app"
#define APP_BASE 0x555500000000ull

struct calls {
    struct model *m;
    char order[16]; /* 'h': held, 'e': event, 'n': new stack */
    int n;
    uint64_t live_at_held; /* the process's live bytes when held was called */
    uint64_t held_seq;
};

static void add(struct calls *c, char what)
{
    if (c->n < (int)sizeof c->order - 1)
        c->order[c->n++] = what;
}

static void on_held(void *ctx, int proc, const struct culeak_event *e)
{
    struct calls *c = ctx;
    struct model_counter k;
    model_totals(c->m, proc, MODEL_ALL, CULEAK_KIND_DEVICE, &k);
    c->live_at_held = k.live_bytes;
    c->held_seq = e->seq;
    add(c, 'h');
}

static void on_event(void *ctx, int proc, const struct culeak_event *e)
{
    (void)proc;
    (void)e;
    add(ctx, 'e');
}

static void on_new_stack(void *ctx, int proc, uint64_t stack)
{
    (void)proc;
    (void)stack;
    add(ctx, 'n');
}

static void test_held_before_the_model_takes_it(void **state)
{
    (void)state;
    struct model *m = new_model();
    struct calls c = {.m = m};
    struct model_observer obs = {.ctx = &c, .held = on_held, .event = on_event, .new_stack = on_new_stack};
    model_set_observer(m, &obs);
    struct sb *b = sb_new();
    sb_hello(b, 100, APP, NULL);
    sb_module(b, APP, APP_BASE, 0, 0x10000);
    sb_frame(b, 1, 0, APP_BASE + 0x100);
    sb_frame(b, 2, 1, APP_BASE + 0x200);
    sb_alloc(b, 1, 2, 0x1000, 100); /* not held */
    sb_event(b, (struct sb_ev){.seq = 2, .dt = 1000, .op = CULEAK_OP_ALLOC, .api = CULEAK_API_CUDA_MALLOC,
                               .kind = CULEAK_KIND_DEVICE, .size = 50, .addr = 0x2000, .stack = 1,
                               .flags = CULEAK_EVENT_HELD});
    assert_int_equal(load(m, b), MODEL_FEED_OK);
    assert_string_equal(c.order, "nehne");
    assert_int_equal(c.held_seq, 2);
    assert_int_equal(c.live_at_held, 100); /* the held allocation not taken in yet */
    struct model_counter k;
    model_totals(m, 0, MODEL_ALL, CULEAK_KIND_DEVICE, &k);
    assert_int_equal(k.live_bytes, 150);
    sb_free(b);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_held_before_the_model_takes_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
