"""The job of tests/e2e/attach_python.sh: `sleep DIR` sleeps 50 ms at a time (time.sleep:
clock_nanosleep, the call culeak's injector interrupts), `busy DIR` computes in a loop
(the main thread is borrowed where it runs); each turn is checked (no sleep ends early,
every sum is right) until DIR/end exists. Prints the same lines traced or not; any
exception ends it with status 1."""
import os
import sys
import time

mode, d = sys.argv[1], sys.argv[2]
end = os.path.join(d, "end")
turns = early = wrong = 0
want = sum(i * 0.5 for i in range(2000))
print(f"{mode}: running", flush=True)
try:
    while not os.path.exists(end):
        turns += 1
        if mode == "sleep":
            t0 = time.monotonic()
            time.sleep(0.05)
            if time.monotonic() - t0 < 0.05:
                early += 1
        else:
            for _ in range(50):
                if sum(i * 0.5 for i in range(2000)) != want:
                    wrong += 1
except BaseException as e:  # noqa: BLE001 - any exception is the failure this job reports
    print(f"{mode}: exception {e!r}", file=sys.stderr)
    sys.exit(1)
with open(os.path.join(d, "turns"), "w") as f:
    f.write(f"{turns}\n")
print(f"{mode}: {early} sleeps ended early, {wrong} wrong sums")
sys.exit(1 if early or wrong else 0)
