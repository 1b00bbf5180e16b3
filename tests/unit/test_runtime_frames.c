/* Allocator and runtime frames are never call sites. A stack whose every frame is looked
 * through (a thread without Python frames or program code) has its site at the first
 * frame outside allocator and runtime code: the CUDA runtime, c10's caching allocator,
 * ATen's empty helpers (by function, in the stand-in libtorch_cpu.so of
 * tests/fakecuda/torch, which has symbols); when all of its frames are such code, at the
 * outermost one. Native modules of installed packages (NumPy's, on CuPy's path) are
 * looked through like their Python files. Memory made for a backward() call (the marker
 * frame, then the caller's Python frames) is at the caller's line, marked, via the
 * operation's frame. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "model/model.h"
#include "report/stack_fold.h"
#include "stream_builder.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CUDART "/usr/lib/x86_64-linux-gnu/libcudart.so.13"
#define C10 "/opt/venv/lib/python3.12/site-packages/torch/lib/libc10_cuda.so"
#define NCCL "/opt/venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define CUPY_MEM "/opt/venv/lib/python3.12/site-packages/cupy/cuda/memory.cpython-312-x86_64-linux-gnu.so"
#define NUMPY_DIR "/opt/venv/lib/python3.12/site-packages/numpy/"
#define NUMPY NUMPY_DIR "_core/_multiarray_umath.cpython-312-x86_64-linux-gnu.so"
#define PYLIB "/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0"
#define TRAIN "/home/me/train.py"
#define TORCH_PY "/opt/venv/lib/python3.12/site-packages/torch/_tensor.py"
#define PIN_PY "/opt/venv/lib/python3.12/site-packages/torch/utils/data/_utils/pin_memory.py"
#define THREADING_PY "/usr/lib/python3.12/threading.py"

enum { B_CUDART = 0x10000000, B_C10 = 0x20000000, B_NCCL = 0x30000000, B_LIBC = 0x40000000,
       B_CUPY = 0x50000000, B_NUMPY = 0x60000000, B_PYLIB = 0x70000000, B_TORCH = 0x7f000000 };

static char torch_cpu[PATH_MAX];    /* the stand-in libtorch_cpu.so */
static uint64_t empty_generic, apply; /* their ips (base + symbol + 4) */

static int find_torch_cpu(void **state)
{
    (void)state;
    ssize_t n = readlink("/proc/self/exe", torch_cpu, sizeof torch_cpu - 64);
    if (n <= 0)
        return -1;
    torch_cpu[n] = 0;
    strcpy(strrchr(torch_cpu, '/'), "/../fakecuda/libtorch_cpu.so"); /* build/tests -> build/fakecuda */
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "nm -C --defined-only '%s'", torch_cpu);
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        unsigned long long a;
        if (sscanf(line, "%llx", &a) != 1)
            continue;
        if (strstr(line, " at::detail::empty_generic("))
            empty_generic = B_TORCH + a + 4;
        else if (strstr(line, " torch::autograd::generated::MmBackward0::apply("))
            apply = B_TORCH + a + 4;
    }
    return pclose(f) == 0 && empty_generic && apply ? 0 : -1;
}

static void sb_pyframe(struct sb *b, uint64_t id, const char *file, const char *fn, uint64_t line, int marker)
{
    sb_u(b, id);
    sb_s(b, file);
    sb_s(b, fn);
    sb_u(b, line);
    sb_u(b, 1);
    if (marker)
        sb_u(b, CULEAK_PYFRAME_BACKWARD);
    sb_end(b, CULEAK_REC_PYFRAME);
}

/* One allocation per stack (ips innermost first); stack ids in the order given. */
struct stk {
    size_t n;
    uint64_t ip[8];
};

