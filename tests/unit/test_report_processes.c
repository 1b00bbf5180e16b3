/* A text report over many processes names each one ("process PID", with its host when the
 * processes ran on several): the names say the host exactly when there are several, and
 * cost no comparison of every process's host per name (the test counts strcmp calls). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "report/report.h"
#include "stream_builder.h"
#include "model_fixture.h"

static unsigned long compares;

/* Every strcmp of the program, counted, then done by libc's. */
int strcmp(const char *a, const char *b)
{
    static int (*real)(const char *, const char *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "strcmp");
    compares++;
    return real(a, b);
}

#define PROCS 2000

/* PROCS processes, each leaking once; the last one on host other when `two_hosts`. */
static struct model *load_processes(int two_hosts)
{
    struct model *m = new_model();
    for (int i = 0; i < PROCS; i++) {
        struct sb *b = sb_new();
        sb_u(b, CULEAK_FORMAT_VERSION);
        sb_u(b, 1000 + (uint64_t)i);
        sb_u(b, 1);
        sb_u(b, 1000);
        sb_u(b, 1000000);
        sb_s(b, two_hosts && i == PROCS - 1 ? "other" : "node");
        sb_s(b, "/bin/app");
        sb_u(b, 1);
        sb_s(b, "/bin/app");
        sb_u(b, 0);
        sb_u(b, 64);
        sb_u(b, 1);
        sb_end(b, CULEAK_REC_HELLO);
        sb_module(b, "/bin/app", 0x400000, 0, 0x10000);
        sb_frame(b, 1, 0, 0x401000);
        sb_alloc(b, 1, 1, 0x1000, 64);
        sb_exit(b, 2);
        assert_int_equal(load(m, b), 0);
        sb_free(b);
    }
    return m;
}

static char *report_of(struct model *m, size_t *len)
{
    struct report_options o;
    report_options_init(&o);
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    assert_non_null(f);
    compares = 0;
    assert_int_equal(report_text(f, m, &o, NULL), 0);
    fclose(f);
    return text;
}

static void test_names_without_comparing_every_host(void **state)
{
    struct model *m = load_processes(0);
    size_t len;
    char *text = report_of(m, &len);
    if (compares >= 20ul * PROCS)
        fail_msg("%lu string comparisons for a report over %d processes", compares, PROCS);
    assert_non_null(strstr(text, "==== process 1000: "));
    assert_null(strstr(text, " on node: 64 bytes"));
    free(text);
    model_free(m);
}

static void test_names_say_the_host_when_there_are_several(void **state)
{
    struct model *m = load_processes(1);
    size_t len;
    char *text = report_of(m, &len);
    assert_non_null(strstr(text, "==== process 1000 on node: "));
    char last[64];
    snprintf(last, sizeof last, "==== process %d on other: ", 1000 + PROCS - 1);
    assert_non_null(strstr(text, last));
    free(text);
    model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_without_comparing_every_host),
        cmocka_unit_test(test_names_say_the_host_when_there_are_several),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
