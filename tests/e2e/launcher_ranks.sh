#!/usr/bin/env bash
# `culeak record -o 'run/%h/%r.culeak'` under a cluster's launchers, faked by their
# environments (no GPU, the fake driver, python3 by ctypes): srun, torchrun and mpirun
# inside a Slurm allocation each give a rank its own file in a directory per host, made
# when missing; the reports name each process's rank and host; and the directories are
# not made through a link another user planted in a directory everyone may write.
set -u
. "$(dirname "$0")/lib.sh"
export FAKE_LIBCUDA=$B/fakecuda/libcuda.so.1
JOB=(python3 "$ROOT/tests/e2e/python/pprof_ranks.py" 2)
H=$(hostname)
unset RANK LOCAL_RANK OMPI_COMM_WORLD_RANK PMI_RANK PMIX_RANK MV2_COMM_WORLD_RANK SLURM_PROCID
cd "$T" || fail "no scratch directory"

# srun: one `culeak record` per task, SLURM_PROCID its rank
SLURM_PROCID=5 SLURM_LOCALID=1 "$B/culeak" record -o 'run/%h/%r.culeak' -- "${JOB[@]}" >out 2>&1 ||
    fail "record under srun: $(cat out)"
[ -f "run/$H/5.culeak" ] || fail "srun's task 5 did not write run/$H/5.culeak: $(find run; cat out)"
[ "$(stat -c %a run "run/$H")" = "700
700" ] || fail "the directories made are not private: $(stat -c '%a %n' run "run/$H")"
"$B/culeak" report "run/$H/5.culeak" >rep 2>&1 || fail "report: $(cat rep)"
grep -q "(rank 5) on $H" rep || fail "the report does not name rank 5 on $H: $(head -3 rep)"

# mpirun inside a Slurm allocation: the ranks of a node inherit their srun task's number
SLURM_PROCID=1 OMPI_COMM_WORLD_RANK=6 "$B/culeak" record -o 'run/%h/%r.culeak' -- "${JOB[@]}" >out 2>&1 ||
    fail "record under mpirun: $(cat out)"
[ -f "run/$H/6.culeak" ] || fail "mpirun's rank 6 did not write run/$H/6.culeak: $(find run)"
[ ! -e "run/$H/1.culeak" ] || fail "mpirun's rank took Slurm's task number"

# torchrun, DeepSpeed, Accelerate: culeak records the launcher, whose workers set RANK
"$B/culeak" record -o "$T/job/%h/%r.culeak" -- sh -c '
    RANK=0 LOCAL_RANK=0 "$@" & RANK=1 LOCAL_RANK=1 "$@"; wait' sh "${JOB[@]}" >out 2>&1 ||
    fail "record of a launcher: $(cat out)"
for r in 0 1; do
    [ -f "job/$H/$r.culeak" ] || fail "worker $r wrote no job/$H/$r.culeak: $(find job; cat out)"
done
"$B/culeak" report --format json job/"$H"/*.culeak >rep.json 2>/dev/null || fail "json report"
python3 - rep.json "$H" <<'PY' || fail "the JSON report lacks the ranks and host"
import json, sys
procs = json.load(open(sys.argv[1]))["processes"]
got = sorted((p["rank"], p["host"]) for p in procs)
assert got == [(0, sys.argv[2]), (1, sys.argv[2])], got
PY

# a link another user planted in a directory everyone may write is not followed
mkdir -m 1777 pub && mkdir -m 700 victim && ln -s "$T/victim" pub/run
if chown -h nobody pub/run 2>/dev/null; then
    "$B/culeak" record -o "$T/pub/run/%h/%r.culeak" -- "${JOB[@]}" >out 2>&1 &&
        fail "record followed the planted link: $(cat out)"
    grep -q "cannot write .*symbolic links" out || fail "no clear refusal: $(cat out)"
    [ -z "$(ls victim)" ] || fail "a directory was made through the planted link: $(ls victim)"
else
    echo "SKIP: a link of another user's needs root to be made here"
fi
echo "launcher_ranks: ok"