static struct model *load(const struct model_options *o, const struct stk *stacks, size_t nstacks, uint64_t *leaf)
{
    struct sb *b = sb_new();
    sb_hello(b, 100, "/usr/bin/python3", NULL);
    sb_module(b, CUDART, B_CUDART, 0, 0x100000);
    sb_module(b, C10, B_C10, 0, 0x100000);
    sb_module(b, NCCL, B_NCCL, 0, 0x100000);
    sb_module(b, LIBC, B_LIBC, 0, 0x100000);
    sb_module(b, CUPY_MEM, B_CUPY, 0, 0x100000);
    sb_module(b, NUMPY, B_NUMPY, 0, 0x100000);
    sb_module(b, PYLIB, B_PYLIB, 0, 0x100000);
    sb_module(b, torch_cpu, B_TORCH, 0, 0x5000);
    sb_pyframe(b, 1, TRAIN, "<module>", 7, 0);
    sb_pyframe(b, 2, TORCH_PY, "Tensor.backward", 581, 0);
    sb_pyframe(b, 3, "", "[autograd backward]", 0, 1);
    sb_pyframe(b, 4, PIN_PY, "pin_memory", 57, 0);
    sb_pyframe(b, 5, PIN_PY, "_pin_memory_loop", 52, 0);
    sb_pyframe(b, 6, THREADING_PY, "Thread.run", 1010, 0);
    uint64_t id = 1;
    for (size_t s = 0; s < nstacks; s++) {
        uint64_t parent = 0;
        for (size_t d = stacks[s].n; d-- > 0; parent = id++)
            sb_frame(b, id, parent, stacks[s].ip[d]);
        leaf[s] = parent;
        sb_alloc(b, s + 1, parent, 0x1000 * (s + 1), 64);
    }
    struct model *m = model_new(o);
    assert_non_null(m);
    struct model_stream *st = model_stream_open(m);
    assert_int_equal(model_stream_feed(st, b->buf, b->n), 0);
    model_stream_close(st);
    sb_free(b);
    return m;
}

/* The row of stack `leaf` (grouped by stack). */
static struct model_row row_of(struct model *m, uint64_t leaf, struct model_table *t)
{
    struct model_query q;
    model_query_init(&q);
    q.group = MODEL_GROUP_STACK;
    assert_int_equal(model_table_build(m, &q, t), 0);
    for (size_t i = 0; i < t->n; i++)
        if (t->rows[i].stack == leaf)
            return t->rows[i];
    fail_msg("no row of stack %llu", (unsigned long long)leaf);
    return t->rows[0];
}

static void assert_site_text(struct model *m, uint64_t leaf, const char *want)
{
    struct model_table t;
    struct model_row r = row_of(m, leaf, &t);
    if (!strstr(r.text, want))
        fail_msg("site '%s', expected '%s'", r.text, want);
    model_table_free(&t);
}

#define PY(id) (CULEAK_PYFRAME_TAG | (id))

static void test_threads_without_program_code(void **state)
{
    (void)state;
    const struct stk stacks[] = {
        /* NCCL's proxy thread: cudaMalloc, ncclProxy..., start_thread */
        {3, {B_CUDART + 0x100, B_NCCL + 0x200, B_LIBC + 0x300}},
        /* autograd's engine thread, no backward() known: the allocator, ATen's empty
         * helper, the node, the thread's start */
        {5, {B_C10 + 0x100, B_C10 + 0x180, empty_generic, apply, B_LIBC + 0x300}},
        /* only allocator frames recorded (the stack cut short): the outermost */
        {3, {B_C10 + 0x100, B_C10 + 0x180, empty_generic}},
    };
    uint64_t leaf[3];
    struct model *m = load(NULL, stacks, 3, leaf);
    assert_site_text(m, leaf[0], "libnccl.so.2+0x200");
    assert_site_text(m, leaf[1], "torch::autograd::generated::MmBackward0::apply");
    assert_site_text(m, leaf[2], "at::detail::empty_generic");
    /* the stack as shown marks the same frame as the site */
    struct model_frame f[16];
    struct stack_line l[16];
    size_t n = model_stack_frames(m, 0, leaf[1], f, 16);
    assert_int_equal(n, 5);
    assert_true(f[0].runtime && f[1].runtime && f[2].runtime);
    assert_false(f[3].runtime);
    size_t nl = stack_lines(f, n, 1, l), site = 99;
    for (size_t i = 0; i < nl; i++)
        if (l[i].site)
            site = l[i].frame;
    assert_int_equal(site, 3);
    model_free(m);

    /* --no-default-skips: nothing is looked through, the innermost frame is the site */
    struct model_options plain = {.no_default_skips = 1};
    m = load(&plain, stacks, 3, leaf);
    assert_site_text(m, leaf[1], "libc10_cuda.so+0x100");
    model_free(m);
}

/* A Python thread running only the framework's and the standard library's code (a
 * DataLoader's pin-memory thread): its innermost Python line is the site, not the
 * framework's native frame under it. */
