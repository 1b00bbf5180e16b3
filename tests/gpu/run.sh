#!/usr/bin/env bash
# shellcheck disable=SC2094 # checked reads its ERRFILE only after the command wrote it
# Verifies culeak on a real GPU in one call, from the repository root of a machine with
# an NVIDIA GPU, nvcc, compute-sanitizer and python3 (torch, cupy, jax):
#   tests/gpu/run.sh [SECTION...]   dist/culeak-*.whl (made with `make wheel`) must be present
# culeak is installed from the wheel as a user installs it: pip, with no index, into a
# fresh venv that sees the machine's packages (torch, cupy, jax); nothing of a build tree
# is used, and nothing is added to LD_LIBRARY_PATH.
# SECTIONs (all when none is named): ledgers leaks cost ddp train blocks clean kill console jobs attach
# attach_busy e2e_attach (the e2e attach tests: carry build/fakecuda) holders torch_snapshot ranks
# tensor (TENSOR_REPS repetitions of bench/tensor_block.py, default 15; TENSOR_CPUS=2,3
# keeps its processes on those processors, TENSOR_FIXED=1 gives them one memory layout)
# Writes summaries to $OUT (default /tmp/culeak-gpu) and prints them; exit 0 when every
# check passed. Every check counts: a command whose status is not what it should be is a
# failure, with its output's tail (a console check, the screen it failed on).
set -u
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
OUT=${OUT:-/tmp/culeak-gpu}
mkdir -p "$OUT"
export PATH=/usr/local/cuda/bin:$PATH
W=$(mktemp -d)
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
fails=0
SECTIONS=" $* "
want() { [ "$SECTIONS" = "  " ] || [[ $SECTIONS == *" $1 "* ]]; }
exec 3>&1 # say writes here even inside a redirected call
say() { echo "$*" | tee -a "$SUMMARY" >&3; }
# checked WHAT ERRFILE CMD...: runs CMD (its redirections are the caller's); a non-zero exit
# is a failure, said with the tail of ERRFILE
checked() {
    local what=$1 err=$2
    shift 2
    "$@"
    local rc=$?
    if [ $rc -ne 0 ]; then
        say "$what: exit $rc"
        [ -s "$err" ] && tail -n 8 "$err" | tee -a "$SUMMARY" >&3
        fails=$((fails + 1))
    fi
    return $rc
}

say "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$SUMMARY"
nvcc --version | tail -n 2 | head -n 1 | tee -a "$SUMMARY"
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tee -a "$SUMMARY"

say "== install the wheel"
WHEEL=$(find "$ROOT/dist" -name 'culeak-*.whl' 2>/dev/null | sort | tail -n 1)
[ -n "$WHEEL" ] || { say "no dist/culeak-*.whl: make wheel, and carry dist/"; exit 1; }
VENV=$W/venv
# a venv with its own pip where python3-venv is installed, else the machine's pip run in it
python3 -m venv --system-site-packages "$VENV" 2>"$W/venv.err" ||
    { rm -rf "$VENV"; python3 -m venv --without-pip --system-site-packages "$VENV" 2>>"$W/venv.err"; } ||
    { say "python3 -m venv failed"; tee -a "$SUMMARY" <"$W/venv.err"; exit 1; }
start=$(date +%s.%N)
"$VENV/bin/python" -m pip install --no-index --no-deps "$WHEEL" >"$W/pip.out" 2>&1 ||
    { say "pip install failed"; tail -n 8 "$W/pip.out" | tee -a "$SUMMARY"; exit 1; }
