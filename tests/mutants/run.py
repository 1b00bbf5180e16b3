#!/usr/bin/env python3
"""Mutation testing: each mutation in tests/mutants/mutations.txt (a plausible bug: an exact
snippet of a file and its replacement) is applied alone to a scratch copy of the tree, and
`make test` runs there. A mutation the suite lets pass SURVIVED; one whose snippet is no
longer in its file (the code moved on) is STALE; both are errors, and so is a mutation that
does not build or a snippet found more than once. Exit status 0 only when every mutation
was killed.

usage: tests/mutants/run.py [--check] [--keep] [--timeout S] [--list FILE] [NAME-PART...]
  --check     only check that every snippet is found exactly once (no builds)
  --keep      keep the scratch copy (its path is printed)
  NAME-PART   run only the mutations whose name contains one of these

The copy is the working tree as it is (committed or not, untracked files included, build
outputs excluded); it is built once, and each mutant rebuilds what its file touches. A
mutant's suite stops at its first failing test (CULEAK_TEST_FAIL_FAST)."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def parse(path):
    """Blocks of `name:`, `file:`, then one or more `find:` lines and `replace:` lines
    (several lines of one key join with newlines); '#' starts a comment line."""
    muts, cur, key = [], None, None
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
        key = k
    del key
    for m in muts:
        if not m.get("file") or not m["find"] or not m["replace"]:
            sys.exit("%s:%d: mutation %r needs file:, find: and replace:" % (path, m["line"], m["name"]))
        m["find"] = "\n".join(m["find"])
        m["replace"] = "\n".join(m["replace"])
    return muts


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


def make_test(tree, timeout, log):
    """(status, failed tests): 'pass', 'fail', 'timeout' or 'build'."""
    env = dict(os.environ, BUILD="build", CULEAK_TEST_FAIL_FAST="1")
    env.pop("MAKEFLAGS", None)
    env.pop("MAKELEVEL", None)
    units = sorted("build/tests/" + f[:-2] for f in os.listdir(os.path.join(tree, "tests", "unit"))
                   if f.startswith("test_") and f.endswith(".c"))
    build = subprocess.run(["make", "-j2", "all"] + units, cwd=tree, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    if build.returncode:
        open(log, "wb").write(build.stdout)
        return "build", []
    try:
        r = subprocess.run(["make", "-j2", "test"], cwd=tree, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        open(log, "wb").write(e.stdout or b"")
        return "timeout", []
    open(log, "wb").write(r.stdout)
    out = r.stdout.decode(errors="replace")
    failed = [l.split()[1] for l in out.splitlines() if l.startswith("FAIL ")]
    return ("pass" if r.returncode == 0 else "fail"), failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--list", default=os.path.join(ROOT, "tests", "mutants", "mutations.txt"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    muts = parse(a.list)
    if a.names:
        muts = [m for m in muts if any(p in m["name"] for p in a.names)]
    errors = []
    for m in muts:
        why = locate(ROOT, m)
        if why:
            where = os.path.relpath(a.list, ROOT) if a.list.startswith(ROOT + os.sep) else a.list
            print("STALE    %s: %s (%s:%d)" % (m["name"], why, where, m["line"]), flush=True)
            errors.append(m["name"])
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
    status, failed = make_test(tree, a.timeout, os.path.join(logs, "baseline.log"))
    if status != "pass":
        print("the unmutated copy does not pass `make test` (%s: %s); see %s/baseline.log"
              % (status, " ".join(failed), logs))
        return 2
    print("baseline: make test passes (%.0f s)" % (time.time() - t0), flush=True)
    killed, survived = [], []
    for i, m in enumerate(live, 1):
        path = os.path.join(tree, m["file"])
        orig = open(path).read()
        open(path, "w").write(orig.replace(m["find"], m["replace"], 1))
        t = time.time()
        log = os.path.join(logs, "%02d.log" % i)
        try:
            status, failed = make_test(tree, a.timeout, log)
        finally:
            open(path, "w").write(orig)  # a fresh mtime: make rebuilds what the mutant touched
        took = time.time() - t
        if status == "pass":
            survived.append(m["name"])
            print("SURVIVED %s (%.0f s)" % (m["name"], took), flush=True)
        elif status == "build":
            errors.append(m["name"])
            print("ERROR    %s: does not build (%s)" % (m["name"], log), flush=True)
        else:
            killed.append(m["name"])
            print("killed   %s by %s (%.0f s)" % (m["name"], "timeout" if status == "timeout" else
                                                 " ".join(failed) or "make test", took), flush=True)
    print("%d mutations: %d killed, %d survived, %d stale or in error (%.0f min)"
          % (len(muts), len(killed), len(survived), len(errors), (time.time() - t0) / 60))
    if survived:
        print("survived: " + "; ".join(survived))
    if errors:
        print("stale or in error: " + "; ".join(errors))
    if a.keep or survived or errors:
        print("scratch copy kept: %s (logs in .mutant-logs)" % tree)
    else:
        shutil.rmtree(tree, ignore_errors=True)
    return 0 if not survived and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
