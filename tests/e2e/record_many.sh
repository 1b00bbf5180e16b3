#!/usr/bin/env bash
# record on a job of more traced processes than the 4,096 rings a job once had over its
# life (fake driver): 4,200 forked children one after another, each leaking one page.
# record writes every one's recording (before: 4,095, the rest dropped without a word),
# and refuses none.
set -u
. "$(dirname "$0")/seq_forks.sh"
N=${RECORD_MANY_N:-4200}

mkdir "$T/rec"
start=$SECONDS
"$B/culeak" record -o "$T/rec/job.%p.culeak" -- "$T/seq_forks" "$N" 4096 >"$T/out" 2>"$T/err" ||
    fail "record exited $?: $(tail -n 3 "$T/err")"
echo "record_many: record of $N processes in $((SECONDS - start)) s"
made=$(find "$T/rec" -name 'job.*.culeak' | wc -l)
[ "$made" -eq "$N" ] || fail "record wrote $made recordings of $N processes: $(tail -n 3 "$T/err")"
grep -q "not traced\|not recorded" "$T/err" && fail "record refused a process: $(grep 'not traced\|not recorded' "$T/err" | head -n 3)"
echo "record_many: ok"
