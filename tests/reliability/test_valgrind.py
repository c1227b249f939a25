#!/usr/bin/env python3
"""test_valgrind.py BALLPIT ENGINE_SWITCH SUPP: no leak under valgrind.

Runs under valgrind memcheck (definite leaks are errors, PoCL's own kernel
compiler leaks suppressed by SUPP):
  1. `ballpit --headless gas --frames 2` (load, CPU engine, stats);
  2. engine_switch 3: CPU -> OpenCL -> CPU three times, stepping on each;
  3. a control: engine_switch 0 --leak loses a block on purpose, which
     valgrind must report (so the suppressions do not hide real leaks).
Exit 77 (skip) when valgrind is not installed or the binaries are built
with AddressSanitizer (the two cannot run together).
"""
import os
import re
import shutil
import subprocess
import sys


def asan_built(path):
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


def memcheck(cmd, supp, timeout):
    # --num-callers: the suppressions name PoCL's compile entry point, which
    # in a cold kernel cache sits more than valgrind's default 12 frames
    # below LLVM's allocations (a run of the whole suite reported LLVM pass
    # manager blocks whose 12-frame stacks stopped inside libpocl).
    vg = ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite",
          "--show-leak-kinds=definite", "--error-exitcode=99", "--num-callers=50",
          f"--suppressions={supp}"]
    # BALLPIT_OCL_ROLES=0: the steps kernel's groups do not read their
    # processor by rdtscp, which valgrind does not know (SIGILL). On PoCL's
    # basic device (ballpit's default) every step is that kernel's, the
    # first after an attach too (docs/opencl.md, "The team's threads").
    env = dict(os.environ, BALLPIT_OCL_ROLES="0")
    p = subprocess.run(vg + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=timeout, env=env)
    m = re.search(r"definitely lost: ([\d,]+) bytes", p.stdout)
    lost = int(m.group(1).replace(",", "")) if m else 0
    if "All heap blocks were freed" in p.stdout:
        lost = 0
    elif not m:
        lost = -1  # no leak summary: valgrind did not finish
    return p.returncode, lost, p.stdout


def main():
    ballpit, switch, supp = sys.argv[1:4]
    if shutil.which("valgrind") is None:
        print("valgrind is not installed: skipped")
        return 77
    if asan_built(ballpit) or asan_built(switch):
        print("built with AddressSanitizer, which valgrind cannot run: skipped")
        return 77
    failed = 0
    runs = [
        ("headless gas, 2 frames", [ballpit, "--headless", "gas", "--frames", "2"], 0),
        ("engine switch CPU<->OpenCL x3", [switch, "3"], 0),
        ("control: a deliberate leak", [switch, "0", "--leak"], 4242),
    ]
    for name, cmd, want_lost in runs:
        rc, lost, out = memcheck(cmd, supp, 540)
        for line in out.splitlines():
            if line.startswith("engine_switch:") or "definitely lost:" in line:
                print("   ", line)
        if want_lost == 0:
            ok = rc == 0 and lost == 0
        else:
            ok = rc == 99 and lost == want_lost
        print(f"{'ok  ' if ok else 'FAIL'} {name}: exit {rc}, definitely lost {lost} bytes"
              f" (want {want_lost})")
        if not ok:
            failed += 1
            print(out[-6000:])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
