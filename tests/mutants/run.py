#!/usr/bin/env python3
"""Mutation testing: each mutation in tests/mutants/mutations.txt (a plausible bug: an exact
snippet of a file and its replacement) is applied alone to a scratch copy of the tree, and
the tests run there: first the tests that cover its file (tests/mutants/groups.txt), then,
only when those all pass, the whole suite (tests/run.sh). A mutation is KILLED only when a
test fails, and fails again when run once more on its own (a test that passes the second
time is a flake; a test stopped by its timeout is a hang, neither counts). A mutation no
test kills SURVIVED; one whose snippet is no longer in its file (the code moved on) is
STALE; both are errors, and so is a mutation that does not build or a snippet found more
than once. Survivors are listed at the end with their text. Exit status 0 only when every
mutation was killed, or when the survivors are those explained in
tests/mutants/survivors.txt and the killed ones are at least --min-killed percent.

usage: tests/mutants/run.py [--check] [--keep] [--timeout S] [--list FILE] [NAME-PART...]
  --check       only check that every snippet is found exactly once and that each
                mutated file has a group (no builds)
  --keep        keep the scratch copy (its path is printed)
  --timeout S   a test running longer than S seconds is stopped (a hang, not a kill)
  --min-killed  the least share of mutations killed for exit status 0 (default 95)
  --quick       the groups' tests only, never the whole suite (while writing a test)
  --start N     from the Nth mutation of the list on (a run cut short, resumed)
  NAME-PART     run only the mutations whose name contains one of these

The copy is the working tree as it is (committed or not, untracked files included, build
outputs excluded); it is built once, and each mutant rebuilds what its file touches. The
test that killed a mutation is kept in build/mutants-killers.txt and runs first next time."""
import argparse
import fnmatch
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HERE = os.path.join(ROOT, "tests", "mutants")
# The test that killed each mutation last time (lines "TEST<tab>NAME"), tried first the
# next time: most mutants then cost one build and one test.
KILLERS = os.path.join(ROOT, "build", "mutants-killers.txt")


def load_killers():
    killers = {}
    if os.path.exists(KILLERS):
        for line in open(KILLERS):
            test, sep, name = line.rstrip("\n").partition("\t")
            if sep:
                killers[name] = test
    return killers


def save_killers(killers):
    os.makedirs(os.path.dirname(KILLERS), exist_ok=True)
    with open(KILLERS + ".tmp", "w") as f:
        f.writelines("%s\t%s\n" % (t, n) for n, t in sorted(killers.items()))
    os.replace(KILLERS + ".tmp", KILLERS)


