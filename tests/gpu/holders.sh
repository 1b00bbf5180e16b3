#!/usr/bin/env bash
# Who holds the memory of three jobs on a real GPU (tests/gpu/holders_jobs.py): each is
# recorded with the wheel's culeak, and the report at its mark "end" must name the holder
# of its growing site (HELD BY); prints the reports' HELD BY lines and the seconds each
# job took with CULEAK_HOLDERS=0 and 1. Then the hook job recorded with --holders (a walk
# at each mark): the report must say, under the gradients' site, that the list held one
# more block at each mark; prints those lines and the seconds with --holders. Needs
# dist/culeak-*.whl (make wheel), torch, a GPU.
set -u
cd "$(dirname "$0")/../.." || exit 1
OUT=${OUT:-/tmp/culeak-gpu}
mkdir -p "$OUT"
W=$(mktemp -d)
python3 -m venv --system-site-packages "$W/venv" >/dev/null 2>&1 || exit 1
"$W/venv/bin/python" -m pip install -q --no-index --no-deps dist/culeak-*.whl || exit 1
CULEAK=$W/venv/bin/culeak
fails=0
for job in "hook:global \`grads\` of holders_jobs.py (list), an item" \
           "total:global \`total_loss\` of holders_jobs.py" \
           "lru:lru_cache of \`table\`, a cached result"; do
    mode=${job%%:*} want=${job#*:}
    for h in 0 1; do
        s=$(date +%s.%N)
        CULEAK_HOLDERS=$h "$CULEAK" record -o "$W/$mode$h.culeak" -- python3 tests/gpu/holders_jobs.py "$mode" >"$W/out" 2>&1 ||
            { echo "$mode: record failed"; tail -5 "$W/out"; fails=$((fails + 1)); }
        echo "$mode CULEAK_HOLDERS=$h: $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
    done
    "$CULEAK" report --at end "$W/${mode}1.culeak" >"$W/holders_$mode.txt" 2>&1
    "$CULEAK" report "$W/${mode}1.culeak" >"$W/holders_${mode}_leaks.txt" 2>&1
    "$CULEAK" report --at end --format json "$W/${mode}1.culeak" >"$W/holders_$mode.json" 2>&1
    grep 'HELD BY' "$W/holders_$mode.txt" | sed "s/^/$mode: /"
    grep -qF "HELD BY $want" "$W/holders_$mode.txt" || { echo "$mode: no 'HELD BY $want'"; cat "$W/holders_$mode.txt"; fails=$((fails + 1)); }
    grep -q 'HELD BY' "$W/holders_${mode}_leaks.txt" || { echo "$mode: the leak report names no holder"; fails=$((fails + 1)); }
done
# --holders: who held the gradients at each mark, one more each step
s=$(date +%s.%N)
"$CULEAK" record --holders -o "$W/marks.culeak" -- python3 tests/gpu/holders_jobs.py hook 6 >"$W/out" 2>&1 ||
    { echo "marks: record failed"; tail -5 "$W/out"; fails=$((fails + 1)); }
echo "hook --holders: $(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
"$CULEAK" report --at end "$W/marks.culeak" >"$W/holders_marks.txt" 2>&1
"$CULEAK" report --at end --format json "$W/marks.culeak" >"$W/holders_marks.json" 2>&1
grep 'at mark' "$W/holders_marks.txt" | sed "s/^/marks: /"
for i in 0 1 2 3 4 5; do
    n=$((i + 1)) s=s
    [ $n = 1 ] && s=
    grep -qF "at mark \"iteration $i\": HELD BY global \`grads\` of holders_jobs.py (list), an item: $n block$s," "$W/holders_marks.txt" ||
        { echo "marks: not $n block$s held by grads at iteration $i"; fails=$((fails + 1)); }
done
tar -C "$W" -czf "$OUT/holders.tar.gz" $(cd "$W" && ls holders_*)
echo "holders: $fails failed"
exit $((fails > 0))
