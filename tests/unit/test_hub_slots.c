/* The hub's slots (src/launch/ring_hub.c): a ring's address stays the same however many
 * rings come after it (a reader keeps it); the 4,096 rings are those held at once: past
 * them a process is refused by pid and why, and a ring given back frees its slot for the
 * next; rings are taken in the order they came. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/ring.h"
#include "launch/ring_hub.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define HELD 4096

/* One ring of this process handed over to the hub at sock (as a forked child's shim
 * does); the hub then has it, or has refused it. */
static void hand_over(struct culeak_hub *h, const char *sock)
{
    struct culeak_ring r;
    int fd;
    assert_int_equal(culeak_ring_create(4096, &fd, &r), 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, sock, strlen(sock) + 1);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(s >= 0);
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(culeak_ring_send_fd(s, fd), 0);
    close(s);
    close(fd);
    culeak_ring_unmap(&r);
    culeak_hub_service(h);
}

/* A process that connects and does not send its ring (kept off its processor on a loaded
 * machine, or stopped) is named once its time is up, never dropped without a word; one
 * that connects and closes at once (another culeak looking whether this hub lives) is
 * no process of the job. */
static void test_handover_late(void **state)
{
    (void)state;
    char err[300];
    struct culeak_hub *h = culeak_hub_new(0, err, sizeof err);
    assert_non_null(h);
    culeak_hub_started(h);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, culeak_hub_socket(h), strlen(culeak_hub_socket(h)) + 1);
    int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(probe, (struct sockaddr *)&a, sizeof a), 0);
    close(probe);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(s, (struct sockaddr *)&a, sizeof a), 0);
    culeak_hub_service(h);
    long pid;
    char why[160];
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 0);
    for (int i = 0; i < 300 && culeak_hub_pending(h); i++) { /* its 2 s, and more */
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        culeak_hub_service(h);
    }
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 1);
    assert_int_equal(pid, (long)getpid());
    assert_non_null(strstr(why, "did not come"));
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 0);
    assert_int_equal(culeak_hub_refused(h), 1);
    close(s);
    culeak_hub_free(h);
}

static void test_slots(void **state)
{
    (void)state;
    char err[300];
    struct culeak_hub *h = culeak_hub_new(0, err, sizeof err);
    assert_non_null(h);
    culeak_hub_started(h);
    const char *sock = culeak_hub_socket(h);
    /* the launched program's ring (slot 0) is not taken until claimed: none here */
    hand_over(h, sock);
    long first = culeak_hub_take(h);
    assert_int_equal(first, 1);
    struct culeak_ring *kept = culeak_hub_ring(h, (size_t)first);
    for (int i = 1; i < HELD - 1; i++) /* the slot-0 ring and the first count: 4,096 held */
        hand_over(h, sock);
    assert_ptr_equal(culeak_hub_ring(h, (size_t)first), kept); /* it moved: a reader's pointer would dangle */
    assert_int_equal(culeak_hub_pid(h, (size_t)first), (long)getpid());
    long pid;
    char why[160];
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 0);
    assert_int_equal(culeak_hub_refused(h), 0);

    hand_over(h, sock); /* one past the rings held at once */
    assert_int_equal(culeak_hub_refused(h), 1);
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 1);
    assert_int_equal(pid, (long)getpid());
    assert_non_null(strstr(why, "4096"));
    assert_int_equal(culeak_hub_refusal(h, &pid, why, sizeof why), 0); /* told once */

    /* in the order they came */
    long second = culeak_hub_take(h);
    assert_int_equal(second, 2);
    /* a ring given back: its slot goes to the next, which is taken after those before it */
    culeak_hub_release(h, (size_t)first);
    assert_null(culeak_hub_ring(h, (size_t)first));
    assert_int_equal(culeak_hub_pid(h, (size_t)first), 0);
    hand_over(h, sock);
    assert_int_equal(culeak_hub_refused(h), 1);
    assert_non_null(culeak_hub_ring(h, (size_t)first));
    size_t slots = culeak_hub_count(h);
    long last = -1, taken = 0, i;
    while ((i = culeak_hub_take(h)) >= 0) {
        last = i;
        taken++;
    }
    assert_int_equal(taken, HELD - 2); /* all but the unclaimed slot 0 and the second */
    assert_int_equal(last, first);     /* the newest, in the oldest's slot */
    assert_int_equal(culeak_hub_count(h), slots);
    culeak_hub_free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slots),
        cmocka_unit_test(test_handover_late),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
