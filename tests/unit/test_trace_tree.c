/* The shim's trace tree (src/shim/trace_tree.c, compiled in here): every stack interned
 * comes back as a leaf whose path to the root is that stack; each (parent, ip) is one
 * node, sent once, ids dense from 1 in the order sent; a stack seen before makes no new
 * node, whichever way it is found (the thread's previous stack, the whole-stack table,
 * frame by frame), also across the growth of every table. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/shim/trace_tree.c"
#include "../../src/shim/thread_block.c"

struct sent {
    uint32_t n, cap;
    uint64_t *ip;
    uint32_t *parent;
};

static void on_frame(void *arg, uint32_t id, uint32_t parent, uintptr_t ip)
{
    struct sent *s = arg;
    assert_int_equal(id, s->n + 1); /* dense, in order */
    assert_true(parent < id);
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 1024;
        s->ip = realloc(s->ip, s->cap * sizeof *s->ip);
        s->parent = realloc(s->parent, s->cap * sizeof *s->parent);
        assert_non_null(s->ip);
        assert_non_null(s->parent);
    }
    s->ip[s->n] = ip;
    s->parent[s->n] = parent;
    s->n++;
}

/* The stack a leaf stands for, from what was sent, equals ips[0..n). */
static void check_path(const struct sent *s, uint32_t leaf, const uintptr_t *ips, int n)
{
    uint32_t id = leaf;
    for (int k = 0; k < n; k++) {
        assert_true(id >= 1 && id <= s->n);
        assert_int_equal(s->ip[id - 1], ips[k]);
        id = s->parent[id - 1];
    }
    assert_int_equal(id, 0);
}

/* Stack number i of a family: `diverge` frames chosen by i's bits near the root, the
 * rest shared, leaf first in ips. */
static int make_stack(unsigned i, int depth, int diverge, uintptr_t *ips)
{
    for (int k = 0; k < depth; k++) {
        int from_root = depth - 1 - k;
        uintptr_t ip = 0x400000 + (uintptr_t)from_root * 16;
        if (from_root < diverge)
            ip += (i >> from_root & 1) ? 8 : 0;
        ips[k] = ip;
    }
    return depth;
}

static void intern_all(struct culeak_tree *t, struct sent *s, unsigned count, int depth, int diverge, int rounds,
                       uint32_t *leaves)
{
    uintptr_t ips[CULEAK_MAX_DEPTH];
    for (int r = 0; r < rounds; r++) {
        uint32_t before = s->n;
        for (unsigned i = 0; i < count; i++) {
            int n = make_stack(i, depth, diverge, ips);
            int fresh = -1;
            uint32_t leaf = culeak_tree_intern(t, ips, n, 0, on_frame, s, &fresh);
            check_path(s, leaf, ips, n);
            if (r == 0)
                leaves[i] = leaf;
            else
                assert_int_equal(leaf, leaves[i]); /* the same stack, the same leaf */
            assert_int_equal(fresh, r == 0 && leaf > before);
            /* a bare free in between keeps the thread's previous stack */
            assert_int_equal(culeak_tree_intern(t, ips, 0, 0, on_frame, s, &fresh), 0);
            assert_int_equal(fresh, 0);
        }
        if (r > 0)
            assert_int_equal(s->n, before); /* nothing new the second time */
    }
}

static void test_many_stacks_differing_near_the_root(void **state)
{
    (void)state;
    struct culeak_tree *t = culeak_tree_new();
    struct sent s = {0};
    enum { COUNT = 20000, DEPTH = 24, DIVERGE = 15 };
    uint32_t *leaves = calloc(COUNT, sizeof *leaves);
    assert_non_null(t);
    assert_non_null(leaves);
    intern_all(t, &s, COUNT, DEPTH, DIVERGE, 3, leaves);
    /* (parent, ip) pairs are unique among the nodes sent: each is found as itself */
    uint64_t *h = calloc(s.n + 1, sizeof *h);
    assert_non_null(h);
    for (uint32_t id = 1; id <= s.n; id++) {
        uint32_t parent = s.parent[id - 1];
        h[id] = path_hash(parent ? h[parent] : ROOT_HASH, s.ip[id - 1]);
        assert_int_equal(find(t, h[id], parent, s.ip[id - 1]), id);
    }
    free(h);
    tree_free(t);
    free(leaves);
    free(s.ip);
    free(s.parent);
}

