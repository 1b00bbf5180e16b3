#!/usr/bin/env bash
# Several Python threads inside backward() at once (the stand-in torch, no GPU): when they
# are at the same line, a gradient made on autograd's thread is charged to it; when they
# are at different lines, nothing tells which call it was made for, so it is marked
# without a Python line (its site is the operation's frame), never charged to one of them.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch
src=tests/e2e/python/backward_threads.py
L_SAME=$(grep -n '# BWD-SAME$' "$src" | cut -d: -f1)
L_FIRST=$(grep -n '# BWD-FIRST$' "$src" | cut -d: -f1)
L_SECOND=$(grep -n '# BWD-SECOND$' "$src" | cut -d: -f1)


"$CULEAK" record -o "$tmp/run.culeak" -- "$PY" "$src" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
grep -q '^backward_threads: 4 gradients$' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "the job's output changed"; }
"$CULEAK" report --diff 'same line' 'two lines' "$tmp/run.culeak" >"$tmp/same" 2>&1
grep -Eq "^  \+4096 bytes \(0 -> 4096 bytes, 0 -> 2 blocks\) same at .*backward_threads.py:$L_SAME \(autograd backward\), via torch::autograd::generated::MmBackward0::apply \(libtorch_cpu.so\)\$" \
    "$tmp/same" || { cat "$tmp/same"; fail "two calls at one line: the gradients are not at backward_threads.py:$L_SAME"; }
"$CULEAK" report --diff 'two lines' 'done' "$tmp/run.culeak" >"$tmp/apart" 2>&1
grep -Eq "^  \+8192 bytes \(0 -> 8192 bytes, 0 -> 2 blocks\) torch::autograd::generated::MmBackward0::apply.* at .*autograd.cpp:[0-9]+ \(autograd backward\)\$" \
    "$tmp/apart" || { cat "$tmp/apart"; fail "two calls at two lines: the gradients are not at the operation"; }
! grep -Eq "backward_threads.py:($L_FIRST|$L_SECOND)" "$tmp/apart" || { cat "$tmp/apart"; fail "a gradient charged to one of two lines"; }
grep -q "made by autograd's backward for the line below" "$tmp/apart" && { cat "$tmp/apart"; fail "a Python line for two calls"; }
grep -q "^    made by autograd's backward while backward() ran at several lines, via torch::autograd::generated::MmBackward0::apply (libtorch_cpu.so)\$" \
    "$tmp/apart" || { cat "$tmp/apart"; fail "the made-after list does not say several backward() calls ran"; }
echo "backward_threads: ok"
