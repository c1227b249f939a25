"""Drawing cost of 100,000 balls (issue 6) with the sandbox's own renderer
under Xvfb, no simulation running: tests/e2e/draw_bench.c. Prints both
ways of drawing (the one the sandbox picks for this renderer, and the
other), and fails when the chosen way's median batch time is over the
limit given here (loose: the test machine is shared; docs/benchmarks.md
has figures from a quiet machine)."""
import os
import subprocess
import sys

from e2e import check, skip, start_xvfb

LIMIT_MS = 40.0
# Debug and sanitizer builds only print the figures (argv[2] == "0").


def main():
    bench = sys.argv[1]
    limit_ms = LIMIT_MS if len(sys.argv) < 3 or sys.argv[2] != "0" else 0.0
    xvfb, display = start_xvfb("1600x900x24")
    if not xvfb:
        skip("Xvfb did not start")
    try:
        env = dict(os.environ, DISPLAY=display, SDL_VIDEODRIVER="x11",
                   LSAN_OPTIONS="exitcode=0")
        for mode in ("", "pixels", "geometry"):
            e = dict(env)
            if mode:
                e["BALLPIT_DRAW"] = mode
            limit = str(limit_ms) if not mode else "0"
            p = subprocess.run([bench, "100000", "40", limit], env=e,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=120)
            print(("auto: " if not mode else "forced %s: " % mode) + p.stdout.strip())
            if p.returncode == 77:
                skip(p.stdout.strip())
            if not mode and limit_ms > 0:
                check(p.returncode == 0, "100,000 balls: the sandbox's drawing "
                      "stays under %.0f ms a frame" % limit_ms)
            elif not mode:
                check(p.returncode == 0, "debug/sanitizer build: figures only")
    finally:
        xvfb.terminate()
        xvfb.wait(10)


main()