static void test_python_thread_without_program_code(void **state)
{
    (void)state;
    const struct stk stacks[] = {
        /* the pinned-host allocator's cudaHostAlloc, the operation, the interpreter, the
         * pin-memory loop's frames, threading's, the thread's start */
        {7, {B_CUDART + 0x100, apply, B_PYLIB + 0x300, PY(4), PY(5), PY(6), B_LIBC + 0x300}},
    };
    uint64_t leaf[1];
    struct model *m = load(NULL, stacks, 1, leaf);
    assert_site_text(m, leaf[0], "pin_memory at " PIN_PY ":57");
    model_free(m);
}

static void test_numpy_on_cupys_path_is_looked_through(void **state)
{
    (void)state;
    const struct stk stacks[] = {
        /* a CuPy operator through NumPy's ufunc override: the pool's cuMemAlloc, the
         * pool, PyUFunc_CheckOverride, the interpreter, the user's line */
        {5, {B_CUDART + 0x100, B_CUPY + 0x200, B_NUMPY + 0x5e9, B_PYLIB + 0x300, PY(1)}},
    };
    uint64_t leaf[1];
    struct model *m = load(NULL, stacks, 1, leaf);
    assert_site_text(m, leaf[0], "<module> at " TRAIN ":7");
    model_free(m);
    /* an installed package that is the program's own: its native frame is the site */
    struct model_options mine = {.my_code = NUMPY_DIR};
    m = load(&mine, stacks, 1, leaf);
    assert_site_text(m, leaf[0], "_multiarray_umath.cpython-312-x86_64-linux-gnu.so+0x5e9");
    model_free(m);
}

static void test_backward_memory_at_the_backward_line(void **state)
{
    (void)state;
    const struct stk stacks[] = {
        /* made on autograd's thread: allocator, empty helper, node, marker, the caller's
         * Python frames (torch's Tensor.backward, the user's line) */
        {6, {B_C10 + 0x100, empty_generic, apply, PY(3), PY(2), PY(1)}},
        /* the same, its native frames cut before the node: no operation to name */
        {5, {B_C10 + 0x100, B_C10 + 0x180, PY(3), PY(2), PY(1)}},
    };
    uint64_t leaf[2];
    struct model *m = load(NULL, stacks, 2, leaf);
    struct model_table t;
    struct model_row r = row_of(m, leaf[0], &t);
    assert_true(r.autograd_backward);
    assert_string_equal(r.text, "<module> at " TRAIN ":7 (autograd backward), via "
                                "torch::autograd::generated::MmBackward0::apply (libtorch_cpu.so)");
    assert_string_equal(r.via, "torch::autograd::generated::MmBackward0::apply (libtorch_cpu.so)");
    model_table_free(&t);
    r = row_of(m, leaf[1], &t);
    assert_true(r.autograd_backward);
    assert_string_equal(r.text, "<module> at " TRAIN ":7 (autograd backward)");
    assert_null(r.via);
    model_table_free(&t);
    /* by site: one row for both, the line's */
    struct model_query q;
    model_query_init(&q);
    assert_int_equal(model_table_build(m, &q, &t), 0);
    assert_int_equal(t.n, 1);
    assert_true(t.rows[0].autograd_backward);
    model_table_free(&t);
    /* the marker is a line of its own in the stack, never folded, never the site */
    struct model_frame f[16];
    struct stack_line l[16];
    size_t n = model_stack_frames(m, 0, leaf[0], f, 16), nl = stack_lines(f, n, 1, l);
    int marker_line = 0;
    for (size_t i = 0; i < nl; i++) {
        char buf[1200];
        stack_line_text(&l[i], f, buf, sizeof buf);
        if (strstr(buf, "[autograd backward]")) {
            assert_int_equal(l[i].count, 0);
            assert_false(l[i].site);
            marker_line = 1;
        }
        if (l[i].site)
            assert_non_null(strstr(buf, TRAIN ":7"));
    }
    assert_true(marker_line);
    const char *op;
    assert_true(model_stack_backward(m, 0, leaf[0], &op));
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_threads_without_program_code),
        cmocka_unit_test(test_python_thread_without_program_code),
        cmocka_unit_test(test_numpy_on_cupys_path_is_looked_through),
        cmocka_unit_test(test_backward_memory_at_the_backward_line),
    };
    return cmocka_run_group_tests(tests, find_torch_cpu, NULL);
}
