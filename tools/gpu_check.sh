#!/bin/sh
# gpu_check.sh - the OpenCL checks for a machine with a GPU, as one short
# script (docs/benchmarks.md, "OpenCL on an NVIDIA H100"): the device list,
# what each kernel needs (registers on NVIDIA's platform, with a note when
# the contact kernel's exceed GPU_CHECK_REGS_MAX, default 163),
# the rain's 150-frame dump with the re-sort's order on the device and on
# the host (the same bits as the CPU engine's dump here), the re-sort test
# against the CPU engine, the physics tests that follow BALLPIT_BACKEND
# (bulk, contacts, settle) and the parity test on the device, and the
# bench at the sizes given with the
# re-sort's interval as shipped (every 128 sub-steps below 262,144 balls,
# 512 from there), every 1,024 and every 128 (BALLPIT_SORT_EVERY) in
# turns, BALLPIT_OCL_PROFILE=1 printing every re-sort's times.
#
#   sh tools/gpu_check.sh BUILD OUT [SIZES [RUNS [ROUNDS]]]
#
# BUILD: a build of ballpit (say `meson setup build-gpu --buildtype=release
# -Dsdl=disabled`), with the OpenCL ICD loader in BUILD/lib when the
# machine has none; OUT: where the dumps, benches and logs go; SIZES:
# --bench-sizes (default 100k,1M,4M); RUNS: --bench-runs (default 3);
# ROUNDS: rounds of the three intervals in turns (default 1). Where no ICD
# names a GPU's driver, OCL_ICD_VENDORS is pointed at one that names
# NVIDIA's (/usr/local/nvidia/lib64 or the loader's usual places).
# Exits 1 when a step fails; the last line says how many did.
set -u
if [ $# -lt 2 ]; then
    echo "usage: sh tools/gpu_check.sh BUILD OUT [SIZES [RUNS [ROUNDS]]]" >&2
    exit 2
fi
B=$1
OUT=$2
SIZES=${3:-100k,1M,4M}
RUNS=${4:-3}
ROUNDS=${5:-1}
BIN=$B/src/ballpit
if [ ! -x "$BIN" ]; then
    echo "gpu_check: $BIN: no ballpit build there" >&2
    exit 2
fi
mkdir -p "$OUT" || exit 2
[ -d "$B/lib" ] && export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if [ -z "${OCL_ICD_VENDORS:-}" ]; then
    for lib in /usr/local/nvidia/lib64/libnvidia-opencl.so.1 \
               /usr/lib/x86_64-linux-gnu/libnvidia-opencl.so.1; do
        if [ -e "$lib" ]; then
            mkdir -p "$OUT/icd"
            echo "$lib" > "$OUT/icd/nvidia.icd"
            export OCL_ICD_VENDORS="$OUT/icd"
            break
        fi
    done
fi
failed=0
step() { # step NAME COMMAND...: runs it, its output into OUT/NAME.log
    name=$1
    shift
    if "$@" > "$OUT/$name.log" 2>&1; then
        echo "gpu_check: $name: ok"
    else
        echo "gpu_check: $name: FAILED (exit $?; $OUT/$name.log)"
        failed=$((failed + 1))
    fi
}
step devices "$BIN" --list-devices
cat "$OUT/devices.log"
# what each kernel needs (BALLPIT_OCL_BUILDLOG=1; on NVIDIA's platform the
# build log then has each kernel's registers, stack and spills; its cache
# of built programs off, so the log is a fresh build's)
step buildlog env BALLPIT_OCL_BUILDLOG=1 CUDA_CACHE_DISABLE=1 "$BIN" --headless rain --frames 1 \
    --backend opencl
grep -E "Compiling entry|Used [0-9]+ registers|stack frame|^ballpit: opencl kernel" \
    "$OUT/buildlog.log" | sed -e 's/^ptxas *[.:]* *\(info *: *\)*//'
# The contact kernel's registers against the last measured (NVIDIA's
# platform): a few more can cost a GPU whole work-groups a multiprocessor
# (a branch of pass 3 once took it from 163 to 171 and the 4M rain's
# contact phase to 1.39x its time; docs/opencl.md). A note, not a failed
# step: another driver or chip may count otherwise.
REGS_MAX=${GPU_CHECK_REGS_MAX:-163}
regs=$(awk '/Compiling entry function .bp_k_contacts./ { on = 1 }
            on && /Used [0-9]+ registers/ { for (i = 1; i <= NF; i++)
                if ($i == "Used") { print $(i + 1); exit } }' "$OUT/buildlog.log")
if [ -n "$regs" ] && [ "$regs" -gt "$REGS_MAX" ]; then
    echo "gpu_check: NOTE: bp_k_contacts uses $regs registers, more than $REGS_MAX" \
         "(the last measured, GPU_CHECK_REGS_MAX): bench it against the build before"
elif [ -n "$regs" ]; then
    echo "gpu_check: bp_k_contacts uses $regs registers (at most $REGS_MAX expected)"
fi
for order in device host; do
    step "dump-$order" env BALLPIT_OCL_SORT=$order "$BIN" --headless rain --frames 150 \
        --backend opencl --dump "$OUT/rain-$order.csv"
done
step dump-cpu "$BIN" --headless rain --frames 150 --dump "$OUT/rain-cpu.csv"
(cd "$OUT" && md5sum rain-device.csv rain-host.csv rain-cpu.csv 2>/dev/null)
if [ -f "$OUT/rain-device.csv" ] && cmp -s "$OUT/rain-device.csv" "$OUT/rain-cpu.csv" &&
   cmp -s "$OUT/rain-host.csv" "$OUT/rain-cpu.csv"; then
    echo "gpu_check: dumps: the same bits"
else
    echo "gpu_check: dumps: DIFFER"
    failed=$((failed + 1))
fi
if [ -x "$B/tests/physics/test_physics_order" ]; then
    step order-test env BALLPIT_BACKEND=opencl "$B/tests/physics/test_physics_order"
    tail -1 "$OUT/order-test.log"
fi
# the physics tests that take the engine from BALLPIT_BACKEND, and the
# parity test, on the GPU (the forty-first and forty-third sessions ran
# them by hand: 7, 9, 9 and 7 passed, 2-14 s each)
for t in physics/test_physics_bulk physics/test_physics_contacts \
         physics/test_physics_settle opencl/opencl_parity; do
    if [ -x "$B/tests/$t" ]; then
        name=$(basename "$t")
        step "$name" env BALLPIT_BACKEND=opencl "$B/tests/$t"
        tail -1 "$OUT/$name.log"
    fi
done
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for every in shipped 1024 128; do
        set -- env BALLPIT_OCL_PROFILE=1
        [ "$every" = shipped ] || set -- "$@" BALLPIT_SORT_EVERY=$every
        step "bench-$every-$r" "$@" "$BIN" \
            --bench --backend opencl --bench-sizes "$SIZES" --bench-runs "$RUNS" \
            --bench-json "$OUT/bench-$every-$r.json"
        grep -E '^(rain|pile)|re-sort of' "$OUT/bench-$every-$r.log"
    done
    r=$((r + 1))
done
echo "gpu_check: $failed step(s) failed"
[ "$failed" -eq 0 ]
