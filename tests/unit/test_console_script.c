/* The console's -ex and -x commands (script.h): order, blank lines and # comments, each
 * command's place for its error, and a file that cannot be read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "../../src/console/script.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void test_lines_of_a_file(void **state)
{
    (void)state;
    struct script s = {0};
    const char text[] = "# breakpoints\n"
                        "\n"
                        "  break a.cu:12  \r\n"
                        "\t# indented comment\n"
                        "info breakpoints\n"
                        "sort live"; /* no newline at the end */
    assert_int_equal(script_add_command(&s, "break main"), 0);
    assert_int_equal(script_add_text(&s, "cmds", text, strlen(text)), 0);
    assert_int_equal(script_add_command(&s, "snapshot"), 0);
    assert_int_equal(s.n, 5);
    assert_string_equal(s.v[0].text, "break main");
    assert_string_equal(s.v[0].where, "-ex");
    assert_int_equal(s.v[0].source, 0);
    assert_string_equal(s.v[1].text, "break a.cu:12");
    assert_string_equal(s.v[1].where, "cmds:3");
    assert_int_equal(s.v[1].source, 1);
    assert_string_equal(s.v[2].text, "info breakpoints");
    assert_string_equal(s.v[2].where, "cmds:5");
    assert_string_equal(s.v[3].text, "sort live");
    assert_string_equal(s.v[3].where, "cmds:6");
    assert_int_equal(s.v[3].source, 1);
    assert_string_equal(s.v[4].text, "snapshot");
    assert_int_equal(s.v[4].source, 0);
    script_free(&s);
}

static void test_files_are_told_apart(void **state)
{
    (void)state;
    struct script s = {0};
    char path[] = "/tmp/culeak-script-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "break x.c:1\n", 12), 12);
    close(fd);
    char err[256];
    assert_int_equal(script_add_file(&s, path, err, sizeof err), 0);
    assert_int_equal(script_add_file(&s, path, err, sizeof err), 0);
    assert_int_equal(s.n, 2);
    assert_int_equal(s.v[0].source, 1);
    assert_int_equal(s.v[1].source, 2); /* an error in the first ends the first only */
    unlink(path);
    assert_int_equal(script_add_file(&s, path, err, sizeof err), -1);
    char want[300];
    snprintf(want, sizeof want, "%s: No such file or directory", path);
    assert_string_equal(err, want);
    assert_int_equal(s.n, 2);
    assert_int_equal(script_add_file(&s, "/", err, sizeof err), -1); /* a directory */
    assert_non_null(strstr(err, "Is a directory"));
    script_free(&s);
    assert_int_equal(s.n, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_of_a_file),
        cmocka_unit_test(test_files_are_told_apart),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