say "$(basename "$WHEEL"): $(($(stat -c %s "$WHEEL") / 1024)) KiB, pip install $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
export CULEAK=$VENV/bin/culeak
say "$("$CULEAK" --version) from $("$VENV/bin/python" -c 'import culeak, os; print(os.path.dirname(culeak.__file__))')"
SHIM=$(dirname "$("$VENV/bin/python" -c 'import culeak; print(culeak.__file__)')")/lib/culeak
for f in "$SHIM"/*.so "$SHIM/../../bin/culeak"; do
    ldd "$f" | grep -E 'not found' && { say "$(basename "$f"): dependencies missing"; exit 1; }
done
# a torch job holds the wheel's shim, its private libunwind and the bridge, and no libunwind,
# libdw or libelf of the machine's
"$CULEAK" record -o "$W/maps.culeak" -- python3 -c \
    'import torch; torch.zeros(1, device="cuda"); print(open("/proc/self/maps").read())' >"$W/maps.txt" 2>"$W/maps.err"
for lib in "$SHIM/libculeak.so" "$SHIM/libculeak_unwind.so" "$SHIM/libculeak_torch.so" "$SHIM/../../../culeak.libs/libunwind-"; do
    grep -qF "$(realpath -m "$lib")" "$W/maps.txt" || { say "the torch job has no $(basename "$lib")"; fails=$((fails + 1)); }
done
others=$(grep -E '/lib(unwind|dw|elf)[-.][^/]*$' "$W/maps.txt" | grep -v '/culeak.libs/' | awk '{ print $6 }' | sort -u)
[ -z "$others" ] || { say "the torch job maps libraries culeak carries from elsewhere: $others"; fails=$((fails + 1)); }

say "== build test programs"
nvcc -g -lineinfo -o "$W/rt_static" tests/gpu/runtime_families.cu || fails=$((fails + 1))
nvcc -g -lineinfo -cudart shared -o "$W/rt_shared" tests/gpu/runtime_families.cu || fails=$((fails + 1))
gcc -std=c11 -g -I/usr/local/cuda/include -o "$W/drv" tests/gpu/driver_families.c \
    -L/usr/local/cuda/lib64/stubs -lcuda || fails=$((fails + 1))
nvcc -O2 -g -o "$W/alloc_loop" tests/gpu/alloc_loop.cu || fails=$((fails + 1))
for d in demo/*.cu; do
    [ -e "$d" ] || continue
    nvcc -g -lineinfo -Iinclude -o "$W/$(basename "$d" .cu)" "$d" || fails=$((fails + 1))
done

# record NAME [--exact] -- PROGRAM...: run under culeak record, match the ledger.
record() {
    local name=$1 exact=""; shift
    [ "$1" = --exact ] && { exact=--exact; shift; }
    shift # --
    rm -f "$W/$name".*.culeak
    "$CULEAK" record -o "$W/$name.%p.culeak" -- "$@" >"$W/$name.out" 2>"$W/$name.err"
    local rc=$?
    : >"$W/$name.jsonl"
    local f
    for f in "$W/$name".*.culeak; do
        [ -e "$f" ] || { say "$name: no recording"; fails=$((fails + 1)); return; }
        checked "$name: culeak dump $f" "$W/$name.dump.err" "$CULEAK" dump "$f" >>"$W/$name.jsonl" \
            2>"$W/$name.dump.err" || return
    done
    if [ $rc -ne 0 ]; then
        say "$name: program exited $rc"; tail -n 5 "$W/$name.err" | tee -a "$SUMMARY"
        fails=$((fails + 1)); return
    fi
    python3 tests/gpu/check.py "$name" "$W/$name.err" "$W/$name.jsonl" $exact | tee -a "$SUMMARY"
    [ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
}

if want ledgers; then
    say "== every allocation and free seen"
    record static-cudart --exact -- "$W/rt_static"
    record shared-cudart --exact -- "$W/rt_shared"
    record driver-api --exact -- "$W/drv"
    record torch-caching -- python3 tests/gpu/torch_ledger.py
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 record torch-nocache -- python3 tests/gpu/torch_ledger.py
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True record torch-expandable -- python3 tests/gpu/torch_ledger.py
    record cupy -- python3 tests/gpu/cupy_ledger.py
    XLA_PYTHON_CLIENT_PREALLOCATE=false record jax -- python3 tests/gpu/jax_ledger.py
fi
if want leaks; then
    say "== leaks: culeak check vs compute-sanitizer --leak-check full"
    # the same leaked bytes and allocations, and culeak's exit status 1 exactly when it found leaks
    for prog in rt_static drv loop_leak early_return ctor_leak double_alloc raii_ok; do
        [ -x "$W/$prog" ] || { say "$prog: not built"; fails=$((fails + 1)); continue; }
        "$CULEAK" check -- "$W/$prog" >/dev/null 2>"$W/check-$prog.txt"
        crc=$?
        compute-sanitizer --leak-check full "$W/$prog" >"$W/sanitizer-$prog.txt" 2>&1
        python3 tests/gpu/compare_leaks.py "$prog" "$W/check-$prog.txt" $crc "$W/sanitizer-$prog.txt" | tee -a "$SUMMARY"
        [ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
    done
fi
if want cost; then
    say "== cost on the real driver (cudaMalloc+cudaFree of 4 KiB)"
    for depth in 8 32 64; do
        base=$("$W/alloc_loop" 100000 $depth | sed -n 's/.*ns_per_pair=//p')
        traced=$(CULEAK_DEPTH=$depth "$CULEAK" record -o "$W/loop.culeak" -- "$W/alloc_loop" 100000 $depth |
            sed -n 's/.*ns_per_pair=//p')
        if ! [[ "$base" =~ ^[0-9.]+$ && "$traced" =~ ^[0-9.]+$ ]]; then
            say "depth $depth: alloc_loop gave no figure ('$base' without culeak, '$traced' with)"; fails=$((fails + 1))
            continue
        fi
        say "depth $depth: $base ns without culeak, $traced ns with culeak ($(stat -c %s "$W/loop.culeak") bytes recorded)"
    done
    # the frame-pointer walk and its caches give libunwind's stacks, through libtorch and
    # the interpreter too: every event's stack is also taken by libunwind alone
    CULEAK_UNWIND_CHECK=1 "$CULEAK" record -o "$W/unwind.culeak" -- python3 tests/gpu/keep_tensor.py 20 \
        >"$W/unwind.out" 2>&1
    note=$("$CULEAK" dump "$W/unwind.culeak" 2>/dev/null | grep -o 'unwind check: [0-9]* stacks compared[^"]*')
    if [[ "$note" =~ compared\ with\ libunwind\'s,\ 0\ differed$ ]]; then
        say "unwind check on a PyTorch job: $note"
    else
        say "FAIL unwind check on a PyTorch job: ${note:-no note}"; tail -n 5 "$W/unwind.out" | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
fi
if want ddp; then
    say "== a two-rank job (torchrun): ranks, devices, a leak planted on rank 1, merged report"
    # ddp NAME [--blocks]: ddp_leak.py under torchrun, 2 ranks, recorded per rank; with
    # --blocks the caching allocator is on and the growth is read from the tensors' blocks
    ddp() {
        local name=$1 blocks=${2:-}
        rm -f "$W/$name".*.culeak
        # NVLink multicast stays off on machines with several GPUs
        NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 ITERATIONS=10 "$CULEAK" record -o "$W/$name.%r.culeak" -- \
            torchrun --standalone --nproc_per_node 2 tests/gpu/ddp_leak.py >"$W/$name.out" 2>"$W/$name.err"
        local rc=$? dumps=() f
        for f in "$W/$name".*.culeak; do
            [ -e "$f" ] || continue
            checked "$name: culeak dump $f" "$f.err" "$CULEAK" dump "$f" >"$f.jsonl" 2>"$f.err" && dumps+=("$f.jsonl")
        done
        checked "$name: culeak report --format json" "$W/$name-report.err" \
            "$CULEAK" report --format json "$W/$name".*.culeak >"$W/$name-report.json" 2>"$W/$name-report.err"
        if [ $rc -ne 0 ]; then
            say "$name: torchrun exited $rc"; tail -n 8 "$W/$name.err" | tee -a "$SUMMARY"; fails=$((fails + 1))
        elif grep -q 'tracking off' "$W/$name.err"; then
            say "$name: FAIL $(grep -m1 'tracking off' "$W/$name.err")"; fails=$((fails + 1))
        else
            python3 tests/gpu/check_ddp.py ${blocks:+"$blocks"} "$W/$name.err" "$W/$name-report.json" "${dumps[@]}" | tee -a "$SUMMARY"
            [ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
        fi
        checked "$name: culeak report" "$W/$name-report.txt" "$CULEAK" report "$W/$name".*.culeak >"$W/$name-report.txt" 2>&1
    }
    PYTORCH_NO_CUDA_MEMORY_CACHING=1 ddp ddp
    ddp ddp-caching --blocks
fi
if want train; then
    say "== python frames and NVTX marks: demo/train_leak.py under culeak record --no-pool"
    # --no-pool sets PYTORCH_NO_CUDA_MEMORY_CACHING=1: every tensor is its own cudaMalloc, so
    # the leaked activations carry the stack of the Python line that made them.
    for variant in leaky fixed; do
        flag=; [ $variant = fixed ] && flag=--fixed
        "$CULEAK" record --no-pool -o "$W/train-$variant.culeak" -- python3 demo/train_leak.py --iterations 20 $flag \
            >"$W/train-$variant.out" 2>"$W/train-$variant.err"
        rc=$?
        checked "train_leak $variant: culeak dump" "$W/train-$variant.dump.err" \
            "$CULEAK" dump "$W/train-$variant.culeak" >"$W/train-$variant.jsonl" 2>"$W/train-$variant.dump.err"
        checked "train_leak $variant: culeak report --format json" "$W/train-$variant-report.err" \
            "$CULEAK" report --format json "$W/train-$variant.culeak" >"$W/train-$variant-report.json" \
            2>"$W/train-$variant-report.err"
        checked "train_leak $variant: culeak report" "$W/train-$variant-report.txt" \
            "$CULEAK" report "$W/train-$variant.culeak" >"$W/train-$variant-report.txt" 2>&1
        if [ $rc -ne 0 ]; then
            say "train_leak $variant: program exited $rc"; tail -n 8 "$W/train-$variant.err" | tee -a "$SUMMARY"
            fails=$((fails + 1))
        fi
    done
    say "train_leak: $(grep -c '"type":"pyframe"' "$W/train-leaky.jsonl") python frames recorded; $(tail -n 1 "$W/train-leaky.out")"
    grep '"type":"note"' "$W/train-leaky.jsonl" | tee -a "$SUMMARY"
    python3 tests/gpu/check_train_leak.py "$W/train-leaky.jsonl" "$W/train-fixed.jsonl" | tee -a "$SUMMARY"
    [ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
    # culeak's own report of the growth between two iterations names the leaking line
    LEAK_LINE=$(grep -n "# LEAK" demo/train_leak.py | cut -d: -f1)
    if checked "train_leak: culeak report --diff" "$W/train-leak-diff.txt" \
        "$CULEAK" report --diff 'iteration 5' 'iteration 15' "$W/train-leaky.culeak" >"$W/train-leak-diff.txt" 2>&1; then
        if grep -q "^  +[0-9]* bytes .* at .*train_leak.py:$LEAK_LINE$" "$W/train-leak-diff.txt"; then
            say "train_leak: ok   report --diff 'iteration 5' 'iteration 15' names train_leak.py:$LEAK_LINE"
        else
            say "train_leak: FAIL report --diff 'iteration 5' 'iteration 15' does not name train_leak.py:$LEAK_LINE"
            head -n 5 "$W/train-leak-diff.txt" | tee -a "$SUMMARY"
            fails=$((fails + 1))
        fi
    fi
fi
if want blocks; then
    say "== blocks of the frameworks' pools (caching on): the diff between marks names the line"
    # diff_names NAME A B PROGRAM.py [ARGS]: record, diff marks A and B, expect the KEEP line
    # of PROGRAM.py as the site that grew most (with its "via" library line when it has one).
    diff_names() {
        local name=$1 a=$2 b=$3 prog=$4; shift 4
        local line; line=$(grep -n '# KEEP$' "$prog" | cut -d: -f1)
        "$CULEAK" record -o "$W/$name.culeak" -- python3 "$prog" "$@" >"$W/$name.out" 2>"$W/$name.err"
        local rc=$?
        "$CULEAK" report --diff "$a" "$b" "$W/$name.culeak" >"$W/$name-diff.txt" 2>&1
        # the row of blocks that grew most (pools' tensors and arrays), else of any memory
        local top; top=$(grep -m1 -E '^  \+[0-9]+ bytes \(.* blocks\) ' "$W/$name-diff.txt" ||
            grep -m1 -E '^  \+[0-9]+ bytes' "$W/$name-diff.txt")
        if [ $rc -ne 0 ]; then
            say "$name: program exited $rc"; tail -n 5 "$W/$name.err" | tee -a "$SUMMARY"; fails=$((fails + 1))
        elif grep -q 'tracking off' "$W/$name.err"; then
            say "$name: FAIL $(grep 'tracking off' "$W/$name.err")"; fails=$((fails + 1))
        elif echo "$top" | grep -q "$(basename "$prog"):$line\b"; then
            say "$name: ok: $top"
        else
            say "$name: FAIL: expected $(basename "$prog"):$line first; got: ${top:-no growth}"; fails=$((fails + 1))
        fi
        # the growth suspects name the same line, without a pair of marks to choose
        "$CULEAK" report --suspects "$W/$name.culeak" >"$W/$name-suspects.txt" 2>&1
        local suspect; suspect=$(grep -m1 -E "^GROWS .*$(basename "$prog"):$line\b" "$W/$name-suspects.txt")
        if [ -n "$suspect" ]; then
            say "$name: ok: suspect $suspect"
        else
            say "$name: FAIL: $(basename "$prog"):$line is not a suspect:"; head -n 6 "$W/$name-suspects.txt" | tee -a "$SUMMARY"
            fails=$((fails + 1))
        fi
        # its stack folds the interpreter's frames after the user's, as the leak report does
        if grep -Eq '^    #[0-9]+ +(PyEval_EvalCode|_PyRun_SimpleFileObject|Py_RunMain|pymain_)' "$W/$name-suspects.txt"; then
            say "$name: FAIL: the suspects' stacks list interpreter frames:"
            grep -m3 -E '^    #[0-9]+ +(PyEval_EvalCode|_PyRun_SimpleFileObject|Py_RunMain|pymain_)' "$W/$name-suspects.txt" |
                tee -a "$SUMMARY"
            fails=$((fails + 1))
        fi
        # the HTML page draws the first suspect's forecast (the device's memory in use to its
        # capacity), spoken of in the past: the job has ended
        "$CULEAK" report --format html -o "$W/$name.html" "$W/$name.culeak" 2>/dev/null
        if grep -q '"fill":{"device":' "$W/$name.html" && grep -q 'would have filled device' "$W/$name.html"; then
            say "$name: ok: the page forecasts $(grep -o '"fill":{[^}]*"text":"[^"]*"' "$W/$name.html" | head -1 | sed 's/.*"text"://')"
        else
            say "$name: FAIL: the HTML page has no forecast for its suspects"; fails=$((fails + 1))
        fi
    }
    diff_names torch-blocks 'iteration 5' 'iteration 15' tests/gpu/keep_tensor.py 20
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True diff_names torch-blocks-expandable 'iteration 5' 'iteration 15' \
        tests/gpu/keep_tensor.py 20
    # two runs compared (report --baseline): the loop-leak demo on the real driver, 5
    # iterations against 12, each run's cudart loaded where ASLR put it: its leaking line
    # GROWN by 7 blocks, the exit status --error-exitcode asks for, and the page draws both
    leak_line=$(grep -n 'the previous block is still allocated' demo/loop_leak.cu | cut -d: -f1)
    "$CULEAK" record -o "$W/loop-5.culeak" -- "$W/loop_leak" -n 5 >/dev/null 2>&1
    "$CULEAK" record -o "$W/loop-12.culeak" -- "$W/loop_leak" -n 12 >/dev/null 2>&1
    "$CULEAK" report --baseline "$W/loop-5.culeak" "$W/loop-12.culeak" --error-exitcode 3 \
        >"$W/loop-baseline.txt" 2>&1
    cmp_rc=$?
    "$CULEAK" report --baseline "$W/loop-5.culeak" "$W/loop-12.culeak" --format html \
        -o "$W/loop-baseline.html" 2>/dev/null
    if [ $cmp_rc -eq 3 ] && grep -qE "^GROWN \+28.0 MiB \(29360128 bytes\) .* from .*loop_leak.cu:$leak_line\b" "$W/loop-baseline.txt" &&
        grep -q '"baseline":{"name":' "$W/loop-baseline.html"; then
        say "loop-leak-baseline: ok (exit 3): $(grep -m1 '^COMPARE SUMMARY' "$W/loop-baseline.txt")"
    else
        say "loop-leak-baseline: FAIL: exit $cmp_rc (3 wanted), loop_leak.cu:$leak_line not GROWN by 28 MiB, or the page has no baseline:"
        head -n 14 "$W/loop-baseline.txt" | tee -a "$SUMMARY"; fails=$((fails + 1))
    fi
    diff_names hf-logits 'iteration 3' 'iteration 9' tests/gpu/hf_logits.py
    grep -q ', via transformers/' "$W/hf-logits-diff.txt" && say "hf-logits: via a transformers line" ||
        { say "hf-logits: FAIL: no 'via transformers/' line"; fails=$((fails + 1)); }
    # one row per cause: the kept tensors' line once, the segments as the pool's line, and
    # allocated/reserved at each mark equal to what the job prints from torch.cuda
    rows_check() {
        local name=$1 prog=$2; shift 2
        "$CULEAK" record -o "$W/$name.culeak" -- python3 "$prog" "$@" >"$W/$name.out" 2>"$W/$name.err" ||
            { say "$name: program exited $?"; tail -n 5 "$W/$name.err" | tee -a "$SUMMARY"; fails=$((fails + 1)); return; }
        "$CULEAK" report --diff 'iteration 2' 'iteration 8' "$W/$name.culeak" >"$W/$name-diff.txt" 2>&1
        "$CULEAK" report --format json --diff 'iteration 2' 'iteration 8' "$W/$name.culeak" >"$W/$name-diff.json" 2>&1
        python3 tests/gpu/check_rows.py "$W/$name.out" "$W/$name-diff.txt" "$W/$name-diff.json" "$prog" \
            'iteration 2' 'iteration 8' | tee -a "$SUMMARY"
        [ "${PIPESTATUS[0]}" -eq 0 ] || { head -n 8 "$W/$name-diff.txt" | tee -a "$SUMMARY"; fails=$((fails + 1)); }
    }
    rows_check pool-rows tests/gpu/pool_rows.py 12
    PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True rows_check pool-rows-expandable tests/gpu/pool_rows.py 12
    # the GPT-2 loop: its kept logits are one row, the segments the pool's line
    hf_line=$(grep -n '# KEEP$' tests/gpu/hf_logits.py | cut -d: -f1)
    hf_rows=$(grep -cE "^  [+-][0-9]+ bytes .*hf_logits.py:$hf_line\b" "$W/hf-logits-diff.txt")
    if [ "$hf_rows" = 1 ] && ! grep -qE '^  [+-][0-9]+ bytes .*(alloc_block|CUDACachingAllocator)' "$W/hf-logits-diff.txt"; then
        say "hf-logits: ok: one row at hf_logits.py:$hf_line; $(grep -m1 '^  pytorch caching allocator' "$W/hf-logits-diff.txt")"
    else
        say "hf-logits: FAIL: $hf_rows rows at hf_logits.py:$hf_line, or a row of the allocator:"
        head -n 8 "$W/hf-logits-diff.txt" | tee -a "$SUMMARY"; fails=$((fails + 1))
    fi
    diff_names cupy-blocks 'iteration 3' 'iteration 9' tests/gpu/cupy_blocks.py
    diff_names numba 'iteration 3' 'iteration 9' tests/gpu/numba_keep.py
    diff_names loader 'iteration 3' 'iteration 9' tests/gpu/loader_keep.py 12
    # the pin-memory thread's pinned blocks: at its Python line, never the host allocator's frame
    "$CULEAK" report "$W/loader.culeak" >"$W/loader-report.txt" 2>&1
    pin_row=$(grep -m1 -E '^CACHED .*\(pinned\) from ' "$W/loader-report.txt")
    case $pin_row in
    *"pin_memory.py:"*) say "loader-pinned: ok: $pin_row" ;;
    *) say "loader-pinned: FAIL: the pinned row is not at the pin-memory thread's line: ${pin_row:-none}"
       fails=$((fails + 1)) ;;
    esac
    # for information (not a check): the leak check of the torch loop; blocks live at exit are
    # the pool's, its segments are reported as cache
    "$CULEAK" check -- python3 tests/gpu/keep_tensor.py 5 >/dev/null 2>"$W/torch-blocks-check.txt"
    say "torch-blocks check (information): exit $? $(grep -E '^(LEAK|CACHE) SUMMARY' "$W/torch-blocks-check.txt" | paste -sd' ')"
    # memory made on autograd's threads (no Python frames): the kept input gradients at the
    # torch.autograd.grad line, the parameters' gradients at the loss.backward() line
    diff_names torch-backward 'iteration 5' 'iteration 15' tests/gpu/backward_site.py 20
    grep -Eq "^  \+[0-9]+ bytes \(.* blocks\) .*backward_site.py:[0-9]+ \(autograd backward\)" "$W/torch-backward-diff.txt" &&
        say "torch-backward: the diff marks the growth (autograd backward)" ||
        { say "torch-backward: FAIL: no '(autograd backward)' row in the diff"; fails=$((fails + 1)); }
    "$CULEAK" report --format json --at 'iteration 10' "$W/torch-backward.culeak" >"$W/torch-backward-at.json" 2>&1
    python3 tests/gpu/check_backward_site.py "$W/torch-backward-at.json" \
        "$(grep -n '# BACKWARD$' tests/gpu/backward_site.py | cut -d: -f1)" | tee -a "$SUMMARY"
    [ "${PIPESTATUS[0]}" -eq 0 ] || fails=$((fails + 1))
    # a clean CuPy job through NumPy's ufunc override: check exits 0, and what the pool holds
    # at exit is at the job's lines, not NumPy's frames
    "$CULEAK" check -- python3 tests/gpu/cupy_ufunc.py >"$W/cupy-ufunc.out" 2>"$W/cupy-ufunc-check.txt"
    cupy_ufunc_rc=$?
    "$CULEAK" record -o "$W/cupy-ufunc.culeak" -- python3 tests/gpu/cupy_ufunc.py >/dev/null 2>&1
    # at exit the pool holds only its segments (the pool's own line); at the peak its blocks
    # are live, each at the job's line
    "$CULEAK" report --peak "$W/cupy-ufunc.culeak" >"$W/cupy-ufunc-report.txt" 2>&1
    if [ $cupy_ufunc_rc -eq 0 ] && grep -q 'cupy_ufunc.py:' "$W/cupy-ufunc-report.txt" &&
        ! grep -Eq 'PyUFunc|_multiarray_umath' "$W/cupy-ufunc-report.txt"; then
        say "cupy-ufunc: ok: check exits 0, the pool's blocks at the peak at cupy_ufunc.py lines"
    else
        say "cupy-ufunc: FAIL: check exit $cupy_ufunc_rc; report:"; head -n 12 "$W/cupy-ufunc-report.txt" | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
fi
if want blocks; then
    say "== the console on blocks: a breakpoint on the kept tensor's line"
    bash tests/gpu/console_blocks.sh "$W" >"$W/console-blocks.txt" 2>&1
    console_blocks_rc=$?
    tee -a "$SUMMARY" <"$W/console-blocks.txt"
    [ $console_blocks_rc -eq 0 ] || { say "console_blocks: exit $console_blocks_rc"; fails=$((fails + 1)); }
fi
if want clean; then
    say "== clean jobs pass check: caching allocators' memory (device and pinned) is cached, libraries' one-time memory held"
    # clean NAME PROGRAM.py: `culeak check` exits 0 and reports no LEAKED row
    clean() {
        local name=$1 prog=$2
        "$CULEAK" check -- python3 "$prog" >"$W/$name.out" 2>"$W/$name-check.txt"
        local rc=$?
        local sums; sums=$(grep -E '^(LEAK|CACHE|LIBRARY) SUMMARY' "$W/$name-check.txt" | paste -sd' ')
        if [ $rc -eq 0 ] && ! grep -q '^LEAKED' "$W/$name-check.txt"; then
            say "$name: ok   check exit 0: $sums"
        else
            say "$name: FAIL check exit $rc: $sums"; grep -E '^LEAKED' "$W/$name-check.txt" | head -n 8 | tee -a "$SUMMARY"
            tail -n 3 "$W/$name.out" | tee -a "$SUMMARY"
            fails=$((fails + 1))
        fi
        grep '^  used default suppression' "$W/$name-check.txt" | tee -a "$SUMMARY"
    }
    clean torch-clean tests/gpu/clean_job.py
    clean jax-clean tests/gpu/jax_clean.py
    clean cupy-clean tests/gpu/cupy_clean.py
    clean pinned-keep tests/gpu/pinned_keep.py
    # the kept pinned tensors: 4 MiB in 4 allocations held by the pytorch caching allocator at the KEEP line
    line=$(grep -n '# KEEP$' tests/gpu/pinned_keep.py | cut -d: -f1)
    row=$(grep -m1 -E "^CACHED .*\(pinned\) from .*pinned_keep\.py:$line \[held by the pytorch caching allocator\]" \
        "$W/pinned-keep-check.txt")
    if echo "$row" | grep -q '^CACHED 4\.0 MiB (4194304 bytes) in 4 allocations'; then
        say "pinned-keep: ok   $row"
    else
        say "pinned-keep: FAIL no CACHED row of 4 MiB in 4 pinned allocations at pinned_keep.py:$line; got: ${row:-none}"
        grep -E '^(CACHED|LEAKED)' "$W/pinned-keep-check.txt" | head -n 6 | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
    # for information (not a check): what the default suppressions hide in the clean jobs
    for name in torch-clean jax-clean cupy-clean; do
        prog=tests/gpu/$(echo "$name" | sed 's/torch-clean/clean_job/; s/-clean/_clean/').py
        "$CULEAK" check --no-default-suppressions -- python3 "$prog" >/dev/null 2>"$W/$name-nodefault.txt"
        say "$name --no-default-suppressions (information): exit $? $(grep -E '^LEAK SUMMARY' "$W/$name-nodefault.txt")"
        grep -E '^LEAKED' "$W/$name-nodefault.txt" | head -n 6 | tee -a "$SUMMARY"
    done
fi
if want kill; then
    say "== a PyTorch job killed by SIGKILL mid-run: its recording holds every allocation made"
    "$CULEAK" record --no-pool -o "$W/kill.culeak" -- python3 tests/gpu/kill_mid_run.py \
        >"$W/kill.out" 2>"$W/kill.err" &
    rec_pid=$!
    job=""
    for _ in $(seq 600); do # the job's pid, then 30 allocations, within 60 s
        job=$(awk '$1 == "pid" {print $2}' "$W/kill.out")
        [ -n "$job" ] && [ "$(grep -c '^allocated' "$W/kill.out")" -ge 30 ] && break
        sleep 0.1
    done
    [ -n "$job" ] && kill -KILL "$job"
    wait "$rec_pid"
    kill_rc=$?
    made=$(awk '$1 == "allocated" {k = $2} END {print k + 0}' "$W/kill.out")
    "$CULEAK" dump "$W/kill.culeak" >"$W/kill.jsonl" 2>"$W/kill.dump.err"
    dump_rc=$?
    seen=$(grep -c '"type":"alloc".*"size":4194304,' "$W/kill.jsonl")
    exits=$(grep -c '"type":"exit"' "$W/kill.jsonl")
    lost=$(grep -c '"type":"lost"' "$W/kill.jsonl")
    say "kill: record exit $kill_rc (137 wanted), dump exit $dump_rc (3: ends before its process), $made tensors made before the kill, $seen in the recording, $exits EXIT and $lost LOST records (0 wanted)"
    # the tensor after the last one printed may have been made too before the kill
    if [ "$kill_rc" -ne 137 ] || [ "$dump_rc" -ne 3 ] || [ "$made" -lt 30 ] || [ "$seen" -lt "$made" ] ||
        [ "$seen" -gt $((made + 1)) ] || [ "$exits" -ne 0 ] || [ "$lost" -ne 0 ]; then
        tail -n 5 "$W/kill.err" "$W/kill.dump.err" | tee -a "$SUMMARY" >&3
        fails=$((fails + 1))
    fi
fi
if want console; then
    say "== console on a real demo"
    bash tests/gpu/console.sh "$W" "$W" >"$W/console.txt" 2>&1
    console_rc=$?
    tee -a "$SUMMARY" <"$W/console.txt"
    [ $console_rc -eq 0 ] || { say "console: exit $console_rc"; fails=$((fails + 1)); }
fi
if want jobs; then
    say "== a job of two processes (torch, spawn) recorded into one name; the same recording twice"
    rm -f "$W"/spawn.culeak*
    "$CULEAK" record --no-pool -o "$W/spawn.culeak" -- python3 tests/gpu/spawn_child.py >"$W/spawn.out" 2>"$W/spawn.err"
    if grep -qE "^culeak record: [0-9]+ processes wrote recordings: .*/spawn.culeak .*/spawn.culeak\.[0-9]+" "$W/spawn.err"; then
        say "spawn: record names the recordings: $(grep -c . <<<"$(ls "$W"/spawn.culeak*)") files"
    else
        say "spawn: record does not name the recordings"; tail -n 5 "$W/spawn.err" | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
    "$CULEAK" report "$W/spawn.culeak" >/dev/null 2>"$W/spawn-report.err"
    grep -q "more recording.* of the job that wrote .*spawn.culeak .* not read" "$W/spawn-report.err" ||
        { say "spawn: report of the parent alone does not warn of the child's"; fails=$((fails + 1)); }
    "$CULEAK" report "$W"/spawn.culeak* "$W"/spawn.culeak* >"$W/spawn-twice.txt" 2>"$W/spawn-twice.err"
    "$CULEAK" report "$W"/spawn.culeak* >"$W/spawn-once.txt" 2>/dev/null
    if [ "$(grep '^LEAK SUMMARY' "$W/spawn-twice.txt")" = "$(grep '^LEAK SUMMARY' "$W/spawn-once.txt")" ] &&
        grep -q "read once" "$W/spawn-twice.err"; then
        say "spawn: the recordings twice are read once: $(grep '^LEAK SUMMARY' "$W/spawn-once.txt")"
    else
        say "spawn: the recordings given twice are counted twice"; fails=$((fails + 1))
    fi
