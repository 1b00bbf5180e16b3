#!/usr/bin/env python3
"""Mutation testing: each mutation in tests/mutants/mutations.txt (a plausible bug: an exact
snippet of a file and its replacement) is applied alone to a scratch copy of the tree, and
the tests run there: first the tests that cover its file (tests/mutants/groups.txt), then,
only when those all pass, the rest of the whole suite (every test tests/run.sh runs). A
mutation is KILLED only when a test fails, and fails again when run once more on its own
(a test that passes the second time is a flake; a test stopped by its timeout is a hang,
neither counts), and that test passes on the unmutated tree (one that failed there once
and then passed is flaky, and kills only when it fails three times in a row on the
mutant). A mutation no test kills SURVIVED; one whose snippet is no longer in its file
(the code moved on) is STALE; both are errors, and so is a mutation that does not build or
a snippet found more than once. Survivors are listed at the end with their text. Exit
status 0 only when every mutation was killed, or when the survivors are those explained
in tests/mutants/survivors.txt and the killed ones are at least --min-killed percent.

usage: tests/mutants/run.py [--check] [--keep] [--timeout S] [--wait S] [--jobs N]
                            [--save-seed] [NAME-PART...]
  --check       only check that every snippet is found exactly once and that each
                mutated file has a group (no builds)
  --keep        keep the scratch copy (its path is printed)
  --timeout S   a test running longer than S seconds is stopped (a hang, not a kill);
                a test whose passing time is known gets 4 times that, at least 150 s
                (longer than the tests' own waits: a test failing by its own deadline
                is a failure)
  --wait S      the deadline of the tests' waits for what should come (WAIT_S in every
                test's environment, the unmutated tree's runs included; default 15, where
                `make test` waits 60): a mutant that keeps a screen from ever showing
                what a test waits for costs its two runs 2 x S seconds
  --jobs N      tests run at a time (default 2); a test confirming a failure runs alone
  --min-killed  the least share of mutations killed for exit status 0 (default 95)
  --quick       the groups' tests only, never the whole suite (while writing a test)
  --start N     from the Nth mutation of the list on (a run cut short, resumed)
  --save-seed   at the end, write the killers known (this run's and the earlier ones'
                of the mutations in the list) to tests/mutants/killers.txt
  NAME-PART     run only the mutations whose name contains one of these

Where the time goes, and what keeps it short: the copy is the working tree as it is
(committed or not, untracked files included) with the worktree's build/ (modification
times kept, so make rebuilds only what is out of date there); mutations run in the order
of their files, so a mutant costs one compile of its file and the links after it. The
test that killed a mutation is kept in build/mutants-killers.txt and runs first, alone,
next time (a tree without one, a fresh clone, starts from the committed seed
tests/mutants/killers.txt, which --save-seed rewrites; the output says which it read);
without one, the tests that killed other mutations of the same file run first,
most kills first. Then the rest of the group in its order, and the rest of the suite,
the longest first, run --jobs at a time (the times of passing runs are kept in
build/mutants-times.txt). The last killers are run on the unmutated tree first, side by
side; any other test is run there only when it first fails on a mutant."""
import argparse
import collections
import fnmatch
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HERE = os.path.join(ROOT, "tests", "mutants")
# The test that killed each mutation last time (lines "TEST<tab>NAME"), tried first the
# next time: most mutants then cost one build and one test.
KILLERS = os.path.join(ROOT, "build", "mutants-killers.txt")
# The same, committed: what a tree without build/mutants-killers.txt starts from.
SEED = os.path.join(HERE, "killers.txt")
# How long each test took when it last passed (lines "SECONDS<tab>TEST"): its timeout, and
# the order of the tests that run side by side (the longest first).
TIMES = os.path.join(ROOT, "build", "mutants-times.txt")


def load_killers(path):
    killers = {}
    for line in open(path):
        if line.startswith("#"):
            continue
        test, sep, name = line.rstrip("\n").partition("\t")
        if sep:
            killers[name] = test
    return killers


