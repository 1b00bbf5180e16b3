#!/usr/bin/env bash
# Breakpoints in place before a process has connected: the console's job starts with
# allocations at new stacks held until the console has said what to watch, so
#   1. culeak -ex 'break FILE:LINE' -- PROG pauses at PROG's very first allocation (and
#      -x FILE reads commands the same way; a bad command, or one that needs the job, is
#      reported and the next one runs);
#   2. a breakpoint set while one process runs pauses a process started later at its first
#      allocation, started by a shell or forked without exec;
#   3. with no breakpoint the job runs through: its first allocation waits for the console,
#      which releases it and turns the holding off (HOLD_NEW 0), so no other one waits (the
#      first does not either when the answer to HELLO came before it).
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

# The job: with a file argument, one allocation freed at once, then it waits for that
# file and exits (with "fork" after it, a child forked then goes on as without); without,
# its first allocation is the 3 MiB block at the line LEAK, then
# 1 MiB at another line is allocated and freed.
cat >"$T/job.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fn)();
int main(int argc, char **argv)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    fn init = (fn)dlsym(cuda, "cuInit"), get = (fn)dlsym(cuda, "cuDeviceGet"),
       retain = (fn)dlsym(cuda, "cuDevicePrimaryCtxRetain"), current = (fn)dlsym(cuda, "cuCtxSetCurrent"),
       alloc = (fn)dlsym(cuda, "cuMemAlloc_v2"), release = (fn)dlsym(cuda, "cuMemFree_v2");
    int dev;
    void *ctx;
    unsigned long long d;
    if (init(0) || get(&dev, 0) || retain(&ctx, dev) || current(ctx))
        return 1;
    if (argc > 1) {
        if (alloc(&d, (size_t)4096) || release(d))
            return 1;
        while (access(argv[1], F_OK) != 0)
            usleep(20000);
        if (argc > 2 && !strcmp(argv[2], "fork")) { /* a child forked now allocates (no exec) */
            pid_t child = fork();
            if (child == 0)
                argc = 1;
            else if (child < 0 || waitpid(child, NULL, 0) != child)
                return 1;
        }
        if (argc > 1) {
            puts("job: first process done");
            return 0;
        }
    }
    if (alloc(&d, (size_t)3 << 20)) /* LEAK */
        return 1;
    if (alloc(&d, (size_t)1 << 20) || release(d)) /* a second stack, new too */
        return 1;
    printf("job %d: leaked 3 MiB\n", (int)getpid());
    return 0;
}
C
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
LEAK=job.c:$(grep -n "LEAK" "$T/job.c" | cut -d: -f1)
BANNER="PAUSED in cuMemAlloc_v2(3.00 MiB) - breakpoint 1 (hit 1)"

# 1. -ex and -x before the job starts: the first allocation pauses; the bad command of
#    the file is reported with its line and ends the file, as gdb's source does
printf '# set up by the test\n\nbogus-command\nbreak never.c:1\n' >"$T/cmds"
start -ex bogus -x "$T/cmds" -ex continue -ex "'break $LEAK'" -- "$T/job"
wait_for "$BANNER"
screen | grep -qF "[culeak] -ex: unknown command 'bogus'" || fail "-ex bogus: no error in the output pane"
screen | grep -qF "[culeak] -ex: continue: the job has not started yet" || fail "-ex continue: no error"
screen | grep -qF "[culeak] $T/cmds:3: unknown command 'bogus-command'" || fail "-x: no error with FILE:LINE"
screen | grep -qF "never.c" && fail "-x: the command after the error in the file should not run"
type_expect "continue" "EXITED (status 0)"
screen | grep -qF "leaked 3 MiB" || fail "the job's output is missing after continue"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2. a breakpoint set while the first process runs catches the second one's first allocation
rm -f "$T/go"
start -- sh -c "'$T/job $T/go; $T/job'"
wait_for "1 proc (1 live)"
type_expect "break $LEAK" "breakpoint 1 at $LEAK"
touch "$T/go"
wait_for "$BANNER"
screen | grep -qF "first process done" || fail "the pause should be in the second process"
type_expect "continue" "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 2b. the same for a child forked (no exec) after the breakpoint was set
rm -f "$T/go"
start -- "$T/job" "$T/go" fork
wait_for "1 proc (1 live)"
type_expect "break $LEAK" "breakpoint 1 at $LEAK"
touch "$T/go"
wait_for "$BANNER"
wait_for "2 proc (2 live)"
type_expect "continue" "EXITED (status 0)"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"

# 3. no breakpoint: held at the start, then released; the job and a second one started in
#    the background run through (each leaks its 3 MiB)
start -- sh -c "'$T/job; $T/job & wait'"
wait_for "EXITED (status 0)"
wait_for "LEAK SUMMARY: 6291456 bytes leaked in 2 allocations"
screen | grep -qF "2 proc (0 live)" || fail "both processes should have run through"
type_expect "save $T/rec" "saved 2 recordings"
for rec in "$T/rec" "$T/rec.1"; do
    env LD_LIBRARY_PATH="$FAKE" "$B/culeak" dump "$rec" >"$T/dump" || fail "cannot dump $rec"
    [ "$(grep -c '"type":"alloc"' "$T/dump")" = 2 ] || fail "$rec: two allocations expected"
    # the first waits, unless the console's answer came before it (after HELLO, which the
    # process sends at its first CUDA call): no other one waits
    [ "$(grep -c '"held":true' "$T/dump")" -le 1 ] || fail "$rec: only the first allocation may have waited"
    ! grep -qF '"held":true' "$T/dump" || grep '"type":"alloc"' "$T/dump" | head -1 | grep -qF '"held":true' ||
        fail "$rec: an allocation after the first waited"
done
screen | grep -qF "PAUSED" && fail "nothing should pause without a breakpoint"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "ok: console_break_at_start"