fi
if want attach; then
    say "== attach: culeak record --pid on a running PyTorch job (caching allocator on) keeping a tensor per iteration"
    # the job allows any tracer itself (prctl PR_SET_PTRACER_ANY): the attach needs neither
    # kernel.yama.ptrace_scope=0 nor CAP_SYS_PTRACE
    rm -f "$W"/attach.*
    # the machine's python3 sees torch (in the user's site-packages, which a venv leaves
    # out); the wheel's culeak module, for the job's marks, from the venv
    venv_site=$("$VENV/bin/python" -c 'import culeak, os; print(os.path.dirname(os.path.dirname(culeak.__file__)))')
    PYTHONPATH=$venv_site${PYTHONPATH:+:$PYTHONPATH} python3 tests/gpu/attach_job.py "$W/attach" \
        >"$W/attach-job.out" 2>"$W/attach-job.err" &
    ajob=$!
    for _ in $(seq 1200); do [ -e "$W/attach.ready" ] || ! kill -0 $ajob 2>/dev/null && break; sleep 0.1; done
    start=$(date +%s.%N)
    "$CULEAK" record --pid $ajob -o "$W/attach.culeak" >"$W/attach-rec.out" 2>"$W/attach-rec.err" &
    arec=$!
    for _ in $(seq 1200); do grep -q "attached to pid" "$W/attach-rec.err" || ! kill -0 $arec 2>/dev/null && break; sleep 0.1; done
    say "attach: record --pid took $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s to attach"
    # culeak's Python side runs on the job's main thread (a pending call) once the stream is up
    for _ in $(seq 600); do grep -aqs "caching allocator tracked from now on\|Python side failed" "$W/attach.culeak" && break; sleep 0.1; done
    say "attach: the Python side ran $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s after the attach began"
    touch "$W/attach.go"
    wait $ajob; ajob_rc=$?
    wait $arec; arec_rc=$?
    line=$(grep -n '# KEEP$' tests/gpu/attach_job.py | cut -d: -f1)
    "$CULEAK" report --diff 'iteration 5' 'iteration 15' "$W/attach.culeak" >"$W/attach-diff.txt" 2>&1
    "$CULEAK" report "$W/attach.culeak" >"$W/attach-report.txt" 2>&1
    "$CULEAK" dump "$W/attach.culeak" | grep '"type":"note"' >"$W/attach-notes.txt"
    tee -a "$SUMMARY" <"$W/attach-notes.txt"
    top=$(grep -m1 -E '^  \+[0-9]+ bytes \(.* blocks\) ' "$W/attach-diff.txt" || grep -m1 -E '^  \+[0-9]+ bytes' "$W/attach-diff.txt")
    if [ $ajob_rc -ne 0 ] || ! grep -q "attach_job: 25 tensors kept" "$W/attach-job.out"; then
        say "attach: FAIL the job exited $ajob_rc: $(tail -n 3 "$W/attach-job.err")"; fails=$((fails + 1))
    elif [ $arec_rc -ne 0 ]; then
        say "attach: FAIL record --pid exited $arec_rc: $(tail -n 3 "$W/attach-rec.err")"; fails=$((fails + 1))
    elif echo "$top" | grep -q "attach_job.py:$line\b"; then
        say "attach: ok: $top"
    else
        say "attach: FAIL: expected attach_job.py:$line first in the diff; got: ${top:-no growth}"
        head -n 12 "$W/attach-diff.txt" | tee -a "$SUMMARY"; fails=$((fails + 1))
    fi
    # tensors are blocks from the first iteration after the attach, no new segment needed
    "$CULEAK" report --diff 'iteration 0' 'iteration 1' "$W/attach.culeak" >"$W/attach-diff01.txt" 2>&1
    if grep -Eq "^  \+[0-9]+ bytes \(.* blocks\) .*attach_job.py:$line\b" "$W/attach-diff01.txt"; then
        say "attach: ok: tensors tracked from the first iteration: $(grep -m1 "attach_job.py:$line" "$W/attach-diff01.txt")"
    else
        say "attach: FAIL no KEEP blocks between iterations 0 and 1"; head -n 12 "$W/attach-diff01.txt" | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
    # the pool's rows at the attach are the allocator's own (its memory_snapshot then)
    "$CULEAK" report --at attached "$W/attach.culeak" >"$W/attach-at.txt" 2>&1
    pool=$(cat "$W/attach.pool" 2>/dev/null)
    got=$(grep -m1 '^MEMORY SUMMARY' "$W/attach-at.txt")
    if [ -n "$pool" ] && [ "${got#MEMORY SUMMARY: "${pool% segments} segments by the pools"}" != "$got" ]; then
        say "attach: ok: pool at the attach: $got"
    else
        say "attach: FAIL pool at the attach: culeak '$got', the allocator '$pool'"; fails=$((fails + 1))
    fi
    # what was live at the attach and still at the end is its own row, not judged a leak
    grep -E '^(LEAK|CACHE|ATTACH) SUMMARY' "$W/attach-report.txt" | tee -a "$SUMMARY"
    if grep -q '^LEAKED.*(before attach)' "$W/attach-report.txt"; then
        say "attach: FAIL what was live before the attach is reported as leaked"; fails=$((fails + 1))
    elif grep -m1 -E '^NOT JUDGED .*\(before attach\)$' "$W/attach-report.txt" | tee -a "$SUMMARY" | grep -q .; then
        say "attach: ok: what was live before the attach is not judged"
    else
        say "attach: FAIL no (before attach) row in the report"; fails=$((fails + 1))
    fi