def save_killers(killers, path=KILLERS, head=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        f.write(head)
        f.writelines("%s\t%s\n" % (t, n) for n, t in sorted(killers.items()))
    os.replace(path + ".tmp", path)


def load_times():
    times = {}
    if os.path.exists(TIMES):
        for line in open(TIMES):
            secs, sep, test = line.rstrip("\n").partition("\t")
            try:
                times[test] = float(secs)
            except ValueError:
                pass
    return times


def save_times(times):
    os.makedirs(os.path.dirname(TIMES), exist_ok=True)
    with open(TIMES + ".tmp", "w") as f:
        f.writelines("%.1f\t%s\n" % (s, t) for t, s in sorted(times.items()))
    os.replace(TIMES + ".tmp", TIMES)


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
    """Lines `PATTERN...: TEST...`: the tests (test_NAME, e2e/NAME, checks/NAME) that cover the
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
    """The working tree's files, then its build/ (times kept: what is up to date there is
    up to date in the copy)."""
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           check=True, capture_output=True).stdout.decode().split("\0")
    for f in files:
        src = os.path.join(ROOT, f)
        if not f or not os.path.lexists(src) or os.path.isdir(src):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, f), follow_symlinks=False)
    build = os.path.join(ROOT, "build")
    if os.path.isdir(build):
        shutil.copytree(build, os.path.join(dest, "build"), symlinks=True, dirs_exist_ok=True,
                        ignore=lambda d, names: [n for n in names if n.startswith("mutants-")])


WAIT_S = 15  # --wait


def env():
    e = dict(os.environ, BUILD="build", WAIT_S=str(WAIT_S))
    for k in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "CULEAK_TEST_FAIL_FAST"):
        e.pop(k, None)
    return e


# Where the tests live: test_NAME is tests/unit/test_NAME.c or, a process test of the shim,
# tests/shim/test_NAME.c (built as build/tests/test_NAME); e2e/NAME and checks/NAME are the
# scripts tests/e2e/NAME.sh and tests/checks/NAME.sh.
UNIT_DIRS = ("unit", "shim")
SCRIPT_DIRS = ("e2e", "checks")


def test_path(tree, t):
    """The source of the test named t, or None when t names no kind of test."""
    if t.startswith("test_"):
        paths = [os.path.join(tree, "tests", d, t + ".c") for d in UNIT_DIRS]
        return next((p for p in paths if os.path.exists(p)), paths[0])
    folder, _, name = t.partition("/")
    return os.path.join(tree, "tests", folder, name + ".sh") if folder in SCRIPT_DIRS and name else None


def all_units(tree):
    return sorted("build/tests/" + f[:-2] for d in UNIT_DIRS for f in os.listdir(os.path.join(tree, "tests", d))
                  if f.startswith("test_") and f.endswith(".c"))


def suite_tests(tree):
    """Every test tests/run.sh runs: the unit tests, then the e2e scripts and the checks
    (those with a #! line; the others are libraries the scripts source)."""
    tests = [os.path.basename(u) for u in all_units(tree)]
    for d in SCRIPT_DIRS:
        folder = os.path.join(tree, "tests", d)
        for f in sorted(os.listdir(folder)):
            if f.endswith(".sh") and open(os.path.join(folder, f), "rb").read(2) == b"#!":
                tests.append(d + "/" + f[:-3])
    return tests


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


class Tests:
    """Runs tests in the copy, several at a time, each in a session of its own (a hang is
    stopped with everything it started: SIGTERM, then SIGKILL 10 s later, as tests/run.sh's
    timeout does); their output goes to the mutant's log, one test after another."""

    def __init__(self, tree, timeout, jobs, times):
        self.tree, self.timeout, self.jobs, self.times = tree, timeout, jobs, times

    def limit(self, test):
        known = self.times.get(test)
        return self.timeout if known is None else min(self.timeout, max(150.0, 4 * known))

    def start(self, test):
        cmd = ["build/tests/" + test] if test.startswith("test_") else ["tests/%s.sh" % test]
        out = tempfile.TemporaryFile()
        p = subprocess.Popen(cmd, cwd=self.tree, env=env(), stdout=out, stderr=subprocess.STDOUT,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        return {"test": test, "p": p, "out": out, "t0": time.time(), "limit": self.limit(test), "term": None}

    @staticmethod
    def signal(r, sig):
        try:
            os.killpg(r["p"].pid, sig)
        except OSError:
            pass

    def finish(self, r, log, status):
        r["out"].seek(0)
        with open(log, "ab") as f:
            f.write(("==== %s (%s, %.0f s)\n" % (r["test"], status, time.time() - r["t0"])).encode())
            shutil.copyfileobj(r["out"], f)
        r["out"].close()
        if status == "pass":
            self.times[r["test"]] = time.time() - r["t0"]

    def run(self, tests, log, jobs=None, stop_at_fail=True):
        """(test, 'pass'|'fail'|'hang') for each test in the order they end; at the first
        failure (stop_at_fail) the others running are stopped and no more start."""
        todo, running, results = list(tests), [], []
        jobs = jobs or self.jobs
        try:
            return self._run(todo, running, results, log, jobs, stop_at_fail)
        finally:  # interrupted (SIGTERM, Ctrl-C): nothing of a test is left running
            self.stop(running)

    def stop(self, running):
        """SIGTERM (a test's own clean-up runs: its tmux server, its files), then SIGKILL."""
        for r in running:
            self.signal(r, signal.SIGTERM)
        for r in running:
            try:
                r["p"].wait(10)
            except subprocess.TimeoutExpired:
                pass
            self.signal(r, signal.SIGKILL)
            r["p"].wait()

    def _run(self, todo, running, results, log, jobs, stop_at_fail):
        while todo or running:
            while todo and len(running) < jobs:
                running.append(self.start(todo.pop(0)))
            time.sleep(0.05)
            for r in list(running):
                now = time.time()
                rc = r["p"].poll()
                if rc is None:
                    if r["term"] is None and now - r["t0"] > r["limit"]:
                        self.signal(r, signal.SIGTERM)
                        r["term"] = now
                    elif r["term"] is not None and now - r["term"] > 10:
                        self.signal(r, signal.SIGKILL)
                    continue
                self.signal(r, signal.SIGKILL)  # what it left running in its session
                status = "hang" if r["term"] is not None else "pass" if rc == 0 else "fail"
                running.remove(r)
                self.finish(r, log, status)
                results.append((r["test"], status))
                if status == "fail" and stop_at_fail:  # the others' results would not be used
                    self.stop(running)
                    for o in running:
                        self.finish(o, log, "stopped")
                    running.clear()
                    return results
        return results

    def one(self, test, log):
        return self.run([test], log, jobs=1)[0][1]


class Baseline:
    """Whether a test passes on the unmutated tree, asked when it first fails on a mutant
    (the mutation undone): one that never passes kills nothing; one that fails once and
    then passes is flaky, and kills only when it fails three times in a row on a mutant."""

    def __init__(self, tests, log):
        self.tests, self.log, self.known, self.flaky = tests, log, {}, set()

    def passes(self, test):
        if test not in self.known:
            ok = self.tests.one(test, self.log) == "pass"
            if not ok and self.tests.one(test, self.log) == "pass":
                ok = True
                self.flaky.add(test)
            self.known[test] = ok
        return self.known[test]


def confirm(tests, test, log, base):
    """A failure counts when the test fails again, run alone (twice more if it is flaky)."""
    for _ in range(2 if test in base.flaky else 1):
        if tests.one(test, log) != "fail":
            return False
    return True


def try_mutant(tree, tests, order, rest, log, quick, base):
    """('killed', test), ('survived', why) or ('build', None): the first test of order
    alone, then the rest of order in its order, then (unless quick) the rest of the suite,
    the longest first, --jobs at a time. A test known to fail on the unmutated tree is
    skipped."""
    notes, ran = [], set()

    def stage(names, jobs=None, longest_first=False):
        names = [t for t in names if t not in ran and base.known.get(t, True)]
        if not names:
            return None
        ran.update(names)
        if not build(tree, names, log):
            return "build", None
        if longest_first:  # every one of them runs unless one kills: the shortest wall time
            names.sort(key=lambda t: -tests.times.get(t, 0))
        for t, s in tests.run(names, log, jobs=jobs):
            if s == "fail":
                if confirm(tests, t, log, base):
                    return "killed", t
                notes.append("%s failed once (a flake)" % t)
            elif s == "hang":
                notes.append("%s hung" % t)
        return None

    for names, jobs, longest in ((order[:1], 1, False), (order[1:], None, False)) + \
            (() if quick else ((rest, None, True),)):
        r = stage(names, jobs, longest)
        if r:
            return r
    return "survived", "; ".join(notes + ["its group's tests pass" if quick else "every test passes"])


def main():
    signal.signal(signal.SIGTERM, lambda sig, frame: sys.exit(128 + sig))  # the finally clauses run
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--wait", type=int, default=15)
    ap.add_argument("--save-seed", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--min-killed", type=float, default=95.0)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--start", type=int, default=1)
    ap.add_argument("--list", default=os.path.join(HERE, "mutations.txt"))
    ap.add_argument("--groups", default=os.path.join(HERE, "groups.txt"))
    ap.add_argument("--survivors", default=os.path.join(HERE, "survivors.txt"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    global WAIT_S
    WAIT_S = max(1, a.wait)
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
        path = test_path(ROOT, t)
        if not path or not os.path.exists(path):
            print("STALE    group test %s: %s" % (t, "no " + os.path.relpath(path, ROOT) if path else
                                                  "not test_NAME, e2e/NAME or checks/NAME"))
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
    t0 = time.time()
    copy_tree(tree)
    if not build(tree, None, os.path.join(logs, "baseline.log")):
        print("the unmutated copy does not build; see %s/baseline.log" % logs)
        return 2
    print("copied and built (%.0f s)" % (time.time() - t0), flush=True)
    times = load_times()
    tests = Tests(tree, a.timeout, max(1, a.jobs), times)
    base = Baseline(tests, os.path.join(logs, "baseline.log"))
    source = KILLERS if os.path.exists(KILLERS) else SEED if os.path.exists(SEED) else None
    killers = load_killers(source) if source else {}
    print("killers tried first: %s; tests wait %d s (WAIT_S)" % (
        "%d from %s" % (len(killers), os.path.relpath(source, ROOT)) if source else "none known", WAIT_S), flush=True)
    suite = suite_tests(tree)

    def tests_of(m):
        """The last killer; else the killers of other mutations of its file, most kills
        first; then its group."""
        if m["name"] in killers:
            first = [killers[m["name"]]]
        else:
            same_file = collections.Counter(killers[o["name"]] for o in all_muts
                                            if o["file"] == m["file"] and o["name"] in killers)
            first = [t for t, _ in same_file.most_common()]
        first = [t for t in first if t in suite]  # a killer since moved or removed is no test now
        return first + [t for t in group_of(groups, m["file"]) if t not in first]
    all_muts = parse(a.list)
    # the tests that killed these mutations last time, asked on the unmutated tree up front,
    # side by side (the others are asked when they first fail on a mutant)
    first = sorted({killers[m["name"]] for m in live if m["name"] in killers and killers[m["name"]] in suite},
                   key=lambda t: -times.get(t, 0))
    if first and build(tree, first, base.log):
        for t, s in tests.run(first, base.log, stop_at_fail=False):
            if s == "pass":
                base.known[t] = True
        for t in first:
            if t not in base.known:  # it failed (or hung): again, alone; passing now, it is flaky
                base.known[t] = tests.one(t, base.log) == "pass"
                if base.known[t]:
                    base.flaky.add(t)
        bad = [t for t in first if not base.known[t]]
        print("baseline: %d killers asked (%.0f s)%s%s" % (
            len(first), time.time() - t0, "; flaky: " + " ".join(sorted(base.flaky)) if base.flaky else "",
            "; failing unmutated: " + " ".join(bad) if bad else ""), flush=True)
    # in the order of their files (the list's order within a file): a file's mutants one
    # after another cost one compile each
    files = list(dict.fromkeys(m["file"] for m in live))
    live.sort(key=lambda m: files.index(m["file"]))
    killed, survived = [], []
    for i, m in enumerate(live, 1):
        path = os.path.join(tree, m["file"])
        orig = open(path).read()
        mutated = orig.replace(m["find"], m["replace"], 1)
        order = tests_of(m)
        rest = [t for t in suite if t not in order]
        t = time.time()
        log = os.path.join(logs, "%03d.log" % i)
        while True:
            open(path, "w").write(mutated)
            try:
                status, what = try_mutant(tree, tests, order, rest, log, a.quick, base)
            finally:
                open(path, "w").write(orig)  # a fresh mtime: make rebuilds what the mutant touched
            if status != "killed" or what in base.known:
                break
            # the killer was never asked on the unmutated tree: ask it now
            flaky_before = what in base.flaky
            if not build(tree, [what], log) or not base.passes(what):
                continue  # it fails unmutated too: the mutant runs again without it
            if what in base.flaky and not flaky_before:  # flaky: a third failure in a row
                open(path, "w").write(mutated)
                try:
                    third = build(tree, [what], log) and tests.one(what, log) == "fail"
                finally:
                    open(path, "w").write(orig)
                if not third:
                    status, what = "survived", "%s failed twice, but it is flaky and passed the third time" % what
            break
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
            killers[m["name"]] = what
            save_killers(killers)
            if m["name"] in known:  # a survivor no more: its explanation would mislead
                errors.append(m["name"])
                print("ERROR    %s: killed, but explained as a survivor in %s (remove it there)" % (
                    m["name"], os.path.relpath(a.survivors, ROOT)), flush=True)
        save_times(times)
    if a.save_seed:
        names = {m["name"] for m in all_muts}
        save_killers({n: t for n, t in killers.items() if n in names}, SEED,
                     "# The test that killed each mutation (TEST<tab>NAME), tried first by tests/mutants/run.py\n"
                     "# where build/mutants-killers.txt is absent; rewritten by run.py --save-seed.\n")
        print("seed written: %s" % os.path.relpath(SEED, ROOT))
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
