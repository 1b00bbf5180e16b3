#!/usr/bin/env python3
"""A debugger for the attach tests (CULEAK_GDB): runs gdb on culeak's commands, passing
them on line by line, and acts when culeak begins the step named in the environment:
  KILL_AT=STEP         kills gdb and itself with SIGKILL (an injector killed at that step)
  TARGET_EXIT_AT=STEP  kills the process being attached to (it ends during the attach)
  CULEAK_DIES_AT=STEP  kills culeak (its parent) with SIGKILL; gdb then reads the rest
                       of what culeak sent, and the end of its input
  STOP_AT=STEP         stops the process being attached to (SIGSTOP), then kills gdb and
                       itself: a debugger dead with its tracee left in a stop
  ATTACH_ELSEWHERE=PID has gdb attach to PID instead (no such process: gdb says why)
  BREAK_DLOPEN=1       has gdb call a function that does not exist instead of dlopen: its
                       first error names it, the later ones follow from it
  INTRUDE=1            connects to culeak's socket itself before gdb starts culeak in the
                       process, and sends some bytes: another process than the one attached
Steps: attach, dlopen, start, detach. The gdb it runs: $REAL_GDB (the tests hide gdb from
PATH), else gdb."""
import os
import re
import signal
import socket
import subprocess
import sys
import time

kill_at = os.environ.get("KILL_AT")
culeak_dies_at = os.environ.get("CULEAK_DIES_AT")
culeak = os.getppid()
target_exit_at = os.environ.get("TARGET_EXIT_AT")
stop_at = os.environ.get("STOP_AT")
attach_elsewhere = os.environ.get("ATTACH_ELSEWHERE")
intrude = os.environ.get("INTRUDE") == "1"
break_dlopen = os.environ.get("BREAK_DLOPEN") == "1"
gdb = subprocess.Popen([os.environ.get("REAL_GDB") or "gdb"] + sys.argv[1:], stdin=subprocess.PIPE)
target = None
while True:
    line = sys.stdin.buffer.readline()
    if not line:
        break
    m = re.match(rb"attach (\d+)", line)
    if m:
        target = int(m.group(1))
        if attach_elsewhere:
            line = b"attach %s\n" % attach_elsewhere.encode()
    if break_dlopen:
        line = line.replace(b") dlopen)(", b") culeak_no_such_function)(")
    m = re.search(rb'culeak_f\)\("([^"]+)"\)', line)
    if m and intrude:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(m.group(1).decode().removeprefix("ring:"))
        s.sendall(b"not the attached process")
        s.close()
    m = re.match(rb"echo CULEAK-BEGIN (\w+)", line)
    if m and kill_at and m.group(1).decode() == kill_at:
        os.kill(gdb.pid, signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    if m and culeak_dies_at and m.group(1).decode() == culeak_dies_at:
        os.kill(culeak, signal.SIGKILL)
    if m and target_exit_at and m.group(1).decode() == target_exit_at and target:
        os.kill(target, signal.SIGKILL)
    if m and stop_at and m.group(1).decode() == stop_at and target:
        os.kill(gdb.pid, signal.SIGKILL)
        gdb.wait()  # the kernel has detached the process: now it is stopped untraced
        os.kill(target, signal.SIGSTOP)
        while open("/proc/%d/stat" % target).read().rsplit(")", 1)[1].split()[0] != "T":
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGKILL)
    try:
        gdb.stdin.write(line)
        gdb.stdin.flush()
    except BrokenPipeError:
        break
try:
    gdb.stdin.close()
except BrokenPipeError:
    pass
sys.exit(gdb.wait())
