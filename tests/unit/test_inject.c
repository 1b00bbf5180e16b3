/* The injector's rules that need no process to trace: dlopen found in this very process
 * from its maps and libc's ELF tables (compared with dlsym's answer), the maps and
 * /proc/PID/task/TID/syscall texts read, the thread chosen, the call's stack frame, and
 * the decision to restart by hand a system call that the stop ended with EINTR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "launch/inject_arch.h"
#include "launch/inject_thread.h"
#if defined(__x86_64__)
#include "launch/inject_x86_64.h"
#endif
#include "launch/remote_symbols.h"

static void test_finds_dlopen_in_this_process(void **s)
{
    struct culeak_remote_dl dl;
    char err[512] = "";
    assert_int_equal(culeak_remote_dl(getpid(), &dl, err, sizeof err), 0);
    assert_ptr_equal((void *)(uintptr_t)dl.dlopen, dlsym(RTLD_DEFAULT, "dlopen"));
    assert_ptr_equal((void *)(uintptr_t)dl.dlsym, dlsym(RTLD_DEFAULT, "dlsym"));
    assert_ptr_equal((void *)(uintptr_t)dl.dlerror, dlsym(RTLD_DEFAULT, "dlerror"));
    assert_false(dl.dlopen_private);
}

static void test_maps_module_and_its_base(void **s)
{
    const char *text = "55d0c0000000-55d0c0001000 r--p 00000000 08:01 42 /usr/bin/python3\n"
                       "7f0000000000-7f0000026000 r--p 00000000 08:01 7 /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
                       "7f1000000000-7f1000028000 r--p 00000000 08:01 9 /lib/x86_64-linux-gnu/libc-2.31.so\n"
                       "7f1000028000-7f100019d000 r-xp 00028000 08:01 9 /lib/x86_64-linux-gnu/libc-2.31.so\n"
                       "7f100019d000-7f10001f5000 r--p 0019d000 08:01 9 /lib/x86_64-linux-gnu/libc-2.31.so\n"
                       "7f2000000000-7f2000001000 r--p 00000000 08:01 9 /lib/x86_64-linux-gnu/libcrypt.so.1\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    struct culeak_remote_module m;
    assert_int_equal(culeak_maps_module(f, "libc.so.6", "libc", &m), 1);
    fclose(f);
    assert_string_equal(m.path, "/lib/x86_64-linux-gnu/libc-2.31.so");
    assert_int_equal(m.start, 0x7f1000000000ull);
    assert_int_equal(m.lo, 0x7f1000000000ull);
    assert_int_equal(m.hi, 0x7f10001f5000ull);
    f = fmemopen((void *)text, strlen(text), "r");
    assert_int_equal(culeak_maps_module(f, "libdl.so.2", "libdl", &m), 0);
    fclose(f);
}

/* a library mapped from its second mapping on (its offset-0 page first further down) */
static void test_maps_base_is_the_offset_zero_mapping(void **s)
{
    const char *text = "7f1000028000-7f100019d000 r-xp 00028000 08:01 9 /usr/lib/libc.so.6\n"
                       "7f1000000000-7f1000028000 r--p 00000000 08:01 9 /usr/lib/libc.so.6\n";
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    struct culeak_remote_module m;
    assert_int_equal(culeak_maps_module(f, "libc.so.6", "libc", &m), 1);
    fclose(f);
    assert_int_equal(m.start, 0x7f1000000000ull);
}

static void test_statically_linked_is_refused(void **s)
{
    /* this test's own pid 1 may be anything: a made-up pid with no maps says why */
    struct culeak_remote_dl dl;
    char err[512] = "";
    assert_int_equal(culeak_remote_dl(2147483000, &dl, err, sizeof err), -1);
    assert_non_null(strstr(err, "statically linked"));
}

static void test_parse_syscall(void **s)
{
    struct culeak_thread_info t;
    assert_int_equal(culeak_parse_syscall("running\n", &t), 0);
    assert_false(t.in_syscall);
    assert_int_equal(culeak_parse_syscall("-1 0x7ffc1000 0x7f00123\n", &t), 0);
    assert_false(t.in_syscall);
    assert_int_equal(t.sp, 0x7ffc1000ull);
    assert_int_equal(culeak_parse_syscall("7 0x7ffd0 0x1 0x3e8 0x0 0x0 0x0 0x7ffc2000 0x7f00456\n", &t), 0);
    assert_true(t.in_syscall);
    assert_int_equal(t.nr, 7);
    assert_int_equal(t.args[0], 0x7ffd0ull);
    assert_int_equal(t.args[2], 0x3e8ull);
    assert_int_equal(t.sp, 0x7ffc2000ull);
    assert_int_equal(culeak_parse_syscall("7 0x1 0x2\n", &t), -1);
    assert_int_equal(culeak_parse_syscall("", &t), -1);
}

static void test_stack_room(void **s)
{
    const char *text = "7f0000000000-7f0000800000 rw-p 00000000 00:00 0 \n"
                       "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0 [stack]\n";
    struct {
        uint64_t sp;
        int room;
    } cases[] = {
        {0x7f0000000000ull + CULEAK_STACK_ROOM, 1},     /* just enough under sp */
        {0x7f0000000000ull + CULEAK_STACK_ROOM - 8, 0}, /* not quite */
        {0x7f00007ff000ull, 1},
        {0x7ffc00001000ull, 1}, /* the main stack grows */
        {0x1000ull, 0},         /* in no mapping */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        FILE *f = fmemopen((void *)text, strlen(text), "r");
        assert_int_equal(culeak_stack_room(f, cases[i].sp), cases[i].room);
        fclose(f);
    }
}

