#!/bin/sh
# quickstart.sh - set up a fresh Debian 12 machine for ballpit, build it, and
# either start it (`run [ARGS]`) or run the whole test suite (`test`).
#
#   sh tools/quickstart.sh run            # opens the sandbox (headless: see README)
#   sh tools/quickstart.sh test           # every test, ends with "N passed, N failed"
#
# Installs only the Debian packages that are missing (apt-get, as root or
# with sudo), builds a release build in build/ (warnings are errors) and,
# for `test`, an address+undefined sanitizer build in build-san/ and, when
# clang is there, the fuzz targets in build-fuzz/ (tests/fuzz) and a
# ThreadSanitizer build in build-tsan/ for the threads suite (tests/threads).
set -eu
cd "$(dirname "$0")/.."

PACKAGES="gcc clang libclang-rt-14-dev libomp-dev meson ninja-build pkg-config python3 \
libsdl2-dev libsdl2-ttf-dev fonts-dejavu-core \
ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo \
xvfb xdotool"

missing=""
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "quickstart: installing$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

[ -f build/build.ninja ] || meson setup build --buildtype=release -Dwerror=true >/dev/null
ninja -C build >/dev/null

mode="${1:-run}"
[ $# -gt 0 ] && shift
case "$mode" in
run)
    if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "quickstart: no display here, running the default scene headless instead"
        exec build/src/ballpit --headless default --frames 330 --stats "$@"
    fi
    exec build/src/ballpit "$@"
    ;;
test)
    [ -f build-san/build.ninja ] || meson setup build-san --buildtype=debugoptimized \
        -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true >/dev/null
    ninja -C build-san >/dev/null
    log=$(mktemp)
    status=0
    echo "== release build: every suite"
    meson test -C build --print-errorlogs --num-processes 1 2>&1 | tee "$log" || status=1
    # Every suite again under the sanitizers; only the physics soak tests on
    # the OpenCL engine are left to the release run (their device code runs
    # inside PoCL, which is not instrumented; the opencl suite covers the
    # engine's host code), and the CPU engine's longest soak (suite
    # long-soak: the rain's 660 frames, a minute under the sanitizers, whose
    # passes the other soaks run there too).
    echo "== sanitizer build (address, undefined): every suite"
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 ASAN_OPTIONS=detect_leaks=1 \
        meson test -C build-san --print-errorlogs --num-processes 1 \
        --suite unit --suite scene --suite cli --suite physics --suite reliability \
        --suite opencl --suite e2e --no-suite physics-opencl --no-suite long-soak \
        2>&1 | tee -a "$log" || status=1
    if command -v clang >/dev/null 2>&1; then
        # tests/fuzz: each libFuzzer target 30 s on a copy of its corpus,
        # the two at once (each fuzzer is one thread: a core each).
        echo "== fuzz build (clang, libFuzzer, address+undefined): 2 targets, 30 s each"
        [ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true \
            -Db_lundef=false >/dev/null
        ninja -C build-fuzz tests/fuzz/fuzz_scene tests/fuzz/fuzz_world >/dev/null
        meson test -C build-fuzz --no-rebuild --print-errorlogs --num-processes 2 \
            --suite fuzz 2>&1 | tee -a "$log" || status=1
        # tests/threads: the CPU engine's team of threads and the
        # sandbox's threads (with the OpenCL engine made on a thread of its
        # own) under ThreadSanitizer (clang with LLVM's OpenMP).
        echo "== ThreadSanitizer build (clang, LLVM OpenMP): the threads suite"
        [ -f build-tsan/build.ninja ] || CC=clang meson setup build-tsan \
            --buildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false \
            -Dwerror=true >/dev/null
        ninja -C build-tsan >/dev/null
        # ThreadSanitizer's runtime refuses some kernels' address layouts
        # (LLVM 14 with more mmap randomisation than it knows): then the
        # suite is skipped, saying why, rather than failed
        if tsan_why=$(build-tsan/src/ballpit --version 2>&1 >/dev/null) && [ -z "$tsan_why" ]; then
            meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 1 \
                --suite threads 2>&1 | tee -a "$log" || status=1
        else
            echo "quickstart: ThreadSanitizer cannot run here, threads suite skipped:" \
                "$(echo "$tsan_why" | head -n 1)"
            echo "Skipped: 1" >>"$log"
        fi
    fi
    ok=$(awk '/^Ok:/ {s += $2} END {print s + 0}' "$log")
    fail=$(awk '/^(Fail|Timeout|Unexpected Pass):/ {s += $NF} END {print s + 0}' "$log")
    skip=$(awk '/^Skipped:/ {s += $2} END {print s + 0}' "$log")
    rm -f "$log"
    echo "$ok passed, $fail failed, $skip skipped"
    [ "$fail" -eq 0 ] && [ "$status" -eq 0 ]
    ;;
*)
    echo "quickstart: unknown mode '$mode' (use run or test)" >&2
    exit 2
    ;;
esac
