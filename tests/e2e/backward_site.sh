#!/usr/bin/env bash
# Memory made for backward() on a thread without Python frames, without a GPU or torch: the
# stand-in torch package's loss.backward() runs its node on an engine thread of the fake
# libtorch_cpu.so, which allocates each gradient through ATen's empty helper from the fake
# caching allocator. culeak's sitecustomize tells the shim when the backward pass starts
# and ends: the gradients are charged to the loss.backward() line, marked "(autograd
# backward)", via the node's frame (MmBackward0::apply), never at an allocator's frame
# (record_trace, empty_generic), in the diff, the made-after list, text, JSON and HTML.
set -euo pipefail
. "$(dirname "$0")/python/job_env.sh"
standin_torch
src=tests/e2e/python/backward_train.py
L_BWD=$(grep -n '# SITE-BACKWARD$' "$src" | cut -d: -f1)
OP='torch::autograd::generated::MmBackward0::apply (libtorch_cpu.so)'
OP_RE='torch::autograd::generated::MmBackward0::apply \(libtorch_cpu.so\)'


"$CULEAK" record -o "$tmp/run.culeak" -- "$PY" "$src" 8 >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; fail "recording failed"; }
grep -q '^backward_train: 8 gradients kept$' "$tmp/out" || { cat "$tmp/out" "$tmp/err"; fail "the job's output changed"; }
# each gradient: the pool's few native frames of the engine thread, the marker, then the
# Python frames of the thread inside backward()
"$CULEAK" dump "$tmp/run.culeak" >"$tmp/dump"
"$PY" - "$tmp/dump" <<'PYEOF' || fail "the gradients' stacks do not carry the marker and the caller's frames"
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
marker = [e["ip"] for e in ev if e["type"] == "pyframe" and e.get("autograd_backward")]
assert len(marker) == 1, marker
b = [e for e in ev if e.get("api") == "torch.alloc" and e["size"] != 8192]
assert len(b) == 8, b
# the block a thread makes after the last backward() returned carries no marker
after = [e for e in ev if e.get("api") == "torch.alloc" and e["size"] == 8192]
assert len(after) == 1 and marker[0] not in after[0]["stack"], after
for e in b:
    at = e["stack"].index(marker[0])
    assert 1 <= at <= 6 and not any(int(ip, 16) >> 63 for ip in e["stack"][:at]), e["stack"]
    assert len(e["stack"]) > at + 1, e["stack"]
PYEOF

ROW="<module> at .*backward_train.py:$L_BWD \\(autograd backward\\), via $OP_RE"
"$CULEAK" report --diff 'iteration 1' 'iteration 4' "$tmp/run.culeak" >"$tmp/diff" 2>&1
grep -Eq "^  \\+3072 bytes \\(1024 -> 4096 bytes, 1 -> 4 blocks\\) $ROW\$" "$tmp/diff" ||
    { cat "$tmp/diff"; fail "the gradients are not at backward_train.py:$L_BWD (autograd backward) via the node"; }
! grep -Eq 'record_trace|empty_generic|NativeCachingAllocator|std::function' "$tmp/diff" || { cat "$tmp/diff"; fail "an allocator frame names a row"; }
grep -Eq "^    made by autograd's backward for the line below, via $OP_RE\$" "$tmp/diff" ||
    { cat "$tmp/diff"; fail "the made-after list does not say the gradients were made by autograd's backward"; }
"$CULEAK" report --format json --diff 'iteration 1' 'iteration 4' "$tmp/run.culeak" >"$tmp/diff.json"
"$PY" - "$tmp/diff.json" "$L_BWD" "$OP" <<'PYEOF' || fail "the JSON diff does not charge the gradients to the backward() line"
import json, sys
d = json.load(open(sys.argv[1]))["diff"]
rows = [r for r in d["sites"] if r.get("autograd_backward")]
assert len(rows) == 1 and len(d["sites"]) == 1, d["sites"]
r = rows[0]
assert r["delta_bytes"] == 3072 and r["kind"] == "block" and r["via"] == sys.argv[3], r
assert r["stack"][0]["file"].endswith("backward_train.py") and r["stack"][0]["line"] == int(sys.argv[2]), r
PYEOF
"$CULEAK" report --at 'iteration 4' "$tmp/run.culeak" >"$tmp/at4" 2>&1
grep -Eq "^LIVE .* from $ROW\$" "$tmp/at4" || { cat "$tmp/at4"; fail "the text report does not charge the gradients to the backward() line"; }
"$CULEAK" report --format json --at 'iteration 4' "$tmp/run.culeak" >"$tmp/at4.json"
"$PY" - "$tmp/at4.json" "$L_BWD" "$OP" <<'PYEOF' || fail "the JSON report does not charge the gradients to the backward() line"
import json, sys
d = json.load(open(sys.argv[1]))
# the gradients (blocks) are the one site; the segment the pool took for them on the engine
# thread is the pool's own row, not a second site
rows = [r for r in d["sites"] if r["site"].get("autograd_backward")]
assert [r["kind"] for r in rows] == ["block"] and len(d["sites"]) == 1, d["sites"]
assert d.get("pools"), d.keys()
for r in rows:
    s = r["site"]
    assert s["file"].endswith("backward_train.py") and s["line"] == int(sys.argv[2]) and s["via"] == sys.argv[3], s
    assert s["text"].endswith("(autograd backward), via " + sys.argv[3]), s
PYEOF
"$CULEAK" report --format html -o "$tmp/run.html" "$tmp/run.culeak"
"$PY" - "$tmp/run.html" "$L_BWD" <<'PYEOF' || fail "the HTML report does not charge the gradients to the backward() line"
import json, sys
page = open(sys.argv[1]).read()
start = page.index('id="culeak-data">') + len('id="culeak-data">')
d = json.loads(page[start:page.index("</script>", start)])
rows = [s for s in d["sites"] if s.get("autograd_backward")]  # the blocks'; the segment is the pool's line
assert [s["pool"] for s in rows] == [1] and len(d["sites"]) == 3, d["sites"]
assert any(s["text"] == "pytorch caching allocator: reserved" for s in d["sites"]), d["sites"]
# the block made after backward() returned is at its own native line
assert any(s["text"].startswith("nested_malloc at ") and not s.get("autograd_backward") for s in d["sites"]), d["sites"]
assert all(s["line"] == int(sys.argv[2]) and s["text"].endswith(":%s (autograd backward)" % sys.argv[2]) for s in rows), rows
assert "[autograd backward]" in d["names"], d["names"]
assert not any(a in n for n in d["names"] for a in ("record_trace", "empty_generic")), d["names"]
PYEOF

# --depth 2: two native frames before the marker, too few to reach the node: marked, no via
"$CULEAK" record -d 2 -o "$tmp/d2.culeak" -- "$PY" "$src" 3 >/dev/null 2>"$tmp/d2.err" || { cat "$tmp/d2.err"; fail "recording with -d 2 failed"; }
"$CULEAK" report --at 'iteration 2' "$tmp/d2.culeak" >"$tmp/d2" 2>&1
grep -Eq "^LIVE .* from <module> at .*backward_train.py:$L_BWD \\(autograd backward\\)\$" "$tmp/d2" ||
    { cat "$tmp/d2"; fail "with -d 2 the gradients are not marked at the backward() line"; }
echo "backward_site: ok"
