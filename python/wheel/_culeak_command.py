"""The culeak command of the wheel: `culeak ...` (the console script pip installs) and
`python -m culeak ...` run the culeak program the culeak package beside this module holds,
in place of this process, with the arguments, signals and environment it was given: the
Python that starts it changes nothing the job sees. A module of its own, not part of the
package: in a job under culeak, `import culeak` finds culeak's helpers (culeak.py, on the
job's PYTHONPATH) first, and a culeak run from inside that job must still start."""
import os
import signal
import sys


def _original_environment():
    """The environment this process was started with: Python may have changed its own
    (PEP 538 sets LC_CTYPE where the locale is C); the kernel keeps the original."""
    try:
        with open("/proc/self/environ", "rb") as f:
            raw = f.read()
    except OSError:
        return os.environ
    env = {}
    for item in raw.split(b"\0"):
        key, eq, value = item.partition(b"=")
        if eq and key:
            env[key] = value
    return env


def main():
    exe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "culeak", "bin", "culeak")
    # Python ignores SIGPIPE and SIGXFSZ; an ignored signal stays ignored across exec,
    # and the job must get the default dispositions a shell gives it.
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execve(exe, ["culeak"] + sys.argv[1:], _original_environment())
    except OSError as e:
        sys.stderr.write("culeak: cannot run %s: %s\n" % (exe, e.strerror))
        return 127


if __name__ == "__main__":
    sys.exit(main())
