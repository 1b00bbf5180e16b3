#!/usr/bin/env python3
"""Compares `culeak check` with `compute-sanitizer --leak-check full` on one program
(run by tests/gpu/run.sh). Exit 0 when both report the same leaked bytes and allocations
and culeak's exit status says leak (1) or no leak (0) accordingly; 1 otherwise.

usage: compare_leaks.py NAME CULEAK_STDERR CULEAK_STATUS SANITIZER_OUTPUT

culeak prints `LEAK SUMMARY: B bytes leaked in N allocations from S call sites`;
compute-sanitizer `========= LEAK SUMMARY: B bytes leaked in N allocations` (or, with
nothing leaked, no LEAK SUMMARY but `ERROR SUMMARY: 0 errors`)."""
import re
import sys

SUMMARY = re.compile(r"LEAK SUMMARY: ([\d,]+) bytes leaked in ([\d,]+) allocations")


def summary(path, zero_if):
    """(bytes, allocations) of the last LEAK SUMMARY in the file; (0, 0) when there is none
    but zero_if matches; None when the file says neither."""
    text = open(path, errors="replace").read()
    found = SUMMARY.findall(text)
    if found:
        return tuple(int(x.replace(",", "")) for x in found[-1])
    if zero_if and re.search(zero_if, text):
        return (0, 0)
    return None


def main():
    name, culeak_err, status, sanitizer_out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    c = summary(culeak_err, None)
    s = summary(sanitizer_out, r"ERROR SUMMARY: 0 errors")
    problems = []
    if c is None:
        problems.append("culeak check printed no LEAK SUMMARY (exit %d)" % status)
    elif status != (1 if c[0] else 0):
        problems.append("culeak check exited %d with %d bytes leaked" % (status, c[0]))
    if s is None:
        problems.append("compute-sanitizer printed no LEAK SUMMARY nor ERROR SUMMARY: 0 errors")
    if c is not None and s is not None and c != s:
        problems.append("culeak %d bytes in %d allocations, compute-sanitizer %d bytes in %d allocations" % (c + s))
    fmt = lambda r: "%d bytes in %d allocations" % r if r else "no summary"
    print("%s: %s: culeak (exit %d) %s | compute-sanitizer %s%s" % (
        name, "ok" if not problems else "MISMATCH", status, fmt(c), fmt(s),
        "".join("\n%s:   %s" % (name, p) for p in problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