fi
if want attach_busy; then
    say "== attach_busy: a PyTorch job busy in its training loop, attached 10 times mid-iteration (no gdb)"
    rm -f "$W"/busy.*
    venv_site=$("$VENV/bin/python" -c 'import culeak, os; print(os.path.dirname(os.path.dirname(culeak.__file__)))')
    PYTHONPATH=$venv_site${PYTHONPATH:+:$PYTHONPATH} python3 tests/gpu/attach_busy.py "$W/busy" \
        >"$W/busy-job.out" 2>"$W/busy-job.err" &
    bjob=$!
    for _ in $(seq 1200); do [ -e "$W/busy.ready" ] || ! kill -0 $bjob 2>/dev/null && break; sleep 0.1; done
    line=$(grep -n '# KEEP$' tests/gpu/attach_busy.py | cut -d: -f1)
    named=0 survived=0
    : >"$W/busy-timing"
    for i in $(seq 10); do
        kill -0 $bjob 2>/dev/null || break
        CULEAK_ATTACH_TIMING=1 "$CULEAK" record --pid $bjob -o "$W/busy.$i.culeak" >"$W/busy-rec.$i.out" 2>"$W/busy-rec.$i.err" &
        brec=$!
        for _ in $(seq 300); do grep -q "attached to pid" "$W/busy-rec.$i.err" || ! kill -0 $brec 2>/dev/null && break; sleep 0.1; done
        sleep 3
        kill -INT $brec
        wait $brec
        brc=$?
        sed -n 's/.*the attach took \([0-9.]*\) ms; thread [0-9]* was stopped \([0-9.]*\) ms.*/\1 \2/p' \
            "$W/busy-rec.$i.err" >>"$W/busy-timing"
        kill -0 $bjob 2>/dev/null && survived=$((survived + 1))
        marks=$("$CULEAK" dump "$W/busy.$i.culeak" 2>/dev/null | sed -n 's/.*"type":"mark".*"label":"\(iteration [0-9]*\)".*/\1/p')
        first=$(echo "$marks" | sed -n 2p) last=$(echo "$marks" | tail -n 1)
        "$CULEAK" report --diff "$first" "$last" "$W/busy.$i.culeak" >"$W/busy-diff.$i.txt" 2>&1
        top=$(grep -m1 -E '^  \+[0-9]+ bytes' "$W/busy-diff.$i.txt")
        if [ $brc -eq 0 ] && echo "$top" | grep -q "attach_busy.py:$line\b"; then
            named=$((named + 1))
        else
            say "attach_busy: attach $i: record exited $brc; diff $first..$last: ${top:-nothing}; $(tail -n 2 "$W/busy-rec.$i.err")"
        fi
    done
    touch "$W/busy.end"
    wait $bjob
    bjob_rc=$?
    stats() { sort -n | awk '{v[NR] = $1} END {if (NR) printf "median %.1f ms, max %.1f ms", v[int((NR + 1) / 2)], v[NR]}'; }
    say "attach_busy: attach time $(cut -d' ' -f1 "$W/busy-timing" | stats); borrowed thread stopped $(cut -d' ' -f2 "$W/busy-timing" | stats)"
    say "attach_busy: $(tail -n 1 "$W/busy-job.out")"
    if [ $bjob_rc -eq 0 ] && [ $survived -eq 10 ] && [ $named -eq 10 ] && ! grep -q Traceback "$W/busy-job.err"; then
        say "attach_busy: ok: 10 attaches, the job survived each and exited 0, every diff names attach_busy.py:$line"
    else
        say "attach_busy: FAIL job exit $bjob_rc, survived $survived of 10, KEEP line named $named of 10: $(tail -n 3 "$W/busy-job.err")"
        fails=$((fails + 1))
    fi
