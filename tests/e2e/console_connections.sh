#!/usr/bin/env bash
# The console serves however many connections come (tmux, fake driver): 1100 idle
# connections to its socket, then a traced process of the job; its allocations are read
# and shown, and the leak report comes once every connection is closed.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static
command -v python3 >/dev/null || { echo "python3 missing"; exit 1; }

cat >"$T/job.sh" <<JOB
#!/bin/sh
while [ ! -e "$T/go" ]; do sleep 0.05; done
exec "$FAKE/client_static" leak 3 1048576
JOB
chmod +x "$T/job.sh"
# idle.py SOCKET N: opens N connections, then says so with $T/go and holds them until killed
cat >"$T/idle.py" <<'PY'
import os, resource, socket, sys, time
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    conns.append(s)
open(sys.argv[3], "w").close()
time.sleep(600)
PY

start -- "$T/job.sh"
wait_for "socket "
sock=$(screen | sed -n 's/.*\[culeak\] started pid [0-9]*; socket \([^ ]*\).*/\1/p' | head -n 1)
[ -S "$sock" ] || fail "no socket path on the screen"
python3 "$T/idle.py" "$sock" 1100 "$T/go" &
idle=$!
trap 'kill $idle 2>/dev/null; cleanup' EXIT
wait_for "EXITED (status 0)"
wait_for "3.00 MiB"
kill "$idle"
wait "$idle" 2>/dev/null
wait_for "leak report"
wait_for "3145728 bytes leaked in 3 allocations"
type_line "quit"
wait_for "CONSOLE-DONE rc=0"
echo "console_connections: ok"