def parse(path):
    """Blocks of `name:`, `file:`, then one or more `find:` lines and `replace:` lines
    (several lines of one key join with newlines); '#' starts a comment line."""
    muts, cur = [], None
    for n, raw in enumerate(open(path), 1):
        line = raw.rstrip("\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        k, sep, v = line.partition(": ")
        if not sep and line.endswith(":"):
            k, v = line[:-1], ""
        if k not in ("name", "file", "find", "replace"):
            sys.exit("%s:%d: expected name:, file:, find: or replace:, got %r" % (path, n, line))
        if k == "name":
            cur = {"name": v, "line": n, "find": [], "replace": []}
            muts.append(cur)
        elif cur is None:
            sys.exit("%s:%d: %s: before any name:" % (path, n, k))
        elif k == "file":
            cur["file"] = v
        else:
            cur[k].append(v)
    names = set()
    for m in muts:
        if not m.get("file") or not m["find"] or not m["replace"]:
            sys.exit("%s:%d: mutation %r needs file:, find: and replace:" % (path, m["line"], m["name"]))
        if m["name"] in names:
            sys.exit("%s:%d: a second mutation named %r" % (path, m["line"], m["name"]))
        names.add(m["name"])
        m["find"] = "\n".join(m["find"])
        m["replace"] = "\n".join(m["replace"])
    return muts


def parse_groups(path):
    """Lines `PATTERN...: TEST...`: the tests (unit test_NAME or e2e/NAME) that cover the
    files matching a pattern (fnmatch, '*' crosses '/'); the first matching line wins."""
    groups = []
    for n, raw in enumerate(open(path), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        pats, sep, tests = line.partition(":")
        if not sep or not tests.split():
            sys.exit("%s:%d: expected 'PATTERN...: TEST...', got %r" % (path, n, raw.rstrip()))
        groups.append((pats.split(), tests.split()))
    return groups


def group_of(groups, f):
    for pats, tests in groups:
        if any(fnmatch.fnmatch(f, p) for p in pats):
            return tests
    return None


def parse_survivors(path):
    """Names of the mutations known to survive, each with its reason: `name: NAME` lines
    followed by `why:` lines."""
    known = {}
    if not os.path.exists(path):
        return known
    cur = None
    for raw in open(path):
        line = raw.rstrip("\n")
        if line.startswith("name: "):
            cur = line[6:]
            known[cur] = ""
        elif line.startswith("why: ") and cur:
            known[cur] += line[5:] + " "
    return known


def locate(tree, m):
    """None when the snippet is in the file exactly once, else why not."""
    path = os.path.join(tree, m["file"])
    if not os.path.exists(path):
        return "file %s is gone" % m["file"]
    n = open(path).read().count(m["find"])
    if n == 0:
        return "snippet not found in %s" % m["file"]
    if n > 1:
        return "snippet found %d times in %s (make it unique)" % (n, m["file"])
    return None


def copy_tree(dest):
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    for f in files:
        src = os.path.join(ROOT, f)
        if not f or not os.path.lexists(src) or os.path.isdir(src):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, f), follow_symlinks=False)


def env():
    e = dict(os.environ, BUILD="build")
    for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "CULEAK_TEST_FAIL_FAST"):
        e.pop(k, None)
    return e


def all_units(tree):
    return sorted("build/tests/" + f[:-2] for f in os.listdir(os.path.join(tree, "tests", "unit"))
                  if f.startswith("test_") and f.endswith(".c"))


# What a unit test needs besides its binary: the shim and the fake driver it starts.
UNIT_NEEDS = ["build/libculeak.so", "build/libculeak_unwind.so", "build/libculeak_torch.so", "fakecuda"]


