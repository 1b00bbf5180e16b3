/* A culeak killed with SIGKILL leaves its hub's private directory and socket behind
 * (ring_hub.c): the next hub sweeps those of this user whose socket nobody listens on,
 * (and a console's empty stderr.log), and leaves a live hub's, a hub's being made (less
 * than a minute old), one holding anything else and anything not a hub's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#include "launch/ring_hub.h"

static char base[256];

/* base/NAME (0700), its time an hour back unless fresh; with a socket "ring" bound in it
 * (listening or not: the descriptor is returned, -1 when none). */
static int hub_dir(const char *name, int with_socket, int listening, int fresh)
{
    char dir[512], sock[600];
    snprintf(dir, sizeof dir, "%s/%s", base, name);
    assert_int_equal(mkdir(dir, 0700), 0);
    int fd = -1;
    if (with_socket) {
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(sock, sizeof sock, "%s/ring", dir);
        assert_true(strlen(sock) < sizeof a.sun_path);
        memcpy(a.sun_path, sock, strlen(sock) + 1);
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        assert_true(fd >= 0);
        assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
        if (listening)
            assert_int_equal(listen(fd, 1), 0);
        else {
            close(fd); /* as a killed culeak's: bound, nobody there */
            fd = -1;
        }
    }
    if (!fresh) {
        struct utimbuf old = {time(NULL) - 3600, time(NULL) - 3600};
        assert_int_equal(utime(dir, &old), 0);
    }
    return fd;
}

static int exists(const char *name)
{
    char p[512];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", base, name);
    return lstat(p, &st) == 0;
}

static void test_sweep(void **state)
{
    (void)state;
    snprintf(base, sizeof base, "/tmp/test_hub_sweep.XXXXXX");
    assert_non_null(mkdtemp(base));
    hub_dir("culeak-dead01", 1, 0, 0);
    hub_dir("culeak-empty1", 0, 0, 0); /* killed between its directory and its socket */
    int live = hub_dir("culeak-live01", 1, 1, 0);
    hub_dir("culeak-young1", 1, 0, 1);
    hub_dir("culeak-other1", 1, 0, 0);
    char other[512];
    snprintf(other, sizeof other, "%s/culeak-other1/keep", base);
    FILE *f = fopen(other, "w");
    assert_non_null(f);
    fclose(f);
    struct utimbuf old = {time(NULL) - 3600, time(NULL) - 3600};
    snprintf(other, sizeof other, "%s/culeak-other1", base);
    utime(other, &old);
    hub_dir("notculeak-ab1", 1, 0, 0);
    hub_dir("culeak-cons01", 1, 0, 0); /* a killed console's: its stderr.log empty */
    hub_dir("culeak-cons02", 1, 0, 0); /* and one that said something */
    static const char *const logs[] = {"culeak-cons01", "culeak-cons02"};
    for (int i = 0; i < 2; i++) {
        char log[512];
        snprintf(log, sizeof log, "%s/%s/stderr.log", base, logs[i]);
        FILE *lf = fopen(log, "w");
        assert_non_null(lf);
        if (i == 1)
            fputs("culeak: something\n", lf);
        fclose(lf);
        snprintf(log, sizeof log, "%s/%s", base, logs[i]);
        utime(log, &old);
    }

    culeak_hub_sweep(base);
    assert_false(exists("culeak-dead01"));
    assert_false(exists("culeak-empty1"));
    assert_true(exists("culeak-live01/ring"));
    assert_true(exists("culeak-young1/ring"));
    assert_true(exists("culeak-other1/keep"));
    assert_true(exists("notculeak-ab1/ring"));
    assert_false(exists("culeak-cons01"));
    assert_true(exists("culeak-cons02/stderr.log"));
    close(live);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