fi
if want e2e_attach; then
    # the end-to-end attach tests of `make test` on this machine's CPU (GPU hosts are often
    # Intel with AMX), gdb absent, with the wheel's culeak and shim and the simulated driver
    # the build made (carry build/fakecuda)
    say "== e2e_attach: the attach tests on this CPU ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(grep -q amx_tile /proc/cpuinfo && echo 'AMX: amx_tile' || echo 'no AMX')), gdb: $(command -v gdb || echo absent)"
    pkg=$("$VENV/bin/python" -c 'import culeak, os; print(os.path.dirname(culeak.__file__))')
    GB=$ROOT/build-gpu
    rm -rf "$GB"
    mkdir -p "$GB"
    if [ ! -e build/fakecuda/libcuda.so.1 ]; then
        say "e2e_attach: FAIL no build/fakecuda (make, then carry build/fakecuda)"; fails=$((fails + 1))
    else
        cp -r build/fakecuda "$GB/"
        ln -s "$pkg/bin/culeak" "$GB/culeak"
        for l in libculeak.so libculeak_unwind.so libculeak_torch.so; do ln -s "$pkg/lib/culeak/$l" "$GB/$l"; done
        for t in attach_state attach_python attach_again attach_record attach_blocks attach_console attach_injector attach_failures; do
            [ -x "tests/e2e/$t.sh" ] || continue
            start=$(date +%s)
            BUILD=build-gpu timeout 600 "tests/e2e/$t.sh" >"$W/e2e-$t.log" 2>&1
            rc=$?
            if [ $rc -eq 0 ]; then
                say "e2e_attach: ok $t ($(($(date +%s) - start)) s)"
                grep -E 'attach time|stopped:|max_late|exceptions|attached [0-9]+ times|first live table' "$W/e2e-$t.log" | tee -a "$SUMMARY"
            else
                say "e2e_attach: FAIL $t (exit $rc)"; tail -n 15 "$W/e2e-$t.log" | tee -a "$SUMMARY"; fails=$((fails + 1))
            fi
        done
    fi