static void test_prefixes_and_extensions(void **state)
{
    (void)state;
    struct culeak_tree *t = culeak_tree_new();
    struct sent s = {0};
    assert_non_null(t);
    uintptr_t a[] = {5, 4, 3, 2, 1}, b[] = {3, 2, 1}, c[] = {9, 3, 2, 1}, d[] = {4, 3, 2, 1};
    int fresh;
    uint32_t la = culeak_tree_intern(t, a, 5, 0, on_frame, &s, &fresh);
    assert_int_equal(s.n, 5);
    uint32_t lb = culeak_tree_intern(t, b, 3, 0, on_frame, &s, &fresh); /* a part of the previous */
    assert_int_equal(s.n, 5);
    assert_int_equal(fresh, 0);
    check_path(&s, lb, b, 3);
    uint32_t lc = culeak_tree_intern(t, c, 4, 0, on_frame, &s, &fresh); /* one new node */
    assert_int_equal(s.n, 6);
    assert_int_equal(fresh, 1);
    check_path(&s, lc, c, 4);
    uint32_t ld = culeak_tree_intern(t, d, 4, 0, on_frame, &s, &fresh); /* inside a, found frame by frame */
    assert_int_equal(s.n, 6);
    assert_int_equal(fresh, 0);
    check_path(&s, ld, d, 4);
    assert_int_equal(culeak_tree_intern(t, a, 5, 0, on_frame, &s, &fresh), la);
    assert_int_equal(culeak_tree_intern(t, c, 4, 0, on_frame, &s, &fresh), lc);
    assert_int_equal(s.n, 6);
    tree_free(t);
    free(s.ip);
    free(s.parent);
}

/* A stack found whole in the table reads none of its nodes: the stacks after it that
 * share its frames from the root are found, or made under the right parents. */
static void test_after_a_whole_stack(void **state)
{
    (void)state;
    struct culeak_tree *t = culeak_tree_new();
    struct sent s = {0};
    assert_non_null(t);
    uintptr_t a[] = {6, 5, 4, 3, 2, 1}, x[] = {6, 5, 4, 3, 2, 99}, a2[] = {7, 5, 4, 3, 2, 1}, p[] = {3, 2, 1};
    int fresh;
    uint32_t la = culeak_tree_intern(t, a, 6, 0, on_frame, &s, &fresh);
    culeak_tree_intern(t, x, 6, 0, on_frame, &s, &fresh);
    assert_int_equal(s.n, 12);
    assert_int_equal(culeak_tree_intern(t, a, 6, 0, on_frame, &s, &fresh), la); /* whole */
    assert_int_equal(culeak_tree_intern(t, a, 6, 0, on_frame, &s, &fresh), la); /* the same again */
    uint32_t l2 = culeak_tree_intern(t, a2, 6, 0, on_frame, &s, &fresh);
    assert_int_equal(s.n, 13);
    assert_int_equal(fresh, 1);
    check_path(&s, l2, a2, 6);
    assert_int_equal(s.parent[l2 - 1], s.parent[la - 1]);
    assert_int_equal(culeak_tree_intern(t, a, 6, 0, on_frame, &s, &fresh), la);
    uint32_t lp = culeak_tree_intern(t, p, 3, 0, on_frame, &s, &fresh); /* a part of a, from the root */
    assert_int_equal(s.n, 13);
    check_path(&s, lp, p, 3);
    tree_free(t);
    free(s.ip);
    free(s.parent);
}

/* A tag from the unwinder stands for the stack it came with: the thread's last stack
 * interned under the same tag is taken again without reading the frames; any other tag,
 * or none, reads them. */
static void test_tags(void **state)
{
    (void)state;
    struct culeak_tree *t = culeak_tree_new();
    struct sent s = {0};
    assert_non_null(t);
    uintptr_t a[] = {5, 4, 3, 2, 1}, b[] = {8, 4, 3, 2, 1}, junk[] = {0, 0, 0, 0, 0};
    int fresh;
    uint32_t la = culeak_tree_intern(t, a, 5, 7, on_frame, &s, &fresh);
    assert_int_equal(culeak_tree_intern(t, junk, 5, 7, on_frame, &s, &fresh), la); /* frames not read */
    assert_int_equal(s.n, 5);
    uint32_t lb = culeak_tree_intern(t, b, 5, 8, on_frame, &s, &fresh); /* another tag: read */
    check_path(&s, lb, b, 5);
    assert_int_equal(s.n, 6);
    /* only the last stack is kept: tag 7 is no longer it, and the frames are read */
    assert_int_equal(culeak_tree_intern(t, a, 5, 7, on_frame, &s, &fresh), la);
    assert_int_equal(culeak_tree_intern(t, b, 5, 0, on_frame, &s, &fresh), lb); /* no tag */
    assert_int_equal(culeak_tree_intern(t, a, 5, 0, on_frame, &s, &fresh), la); /* nor one kept */
    assert_int_equal(culeak_tree_intern(t, a, 5, 9, on_frame, &s, &fresh), la);
    uint32_t lb4 = culeak_tree_intern(t, b + 1, 4, 9, on_frame, &s, &fresh); /* another depth */
    check_path(&s, lb4, b + 1, 4);
    assert_int_equal(s.n, 6);
    tree_free(t);
    free(s.ip);
    free(s.parent);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_stacks_differing_near_the_root),
        cmocka_unit_test(test_prefixes_and_extensions),
        cmocka_unit_test(test_after_a_whole_stack),
        cmocka_unit_test(test_tags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
