#!/usr/bin/env bash
# The console's `set metrics HOST:PORT` (tmux, fake driver): while the job is paused at a
# breakpoint, GET /metrics answers with what the console's model holds (the 4 MiB live
# before the paused allocation, the process running), in OpenMetrics when asked; a port that
# is taken is said and the endpoint stays; `set metrics off` closes it.
set -u
. "$(dirname "$0")/tmux_harness.sh" client_static

cp "$(dirname "$0")/c/gated_leak.c" "$T/job.c"
cc -g -O0 -o "$T/job" "$T/job.c" -ldl || fail "cannot build the job"
LEAK=job.c:$(grep -n "LEAK" "$T/job.c" | cut -d: -f1)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# get PATH [ACCEPT]: the body of http://127.0.0.1:$port/PATH (the status on failure)
get() {
    python3 - "http://127.0.0.1:$port$1" "${2:-}" <<'PY'
import sys, urllib.error, urllib.request
rq = urllib.request.Request(sys.argv[1], headers={"Accept": sys.argv[2]} if sys.argv[2] else {})
try:
    r = urllib.request.urlopen(rq, timeout=5)
    print(r.headers["Content-Type"])
    sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print("status", e.code)
except OSError as e:
    print("error", e)
PY
}

rm -f "$T/go"
start -- "$T/job" "$T/go"
wait_for "1 proc (1 live)"
type_expect "set metrics 127.0.0.1:$port" "metrics on http://127.0.0.1:$port/metrics"
type_expect "break $LEAK live > 3MiB" "breakpoint 1 at $LEAK"
touch "$T/go"
wait_for "PAUSED in cuMemAlloc_v2(1.00 MiB) - breakpoint 1 (hit 1)"
get /metrics >"$T/m" || fail "GET /metrics failed"
host=$(uname -n)
grep -qx "text/plain; version=0.0.4; charset=utf-8" "$T/m" || fail "content type: $(head -1 "$T/m")"
# paused at the 5th MiB: 4 MiB live before it
grep -qx "culeak_live_bytes{host=\"$host\",device=\"0\",allocator=\"cuda\"} 4194304" "$T/m" ||
    fail "live bytes while paused: $(grep live_bytes "$T/m")"
grep -qx "culeak_processes{host=\"$host\"} 1" "$T/m" || fail "processes: $(grep processes "$T/m")"
get /metrics "application/openmetrics-text;version=1.0.0" >"$T/om"
grep -q "^application/openmetrics-text; version=1.0.0" "$T/om" && [ "$(tail -1 "$T/om")" = "# EOF" ] ||
    fail "OpenMetrics: $(head -1 "$T/om") ... $(tail -1 "$T/om")"
[ "$(get /other | tail -1)" = "status 404" ] || fail "GET /other: $(get /other)"

# a port taken: said, and the endpoint served before stays
python3 -c 'import socket, time; s=socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(60)' >"$T/taken" &
holder=$!
until_deadline test -s "$T/taken" || fail "no port holder"
type_expect "set metrics 127.0.0.1:$(cat "$T/taken")" "set metrics: cannot listen on 127.0.0.1:$(cat "$T/taken"): Address already in use"
kill "$holder"
get /metrics | grep -q "^culeak_live_bytes" || fail "the endpoint went away with the failed set"
type_expect "set metrics off" "metrics off: 127.0.0.1:$port no longer answers"
get /metrics | grep -q "^error" || fail "the endpoint still answers after set metrics off: $(get /metrics)"
type_line "delete 1"
type_line "continue"
wait_for "EXITED (status 0)"
echo "console_metrics: ok"