fi
if want tensor; then
    # the tensor (block) path's cost beside PyTorch's memory history: a benchmark, its
    # figures printed; a run that tracked no tensor is a failure
    say "== tensor path: alloc+free of a 16 KiB tensor, untraced / culeak / memory history"
    if python3 bench/tensor_block.py --reps "${TENSOR_REPS:-15}" ${TENSOR_CPUS:+--cpus "$TENSOR_CPUS"} ${TENSOR_FIXED:+--fixed-layout} \
        --culeak "$CULEAK" >"$W/tensor.out" 2>"$W/tensor.err"; then
        grep -v '^repetition [0-9]' "$W/tensor.out" | tee -a "$SUMMARY"
        grep -q ' 0 block events' "$W/tensor.out" && { say "FAIL tensor path: no tensor was tracked"; fails=$((fails + 1)); }
    else
        say "FAIL tensor path: bench/tensor_block.py failed"; tail -n 8 "$W/tensor.err" | tee -a "$SUMMARY"
        fails=$((fails + 1))
    fi
fi
# the checks with a script of their own, each installing the wheel as a user does:
# holders (who holds a leaked tensor), torch_snapshot (PyTorch's memory snapshots both
# ways), ranks (a torchrun job's ranks)
for part in holders torch_snapshot ranks; do
    want "$part" || continue
    say "== $part (tests/gpu/$part.sh)"
    OUT=$W bash "tests/gpu/$part.sh" >"$W/$part.txt" 2>&1
    part_rc=$?
    tee -a "$SUMMARY" <"$W/$part.txt" >&3
    [ $part_rc -eq 0 ] || { say "$part: exit $part_rc"; fails=$((fails + 1)); }
done
# the details travel as one archive beside summary.txt: the device tool brings back only
# a few files
tar -C "$W" -czf "$OUT/details.tar.gz" $(cd "$W" && ls *.jsonl *.txt *.err *.out *.json *.log *.screen *.tar.gz busy-timing 2>/dev/null)
say "== $fails failures"
[ $fails -eq 0 ]