def build(tree, tests, log):
    """Builds what the tests named need (every program and unit test when tests is None):
    a unit test its binary, the shim and the fake driver; an e2e script everything."""
    if tests is None:
        targets = ["all"] + all_units(tree)
    elif any(not t.startswith("test_") for t in tests):
        targets = ["all"] + ["build/tests/" + t for t in tests if t.startswith("test_")]
    else:
        targets = UNIT_NEEDS + ["build/tests/" + t for t in tests]
    r = subprocess.run(["make", "-j2"] + targets, cwd=tree, env=env(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    if r.returncode:
        open(log, "ab").write(r.stdout)
    return r.returncode == 0


def run_test(tree, test, timeout, log):
    """'pass', 'fail' or 'hang' of one test: test_NAME (a unit test) or e2e/NAME."""
    cmd = ["build/tests/" + test] if test.startswith("test_") else ["tests/e2e/%s.sh" % test[4:]]
    with open(log, "ab") as out:
        out.write(("==== %s\n" % test).encode())
        out.flush()
        try:
            r = subprocess.run(cmd, cwd=tree, env=env(), stdout=out, stderr=subprocess.STDOUT, timeout=timeout,
                               start_new_session=True)
        except subprocess.TimeoutExpired:
            return "hang"
    return "pass" if r.returncode == 0 else "fail"


def run_suite(tree, timeout, log):
    """(status, the tests that failed) of tests/run.sh, stopping at its first failure."""
    e = dict(env(), CULEAK_TEST_FAIL_FAST="1", TEST_TIMEOUT=str(timeout))
    with open(log, "ab") as out:
        out.write(b"==== tests/run.sh\n")
        out.flush()
        r = subprocess.run(["tests/run.sh"], cwd=tree, env=e, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        out.write(r.stdout)
    text = r.stdout.decode(errors="replace")
    failed, hung = [], []
    for l in text.splitlines():
        if l.startswith("FAIL "):
            (hung if "it hung" in l else failed).append(l.split()[1])
    return ("pass" if r.returncode == 0 else "fail"), failed, hung


class Baseline:
    """Whether a test passes on the unmutated tree (asked once per test, lazily): one that
    never passes kills nothing; one that fails once and then passes is flaky, and kills
    only when it fails three times in a row on a mutant."""

    def __init__(self, tree, timeout, log):
        self.tree, self.timeout, self.log, self.known, self.flaky = tree, timeout, log, {}, set()

    def passes(self, test):
        if test not in self.known:
            ok = run_test(self.tree, test, self.timeout, self.log) == "pass"
            if not ok and run_test(self.tree, test, self.timeout, self.log) == "pass":
                ok = True
                self.flaky.add(test)
            self.known[test] = ok
        return self.known[test]


def confirm(tree, test, timeout, log, base):
    """A failure counts when the test fails again, run alone (twice more if it is flaky)."""
    for _ in range(2 if base and test in base.flaky else 1):
        if run_test(tree, test, timeout, log) != "fail":
            return False
    return True


def try_mutant(tree, m, tests, timeout, log, quick, base):
    """('killed', test), ('survived', why) or ('build', None)."""
    notes = []
    for t in tests:  # each built just before it runs: the first often kills
        if not build(tree, [t], log):
            return "build", None
        s = run_test(tree, t, timeout, log)
        if s == "fail" and confirm(tree, t, timeout, log, base):
            return "killed", t
        if s != "pass":
            notes.append("%s %s" % (t, "hung" if s == "hang" else "failed once (a flake)"))
    if quick:
        return "survived", "; ".join(notes + ["its group's tests pass"])
    if not build(tree, None, log):
        return "build", None
    status, failed, hung = run_suite(tree, timeout, log)
    for t in failed:
        if confirm(tree, t, timeout, log, base):
            return "killed", t + " (the whole suite)"
        notes.append("%s failed once (a flake)" % t)
    notes += ["%s hung" % t for t in hung]
    return "survived", "; ".join(notes)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--min-killed", type=float, default=95.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--list", default=os.path.join(HERE, "mutations.txt"))
    ap.add_argument("--groups", default=os.path.join(HERE, "groups.txt"))
    ap.add_argument("--survivors", default=os.path.join(HERE, "survivors.txt"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    muts = parse(a.list)
    groups = parse_groups(a.groups)
    known = parse_survivors(a.survivors)
    muts = muts[a.start - 1:]
    if a.names:
        muts = [m for m in muts if any(p in m["name"] for p in a.names)]
    errors = []
    where = os.path.relpath(a.list, ROOT) if a.list.startswith(ROOT + os.sep) else a.list
    for m in muts:
        why = locate(ROOT, m)
        if not why and group_of(groups, m["file"]) is None:
            why = "no group in %s covers %s" % (os.path.relpath(a.groups, ROOT), m["file"])
        if why:
            print("STALE    %s: %s (%s:%d)" % (m["name"], why, where, m["line"]), flush=True)
            errors.append(m["name"])
    for t in sorted({t for _, ts in groups for t in ts}):
        path = os.path.join(ROOT, "tests", "unit", t + ".c") if t.startswith("test_") else \
            os.path.join(ROOT, "tests", "e2e", t[4:] + ".sh")
        if not (t.startswith("test_") or t.startswith("e2e/")) or not os.path.exists(path):
            print("STALE    group test %s: no %s" % (t, os.path.relpath(path, ROOT)))
            errors.append("group test " + t)
    stale_known = [n for n in known if n not in {m["name"] for m in parse(a.list)}]
    for n in stale_known:
        print("STALE    %s: explained in survivors.txt but not a mutation" % n)
        errors.append(n)
    live = [m for m in muts if m["name"] not in errors]
    if a.check:
        print("%d mutations: %d found once, %d stale" % (len(muts), len(live), len(errors)))
        return 1 if errors else 0

    tree = tempfile.mkdtemp(prefix="culeak-mutants.")
    logs = os.path.join(tree, ".mutant-logs")
    os.makedirs(logs)
    print("scratch copy: %s" % tree, flush=True)
    copy_tree(tree)
    t0 = time.time()
    if not build(tree, None, os.path.join(logs, "baseline.log")):
        print("the unmutated copy does not build; see %s/baseline.log" % logs)
        return 2
    base = Baseline(tree, a.timeout, os.path.join(logs, "baseline.log"))
    killers = load_killers()

    def tests_of(m):  # the last killer first, then the group
        first = [killers[m["name"]]] if m["name"] in killers else []
        return first + [t for t in group_of(groups, m["file"]) if t not in first]
    bad = [t for t in sorted({t for m in live for t in tests_of(m)[:1 if m["name"] in killers else None]})
           if not base.passes(t)]
    if bad:
        print("the unmutated copy fails %s; see %s/baseline.log" % (" ".join(bad), logs))
        return 2
    print("baseline: the groups' tests pass (%.0f s)%s" % (time.time() - t0, "; flaky: " + " ".join(
        sorted(base.flaky)) if base.flaky else ""), flush=True)
    killed, survived = [], []
    for i, m in enumerate(live, 1):
        path = os.path.join(tree, m["file"])
        orig = open(path).read()
        open(path, "w").write(orig.replace(m["find"], m["replace"], 1))
        t = time.time()
        log = os.path.join(logs, "%03d.log" % i)
        try:
            status, what = try_mutant(tree, m, tests_of(m), a.timeout, log, a.quick, base)
        finally:
            open(path, "w").write(orig)  # a fresh mtime: make rebuilds what the mutant touched
        killer = what.split()[0] if status == "killed" else None
        if killer and killer not in base.known:  # not asked yet: does it pass unmutated?
            if not build(tree, [killer], log) or not base.passes(killer):
                status, what = "survived", "only %s failed, which fails unmutated too" % killer
        took = time.time() - t
        if status == "survived":
            survived.append(m)
            print("SURVIVED %s (%.0f s)%s%s" % (m["name"], took, ": " + what if what else "",
                                                " [explained]" if m["name"] in known else ""), flush=True)
        elif status == "build":
            errors.append(m["name"])
            print("ERROR    %s: does not build (%s)" % (m["name"], log), flush=True)
        else:
            killed.append(m)
            print("killed   %s by %s (%.0f s)" % (m["name"], what, took), flush=True)
            killers[m["name"]] = what.split()[0]
            save_killers(killers)
    n = len(muts)
    share = 100.0 * len(killed) / n if n else 100.0
    print("%d mutations: %d killed (%.1f%%), %d survived, %d stale or in error (%.1f min)"
          % (n, len(killed), share, len(survived), len(errors), (time.time() - t0) / 60))
    for m in survived:
        print("\nsurvived: %s (%s:%d)\n  %s\n  find:    %s\n  replace: %s" % (
            m["name"], where, m["line"], m["file"], m["find"].replace("\n", "\n           "),
            m["replace"].replace("\n", "\n           ")))
        print("  why:     " + (known.get(m["name"]) or "NOT EXPLAINED in tests/mutants/survivors.txt"))
    if errors:
        print("stale or in error: " + "; ".join(errors))
    unexplained = [m for m in survived if m["name"] not in known]
    ok = not errors and not unexplained and share >= a.min_killed
    if a.keep or not ok:
        print("scratch copy kept: %s (logs in .mutant-logs)" % tree)
    else:
        shutil.rmtree(tree, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
