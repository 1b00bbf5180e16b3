#!/usr/bin/env bash
# Who holds a tensor (python/culeak_holders.py) on the stand-in torch, one root of each
# kind: a list global, a dict in a class attribute, a closure, an lru_cache, a local of a
# running frame, a tensor saved for backward by the grad_fn of a held one (held from C, as
# torch's SavedVariable holds it) or by a node further down its graph, a reference cycle
# with and without a root, a tensor held only by C, chains of 16 links (found) and 17 (not
# found within the limits); and an object whose __eq__, __hash__,
# __dict__ and __getattr__ raise is walked past without running any of them.
set -euo pipefail
NAME=holders_walk
. "$(dirname "$0")/python/job_env.sh"
standin_torch
src=tests/e2e/python/holders_cases.py
L_FRAME=$(grep -n '# LINE-FRAME$' "$src" | cut -d: -f1)
"$PY" "$src" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "the cases failed"; }
want() {
    grep -qxF "$1: $2" "$tmp/out" || { cat "$tmp/out"; fail "$1: not '$2'"; }
}
want list_global 'global `grads` of holders_cases.py (list), item 1'
want class_dict "class attribute \`Cache.store\` (dict), key 'w'"
want closure 'closure variable `kept` of make_closure.<locals>.step at holders_cases.py:'$(grep -n '    def step' "$src" | cut -d: -f1)
want lru_cache 'lru_cache of `weights`, a cached result'
want frame_local "local \`local_batch\` of running_frame at holders_cases.py:$L_FRAME, item 0"
want saved 'global `losses` of holders_cases.py (list), item 0, its grad_fn MulBackward0 saved `self` for backward'
want saved_deep "global \`losses\` of holders_cases.py (list), item 1, a node of its grad_fn's graph, MulBackward0 saved \`other\` for backward"
want cycle_rooted 'global `ring` of holders_cases.py (Node), attribute `next` (Node), attribute `t`'
want cycle_unrooted 'held only by objects no root reaches (a reference cycle the garbage collector will free)'
want deep_ok 'global `deep_ok` of holders_cases.py (list)'"$(printf ', item 0 (list)%.0s' $(seq 14)), item 0"
want deep_cut 'not found within the limits (16 links, 200000 objects, 1.0 s)'
want only_c 'held only by C (no Python object refers to it)'
want hostile "global \`hostile\` of holders_cases.py (dict), key 'h' (Hostile), via Hostile"
want refs_after_walk 0
want own_locals_left "['before', 't']"
! grep -q ' ran' "$tmp/out" "$tmp/err" || fail "user code ran"
echo "$NAME: ok"