#if defined(__x86_64__) /* the choice's test uses x86-64's system calls */
static struct culeak_thread_info thread(pid_t tid, int in_syscall, long nr, int stack_ok)
{
    struct culeak_thread_info t = {.tid = tid, .in_syscall = in_syscall, .nr = nr, .stack_ok = stack_ok};
    return t;
}

static void test_choose_thread(void **s)
{
    struct culeak_thread_info t[4];
    /* the main thread blocked with room: it */
    t[0] = thread(101, 1, SYS_futex, 1), t[1] = thread(100, 1, SYS_read, 1);
    assert_int_equal(culeak_choose_thread(100, t, 2), 1);
    /* the main thread running: the first blocked thread with room */
    t[0] = thread(100, 0, -1, 1), t[1] = thread(101, 1, SYS_read, 0), t[2] = thread(102, 1, SYS_poll, 1);
    assert_int_equal(culeak_choose_thread(100, t, 3), 2);
    /* a thread in ppoll with a signal mask is passed over; one without a mask is not */
    t[0] = thread(100, 0, -1, 1), t[1] = thread(101, 1, SYS_ppoll, 1), t[2] = thread(102, 1, SYS_ppoll, 1);
    t[1].args[3] = 0x7ffd0000;
    assert_int_equal(culeak_choose_thread(100, t, 3), 2);
    /* none blocked: the main thread, wherever it is */
    t[0] = thread(101, 0, -1, 1), t[1] = thread(100, 0, -1, 1);
    assert_int_equal(culeak_choose_thread(100, t, 2), 1);
    /* no main thread and none usable (it ended): none */
    t[0] = thread(101, 0, -1, 1);
    assert_int_equal(culeak_choose_thread(100, t, 1), -1);
}
#endif

#if defined(__x86_64__) /* the x86-64 half's rules */
static void test_sigmask_swapping_calls(void **s)
{
    uint64_t none[6] = {0}, mask3[6] = {0, 0, 0, 1, 0, 0}, mask4[6] = {0, 0, 0, 0, 1, 0}, mask5[6] = {0, 0, 0, 0, 0, 1};
    assert_true(culeak_arch_swaps_sigmask(SYS_rt_sigsuspend, none));
    assert_true(culeak_arch_swaps_sigmask(SYS_ppoll, mask3));
    assert_false(culeak_arch_swaps_sigmask(SYS_ppoll, none));
    assert_true(culeak_arch_swaps_sigmask(SYS_pselect6, mask5));
    assert_true(culeak_arch_swaps_sigmask(SYS_epoll_pwait, mask4));
    assert_false(culeak_arch_swaps_sigmask(SYS_epoll_pwait, mask3));
    assert_false(culeak_arch_swaps_sigmask(SYS_read, mask5));
}

static void test_call_frame(void **s)
{
    for (uint64_t sp = 0x7ffc00010000ull; sp < 0x7ffc00010000ull + 64; sp += 8)
        for (size_t n = 0; n < 40; n += 7) {
            struct culeak_x86_frame f;
            culeak_x86_frame(sp, n, &f);
            assert_int_equal(f.strings % 16, 0);
            assert_true(f.strings + n <= sp - CULEAK_X86_RED_ZONE); /* the red zone untouched */
            assert_int_equal((f.entry_sp + 8) % 16, 0);              /* the ABI's alignment at entry */
            assert_true(f.entry_sp + 8 <= f.strings);                /* the return address under the strings */
        }
}

static void test_restart_rule(void **s)
{
    const uint64_t after_syscall = 0x7f0000001234ull;
    uint64_t rax = (uint64_t)-EINTR, rip = after_syscall;
    /* epoll_wait ended by the stop, no signal pending: run again */
    assert_int_equal(culeak_x86_restart_rule(&rax, SYS_epoll_wait, &rip, 0), 1);
    assert_int_equal(rip, after_syscall - 2);
    assert_int_equal(rax, SYS_epoll_wait);
    /* a signal is pending: the EINTR is the program's */
    rax = (uint64_t)-EINTR, rip = after_syscall;
    assert_int_equal(culeak_x86_restart_rule(&rax, SYS_epoll_wait, &rip, 1), 0);
    assert_int_equal(rip, after_syscall);
    assert_int_equal(rax, (uint64_t)-EINTR);
    /* the kernel restarts ERESTARTSYS (512) itself; close's EINTR is never redone; no call */
    rax = (uint64_t)-512;
    assert_int_equal(culeak_x86_restart_rule(&rax, SYS_epoll_wait, &rip, 0), 0);
    rax = (uint64_t)-EINTR;
    assert_int_equal(culeak_x86_restart_rule(&rax, SYS_close, &rip, 0), 0);
    assert_int_equal(culeak_x86_restart_rule(&rax, -1, &rip, 0), 0);
    assert_int_equal(rip, after_syscall);
    assert_int_equal(rax, (uint64_t)-EINTR);
}

#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_finds_dlopen_in_this_process),
        cmocka_unit_test(test_maps_module_and_its_base),
        cmocka_unit_test(test_maps_base_is_the_offset_zero_mapping),
        cmocka_unit_test(test_statically_linked_is_refused),
        cmocka_unit_test(test_parse_syscall),
        cmocka_unit_test(test_stack_room),
#if defined(__x86_64__)
        cmocka_unit_test(test_choose_thread),
        cmocka_unit_test(test_sigmask_swapping_calls),
        cmocka_unit_test(test_call_frame),
        cmocka_unit_test(test_restart_rule),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
