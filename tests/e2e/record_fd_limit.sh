#!/usr/bin/env bash
# record under a low descriptor limit (fake driver; prlimit --nofile=14:14 on culeak and
# its job): twelve processes that run at once, so some cannot be taken. Each one culeak
# names on stderr as not traced or not recorded is in the recordings too, as a NOTE
# "untraced: process PID ..." in a recording of the job, and `report` of them says it;
# before, only the live run's stderr said so.
set -u
. "$(dirname "$0")/lib.sh"
FAKE=$B/fakecuda
[ -x "$FAKE/client_static" ] || { echo "fake driver not built"; exit 1; }
command -v prlimit >/dev/null || { echo "prlimit missing"; exit 1; }
cd "$T" || exit 1
printf '#!/bin/sh\nfor i in 1 2 3 4 5 6 7 8 9 10 11 12; do "%s/client_static" until "%s/stop" >/dev/null & done\nwait\n' \
    "$FAKE" "$T" >job.sh
chmod +x job.sh
LD_LIBRARY_PATH=$FAKE prlimit --nofile=14:14 "$B/culeak" record -o r.culeak -- ./job.sh 2>err.txt &
rec=$!
# the clients run until every one is recorded or named (then they end together)
for _ in $(seq 600); do
    [ "$(($(ls r.culeak* 2>/dev/null | wc -l) + $(grep -c 'is not traced\|is not recorded' err.txt)))" -ge 12 ] && break
    sleep 0.1
done
touch stop
wait "$rec" || fail "record exited $?: $(cat err.txt)"
named=$(grep -o 'process [0-9]* is not traced\|process [0-9]* is not recorded' err.txt | grep -o '[0-9]*' | sort -u)
noted=$(for f in r.culeak*; do "$B/culeak" dump "$f"; done | grep '"type":"note"' |
    grep -o 'untraced: process [0-9]*' | grep -o '[0-9]*' | sort -u)
echo "record_fd_limit: $(ls r.culeak* | wc -l) recordings, $(echo "$named" | grep -c .) named on stderr, $(echo "$noted" | grep -c .) noted in the recordings"
[ -n "$named" ] || fail "no process was refused under the limit: $(cat err.txt)"
[ "$named" = "$noted" ] || fail "named on stderr: $(echo $named); noted in the recordings: $(echo $noted)"
"$B/culeak" report r.culeak r.culeak.* >report.txt 2>&1 || fail "report failed: $(cat report.txt)"
grep -q '^culeak:   untraced: process [0-9]* is not traced' report.txt || fail "the report does not say it: $(cat report.txt)"
echo "record_fd_limit: ok"
