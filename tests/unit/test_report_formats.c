/* The report formats' table (report/formats.h): every format is found by its name, the
 * lists in the options' messages come from the table, each use a format claims has its
 * writer, and `export` picks a format by the file's extension. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "report/formats.h"

#include <string.h>

static const char *const names[] = {"text", "json", "folded", "suppressions", "html", "pprof", "torch-snapshot"};

static void test_each_found_by_name(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const struct report_format *f = report_format_find(names[i]);
        assert_non_null(f);
        assert_string_equal(f->name, names[i]);
        assert_non_null(f->write);
        assert_non_null(f->what);
    }
    assert_null(report_format_find("xml"));
    assert_null(report_format_find("jso"));
    assert_null(report_format_find(""));
    assert_null(report_format_find(NULL));
}

static void test_lists_in_words(void **state)
{
    (void)state;
    char buf[128];
    assert_string_equal(report_format_list(0, buf, sizeof buf),
                        "text, json, folded, suppressions, html, pprof or torch-snapshot");
    assert_string_equal(report_format_list(FORMAT_DIFF, buf, sizeof buf), "text, json, html or pprof");
    assert_string_equal(report_format_list(FORMAT_SUSPECTS, buf, sizeof buf), "text or json");
    assert_string_equal(report_format_list(FORMAT_BASELINE, buf, sizeof buf), "text, json or html");
    assert_string_equal(report_format_list(FORMAT_CHECK, buf, sizeof buf), "text or json");
    assert_string_equal(report_format_list(FORMAT_OTHER_SOURCES, buf, sizeof buf), "text, json, folded, html or pprof");
    assert_string_equal(report_format_list(FORMAT_EXPORT, buf, sizeof buf), "html");
    assert_string_equal(report_format_list(FORMAT_DIFF | FORMAT_SUSPECTS, buf, sizeof buf), "text or json");
    char small[8];
    report_format_list(0, small, sizeof small); /* cut, never overrun */
    assert_true(strlen(small) < sizeof small);
}

/* A row that claims a use has the writer for it: a table of formats cannot promise what
 * report and check would then call through a null pointer. */
static void test_each_use_has_its_writer(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const struct report_format *f = report_format_find(names[i]);
        if (f->use & FORMAT_SUSPECTS)
            assert_non_null(f->suspects);
        else
            assert_null(f->suspects);
        if (f->use & FORMAT_BASELINE)
            assert_non_null(f->baseline);
        else
            assert_null(f->baseline);
    }
    /* what report and check did before the table: text and json for --suspects and check,
     * folded for --peak, suppressions for leaks only */
    assert_true(report_format_find("folded")->use & FORMAT_OTHER_SOURCES);
    assert_false(report_format_find("suppressions")->use & FORMAT_OTHER_SOURCES);
    assert_false(report_format_find("folded")->use & FORMAT_DIFF);
    assert_false(report_format_find("html")->use & FORMAT_CHECK);
    char buf[64]; /* bytes for a program: report refuses to write them to a terminal */
    assert_string_equal(report_format_list(FORMAT_BINARY, buf, sizeof buf), "pprof or torch-snapshot");
}

static void test_export_by_extension(void **state)
{
    (void)state;
    assert_ptr_equal(report_format_of_path("out/page.html"), report_format_find("html"));
    assert_ptr_equal(report_format_of_path("page.html"), report_format_find("html"));
    assert_null(report_format_of_path("rows.json")); /* the table on screen, not a report */
    assert_null(report_format_of_path("rows.csv"));
    assert_null(report_format_of_path("html"));
    assert_null(report_format_of_path("dir.html/rows"));
    assert_null(report_format_of_path("page.htm"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_found_by_name),
        cmocka_unit_test(test_lists_in_words),
        cmocka_unit_test(test_each_use_has_its_writer),
        cmocka_unit_test(test_export_by_extension),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
