"""`ballpit --bench --bench-draw N` (issue 6: the bench shows the drawing
time) under Xvfb: a drawing row in the table and in the JSON, with the
balls' time (the HUD's "draw") inside the whole frame's; and without a
display the row is skipped with a note, not an error."""
import json
import os
import subprocess
import sys

from e2e import check, skip, start_xvfb


def bench(ballpit, env, *extra):
    return subprocess.run([ballpit, "--bench", "--backend", "cpu", "--bench-sizes", "200",
                           "--bench-frames", "3", "--bench-json", "-"] + list(extra),
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, timeout=120)


def need(cond, msg, detail):
    """check(), with the detail only in a failure's message."""
    check(cond, msg if cond else "%s: %r" % (msg, detail))


def main():
    ballpit = sys.argv[1]
    base = dict(os.environ, LSAN_OPTIONS="exitcode=0")
    base.pop("DISPLAY", None)
    base.pop("WAYLAND_DISPLAY", None)
    p = bench(ballpit, dict(base, SDL_VIDEODRIVER="x11"), "--bench-draw", "1000")
    need(p.returncode == 0, "no display: the bench still succeeds", p.stderr)
    need("(draw: skipped: no display" in p.stderr, "and says the drawing was skipped",
         p.stderr)
    need([json.loads(l)["scene"] for l in p.stdout.splitlines()] == ["rain", "pile"],
         "no drawing row in the JSON", p.stdout)

    xvfb, display = start_xvfb("1600x900x24")
    if not xvfb:
        skip("Xvfb did not start")
    try:
        p = bench(ballpit, dict(base, DISPLAY=display, SDL_VIDEODRIVER="x11"),
                  "--bench-draw", "20000")
        print(p.stderr.strip().splitlines()[-1])
        need(p.returncode == 0, "the bench with a drawing row succeeds", p.stderr)
        rows = [json.loads(l) for l in p.stdout.splitlines()]
        need([r["scene"] for r in rows] == ["rain", "pile", "draw"],
             "the JSON has the drawing row last", rows)
        d = rows[2]
        need(d["n"] == 20000 and d["frames"] == 3 and d["mode"] in ("pixels", "geometry"),
             "the drawing row says what it drew and how", d)
        need(0 < d["draw_ms"] <= d["frame_ms"], "the balls' time is inside the frame's", d)
        need("draw     20000 balls, renderer " in p.stderr, "and the table shows it", p.stderr)

        # the drawing's environment: a bad value is named on stderr, the
        # default used, the bench unharmed; a good one says nothing
        p = bench(ballpit, dict(base, DISPLAY=display, SDL_VIDEODRIVER="x11",
                                BALLPIT_DRAW="pix", BALLPIT_DRAW_THREADS="0"),
                  "--bench-draw", "2000")
        need(p.returncode == 0, "bad drawing variables: the bench still succeeds", p.stderr)
        need("ballpit: BALLPIT_DRAW=pix: not pixels or geometry; drawing in the " in p.stderr,
             "BALLPIT_DRAW's bad value is named", p.stderr)
        need("ballpit: BALLPIT_DRAW_THREADS=0: not a number from 1 to 64" in p.stderr,
             "BALLPIT_DRAW_THREADS's bad value is named", p.stderr)
        p = bench(ballpit, dict(base, DISPLAY=display, SDL_VIDEODRIVER="x11",
                                BALLPIT_DRAW="geometry", BALLPIT_DRAW_THREADS="2"),
                  "--bench-draw", "2000")
        rows = [json.loads(l) for l in p.stdout.splitlines()]
        need(p.returncode == 0 and rows[-1]["mode"] == "geometry" and
             "BALLPIT_DRAW" not in p.stderr, "good drawing variables: obeyed, no message",
             p.stderr)
    finally:
        xvfb.terminate()
        xvfb.wait(10)


main()
