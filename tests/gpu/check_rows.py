# check_rows.py JOB_OUT DIFF_TXT DIFF_JSON PROG A B: one row per cause, and allocated and
# reserved as PyTorch says them. The diff lists the KEEP line of PROG once (its blocks) and
# the pool's segments as the pool's own line; at marks A and B, culeak's allocated and
# reserved (text header and JSON memory_a/memory_b) equal what the job printed from
# torch.cuda.memory_allocated() / memory_reserved() at that mark ("MEM <label> <a> <r>").
import json
import os
import re
import sys

out, diff_txt, diff_json, prog, a, b = sys.argv[1:7]
printed = {}
for line in open(out):
    m = re.match(r"MEM (.*) (\d+) (\d+)$", line.strip())
    if m:
        printed[m.group(1)] = (int(m.group(2)), int(m.group(3)))
keep = next(i for i, l in enumerate(open(prog), 1) if l.rstrip().endswith("# KEEP"))
site = "%s:%d" % (os.path.basename(prog), keep)
text = open(diff_txt).read()
rows = [l for l in text.splitlines() if re.match(r"  [+-]\d+ bytes ", l) or l.startswith("  pytorch caching allocator")]
fails = []
at_site = [l for l in rows if re.search(re.escape(site) + r"\b", l)]
if len(at_site) != 1:
    fails.append("%d rows at %s (one expected): %s" % (len(at_site), site, at_site))
elif "blocks)" not in at_site[0]:
    fails.append("the row at %s is not its blocks: %s" % (site, at_site[0]))
if any("alloc_block" in l or "CUDACachingAllocator" in l for l in rows):
    fails.append("a row of the allocator's own frames: %s" % [l for l in rows if "alloc" in l])
pool = [l for l in rows if l.startswith("  pytorch caching allocator: reserved")]
d = json.load(open(diff_json))["diff"]
for key, label in (("memory_a", a), ("memory_b", b)):
    if label not in printed:
        fails.append("the job printed nothing at %s" % label)
        continue
    alloc, reserved = printed[label]
    mem = d.get(key)
    if not mem:
        fails.append("no %s in the JSON diff" % key)
        continue
    if mem["allocated_bytes"] != alloc or mem["reserved_bytes"] != reserved:
        fails.append("%s: culeak allocated %d reserved %d, torch memory_allocated %d memory_reserved %d"
                     % (label, mem["allocated_bytes"], mem["reserved_bytes"], alloc, reserved))
    m = re.search(r"^culeak:   at %s: allocated .*?(\d+) bytes\)? in \d+ blocks?, reserved .*?(\d+) bytes\)? in"
                  % re.escape(label), text, re.M)
    if not m or (int(m.group(1)), int(m.group(2))) != (alloc, reserved):
        fails.append("%s: the header's figures are not torch's (%d, %d): %s" % (label, alloc, reserved,
                                                                               m.group(0) if m else "no line"))
grew = printed.get(b, (0, 0))[1] > printed.get(a, (0, 0))[1]
if grew and not pool:
    fails.append("memory_reserved grew but no line of the pool's segments")
print("%s: %s; %s; %s" % ("FAIL" if fails else "ok", at_site[0].strip() if at_site else "no row",
                          pool[0].strip() if pool else "no pool line", "; ".join(fails) if fails else
                          "allocated/reserved at %s and %s equal torch's %s" % (a, b, [printed.get(a), printed.get(b)])))
sys.exit(1 if fails else 0)
