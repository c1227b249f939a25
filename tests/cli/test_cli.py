#!/usr/bin/env python3
"""The ballpit command line contract (docs/cli.md), run against the real
binary: exit statuses, one-line errors, the stats JSON line, the dump CSV,
determinism across runs and thread counts, built-in scenes from any folder,
OpenCL refusal with status 3, and a short bench.

Usage: test_cli.py BALLPIT [TEST-NAME-FILTER]
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

BALLPIT = os.path.abspath(sys.argv[1])
FILTER = sys.argv[2] if len(sys.argv) > 2 else ""
TMP = tempfile.mkdtemp(prefix="ballpit-cli-")

STATS_FIELDS = {
    "frames": int, "substeps": int, "balls": int, "lines": int,
    "kinetic_energy": (int, float), "momentum_x": (int, float),
    "momentum_y": (int, float), "escaped": int, "max_overlap": (int, float),
    "wall_s": (int, float), "ms_per_frame": (int, float),
    "ball_steps_per_s": (int, float), "backend": str, "threads": int,
    "device": str,
}

# A small scene (200 balls, a few segments) that keeps each run short.
SMALL_SCENE = """ballpit-scene 1
# a small test scene
world 400 300
gravity 0 900
restitution 0.8
line 20 150 200 200
line 380 120 220 220
line 200 260 200 260
swarm 100 60 100 3 40 50 0 1
swarm 300 60 100 2 40 -50 20 2
"""


def run(args, cwd=None, env=None, timeout=240):
    p = subprocess.run([BALLPIT] + args, cwd=cwd or TMP, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def write(name, text):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def one_error_line(rc, out, err, want_rc, *parts):
    check(rc == want_rc, "exit status %d, wanted %d (stderr: %r)" % (rc, want_rc, err))
    lines = err.splitlines()
    check(len(lines) == 1, "wanted one line on stderr, got %r" % err)
    check(lines[0].startswith("ballpit: "), "message does not start with 'ballpit: ': %r" % err)
    for p in parts:
        check(p in lines[0], "message %r lacks %r" % (lines[0], p))
    check(out == "", "stdout not empty on error: %r" % out)


def test_help_and_version():
    rc, out, err = run(["--help"])
    check(rc == 0 and err == "", "--help: rc %d, stderr %r" % (rc, err))
    for flag in ["--headless", "--frames", "--backend", "--threads", "--device",
                 "--dump", "--stats", "--bench", "--bench-sizes", "--bench-frames", "--bench-runs",
                 "--bench-json", "--list-devices", "--help", "--version",
                 "--screenshot-dir", "--font", "--save-to", "--screenshot-after",
                 "--screenshot-path", "--state-file", "--window"]:
        check(flag in out, "--help does not mention %s" % flag)
    for name in ["default", "gas", "pile", "rain"]:
        check(name in out, "--help does not list the built-in scene %s" % name)
    rc, out, err = run(["--version"])
    check(rc == 0 and out.startswith("ballpit 0.") and err == "", "--version: %r" % out)


def test_bad_command_lines():
    cases = [
        (["--bogus"], "unknown option '--bogus'"),
        (["--headless", "rain", "--frames", "-3"], "--frames"),
        (["--headless", "rain", "--frames", "abc"], "--frames"),
        (["--headless", "rain", "--frames", "1", "--threads", "0"], "--threads"),
        (["--headless", "rain", "--frames", "1", "--threads", "x"], "--threads"),
        (["--headless", "rain"], "--frames"),
        (["--headless", "rain", "--frames", "1", "--backend", "cuda"], "--backend"),
        (["--headless", "rain", "--frames", "1", "--device", "-1"], "--device"),
        (["--headless", "rain", "--frames"], "--frames needs a value"),
        (["--frames", "3"], "--frames needs --headless"),
        (["--bench", "--bench-sizes", "1k,,2k"], "--bench-sizes"),
        (["--bench", "--bench-frames", "0"], "--bench-frames"),
        (["--bench", "--bench-runs", "0"], "--bench-runs"),
        (["--bench", "--bench-runs", "1.5"], "--bench-runs"),
        (["--window", "big"], "--window"),
        (["--headless", "rain", "--frames", "1", "--window", "800x600"], "--window"),
        (["--bench", "--headless", "rain", "--frames", "1"], "cannot be combined"),
    ]
    for args, part in cases:
        rc, out, err = run(args)
        one_error_line(rc, out, err, 2, part)


def test_bad_scene_names_file_and_line():
    path = write("bad.scene", "ballpit-scene 1\n# fine so far\nball 10 10 0 0 -1\n")
    rc, out, err = run(["--headless", path, "--frames", "1"])
    one_error_line(rc, out, err, 2, path + ":3: ", "radius")
    path = write("bad2.scene", "ballpit-scene 1\nworld 100 100\nwarp 1 2\n")
    rc, out, err = run(["--headless", path, "--frames", "1", "--stats"])
    one_error_line(rc, out, err, 2, path + ":3: unknown keyword 'warp'")
    rc, out, err = run(["--headless", "no-such.scene", "--frames", "1"])
    one_error_line(rc, out, err, 2, "no-such.scene", "not a built-in scene")
    # A binary "scene" stops at the first NUL byte instead of being read whole.
    rc, out, err = run(["--headless", "/dev/zero", "--frames", "1"], timeout=20)
    one_error_line(rc, out, err, 2, "/dev/zero:1: NUL byte")
    rc, out, err = run(["--headless", TMP, "--frames", "1"])
    one_error_line(rc, out, err, 2, TMP, "folder")


def stats_of(args):
    rc, out, err = run(args)
    check(rc == 0, "%s: rc %d, stderr %r" % (args, rc, err))
    lines = out.splitlines()
    check(len(lines) == 1, "--stats printed %d lines: %r" % (len(lines), out))
    s = json.loads(lines[0])
    for k, t in STATS_FIELDS.items():
        check(k in s, "stats lacks %s: %r" % (k, s))
        check(isinstance(s[k], t), "stats %s has type %s" % (k, type(s[k]).__name__))
    return s


def test_stats_line():
    path = write("small.scene", SMALL_SCENE)
    s = stats_of(["--headless", path, "--frames", "3", "--stats"])
    check(s["frames"] == 3 and s["substeps"] == 30, "frames/substeps: %r" % s)
    check(s["balls"] == 200 and s["lines"] == 3, "balls/lines: %r" % s)
    check(s["backend"] == "cpu" and s["threads"] >= 1, "backend: %r" % s)
    check(s["escaped"] == 0, "balls escaped: %r" % s)
    check(s["kinetic_energy"] > 0 and s["wall_s"] > 0, "energy/wall: %r" % s)
    # ball_steps_per_s is balls x sub-steps / wall seconds.
    want = 200 * 30 * 3 / s["wall_s"]
    check(abs(s["ball_steps_per_s"] - want) <= 1e-6 * want, "ball_steps_per_s: %r" % s)
    check(abs(s["ms_per_frame"] - s["wall_s"] * 1000 / 3) <= 1e-6 * s["ms_per_frame"],
          "ms_per_frame: %r" % s)
    # Zero frames: the scene as loaded, nothing moved yet.
    s0 = stats_of(["--headless", path, "--frames", "0", "--stats", "--threads", "1"])
    check(s0["frames"] == 0 and s0["threads"] == 1, "frames 0: %r" % s0)
    # momentum_y at rest: sum of m*vy of the swarm velocities (m = pi r^2).
    import math
    want_py = 100 * math.pi * 4 * 20
    check(abs(s0["momentum_y"] - want_py) < 1e-3 * want_py, "momentum_y %r" % s0)


def test_dump_csv():
    path = write("small.scene", SMALL_SCENE)
    dump = os.path.join(TMP, "d.csv")
    rc, out, err = run(["--headless", path, "--frames", "2", "--dump", dump])
    check(rc == 0 and out == "" and err == "", "dump run: %d %r %r" % (rc, out, err))
    with open(dump, newline="") as f:
        rows = list(csv.reader(f))
    check(rows[0] == ["id", "x", "y", "vx", "vy", "r", "m"], "header %r" % rows[0])
    check(len(rows) == 201, "%d rows for 200 balls" % (len(rows) - 1))
    for i, row in enumerate(rows[1:]):
        check(int(row[0]) == i, "row %d has id %s" % (i, row[0]))
        vals = [float(v) for v in row[1:]]
        check(0 <= vals[0] <= 400 and 0 <= vals[1] <= 300, "ball %d outside: %r" % (i, row))
        check(vals[4] in (2.0, 3.0) and vals[5] > 0, "r/m of ball %d: %r" % (i, row))
    # A pipe or device is written in place: --dump /dev/stdout.
    rc, out, err = run(["--headless", path, "--frames", "2", "--dump", "/dev/stdout"])
    check(rc == 0 and out.encode() == read_bytes(dump), "--dump /dev/stdout: %r" % err)
    # A dump that cannot be written: status 1, one line, the old file kept.
    rc, out, err = run(["--headless", path, "--frames", "1", "--dump",
                        os.path.join(TMP, "no", "such", "d.csv")])
    one_error_line(rc, out, err, 1, "--dump", "d.csv")
    check(rows == list(csv.reader(open(dump, newline=""))), "old dump changed")
    check(not [n for n in os.listdir(TMP) if ".tmp" in n], "temporary file left behind")
    # ... and it is said before the run, not after it: a billion frames
    # would take days (before, the run went first and then failed).
    for flags in (["--headless", path, "--frames", "1000000000", "--dump"],
                  ["--bench", "--backend", "cpu", "--bench-sizes", "200000",
                   "--bench-frames", "100000", "--bench-json"]):
        rc, out, err = run(flags + [os.path.join(TMP, "no", "such", "out")], timeout=60)
        one_error_line(rc, out, err, 1, flags[-1], "cannot create a temporary file")
        check(not os.path.exists(os.path.join(TMP, "no")), "folder made for %r" % flags)


def test_determinism():
    path = write("small.scene", SMALL_SCENE)
    dumps = []
    for i, threads in enumerate(["1", "2", "2", "1"]):
        d = os.path.join(TMP, "det%d.csv" % i)
        rc, out, err = run(["--headless", path, "--frames", "10", "--threads", threads,
                            "--dump", d])
        check(rc == 0, "run %d: %r" % (i, err))
        dumps.append(read_bytes(d))
    check(dumps[1] == dumps[2], "two runs with 2 threads differ")
    check(dumps[0] == dumps[3], "two runs with 1 thread differ")
    check(dumps[0] == dumps[1], "--threads 1 and --threads 2 differ")
    # The same holds for a built-in scene with thousands of balls.
    gas = []
    for threads in ["1", "2"]:
        d = os.path.join(TMP, "gas%s.csv" % threads)
        rc, out, err = run(["--headless", "gas", "--frames", "2", "--threads", threads,
                            "--dump", d])
        check(rc == 0, "gas run: %r" % err)
        gas.append(read_bytes(d))
    check(gas[0] == gas[1], "gas: --threads 1 and 2 differ")


def test_builtin_scenes_from_any_folder():
    for name, balls in [("rain", 10000), ("gas", None), ("pile", None), ("default", None)]:
        s = stats_of(["--headless", name, "--frames", "0", "--stats"])
        check(s["balls"] > 0, "%s: no balls" % name)
        if balls:
            check(s["balls"] == balls, "%s: %d balls" % (name, s["balls"]))
    # Run from / : the scene comes from the binary, not the source tree.
    rc, out, err = run(["--headless", "pile", "--frames", "0", "--stats"], cwd="/")
    check(rc == 0 and json.loads(out)["balls"] > 1000, "pile from /: %r" % err)
    # A file named like a built-in scene wins.
    write("rain", "ballpit-scene 1\nball 50 50 0 0 4\n")
    s = stats_of(["--headless", "rain", "--frames", "0", "--stats"])
    check(s["balls"] == 1, "the file 'rain' did not win: %r" % s)
    os.unlink(os.path.join(TMP, "rain"))


def test_opencl_unusable_exits_3():
    empty = os.path.join(TMP, "no-vendors")
    os.makedirs(empty, exist_ok=True)
    env = dict(os.environ, OCL_ICD_VENDORS=empty, OPENCL_VENDOR_PATH=empty)
    rc, out, err = run(["--headless", "gas", "--frames", "1", "--backend", "opencl",
                        "--stats"], env=env)
    one_error_line(rc, out, err, 3, "opencl")
    rc, out, err = run(["--list-devices"], env=env)
    one_error_line(rc, out, err, 3)


def test_bad_engine_settings():
    # The CPU engine's A/B switches refuse a value out of place in one line
    # naming the variable and the value; a good one changes nothing visible.
    for var, bad, good in [("BALLPIT_CPU_LANES", "3", "1"),
                           ("BALLPIT_CPU_PAIRS", "thrice", "twice"),
                           ("BALLPIT_CPU_SEGGAP", "2", "0"),
                           ("BALLPIT_CPU_GRID", "sort", "count"),
                           ("BALLPIT_CPU_TEAM", "many", "alternate"),
                           ("BALLPIT_SORT_EVERY", "0", "1024"),
                           ("BALLPIT_HUGEPAGES", "yes", "0")]:
        env = dict(os.environ, **{var: bad})
        rc, out, err = run(["--headless", "rain", "--frames", "1", "--stats"], env=env)
        one_error_line(rc, out, err, 1, "cpu engine", "%s=%s" % (var, bad))
        env = dict(os.environ, **{var: good})
        rc, out, err = run(["--headless", "rain", "--frames", "1", "--stats"], env=env)
        check(rc == 0 and json.loads(out)["balls"] > 1000, "%s=%s: rc %d %r" % (var, good, rc, err))


def test_bench_quick():
    js = os.path.join(TMP, "bench.json")
    rc, out, err = run(["--bench", "--backend", "cpu", "--bench-sizes", "300",
                        "--bench-frames", "2", "--bench-json", js])
    check(rc == 0, "bench: rc %d %r" % (rc, err))
    check("ball-steps/s" in out and "rain" in out and "pile" in out, "table: %r" % out)
    rows = [json.loads(l) for l in open(js).read().splitlines()]
    check([(r["scene"], r["n"], r["backend"]) for r in rows] ==
          [("rain", 300, "cpu"), ("pile", 300, "cpu")], "rows: %r" % rows)
    for r in rows:
        for k in ["device", "threads", "frames", "ms_per_frame", "ball_steps_per_s",
                  "realtime_factor", "integrate_ms", "grid_ms", "ball_contacts_ms",
                  "static_contacts_ms", "readback_ms", "bytes_per_ball"]:
            check(k in r, "bench row lacks %s: %r" % (k, r))
        check(r["frames"] == 2 and r["ball_steps_per_s"] > 0, "row %r" % r)
        check(r["runs"] == 1 and r["ms_per_frame_runs"] == [r["ms_per_frame"]], "row %r" % r)
        # each timed frame's own time, in order: they add up to the row's
        each = r["ms_each_frame"]
        check(len(each) == 2 and all(m > 0 for m in each) and
              abs(sum(each) - 2 * r["ms_per_frame"]) <= 1e-9 * r["ms_per_frame"],
              "ms_each_frame: %r" % r)
        # the world's 25 bytes per ball and the engine's 33 at least, plus
        # the grids, which weigh more in a world of 300 balls
        check(58 <= r["bytes_per_ball"] < 400, "bytes per ball: %r" % r)
    # --bench-json - : JSON lines alone on stdout, the table on stderr.
    rc, out, err = run(["--bench", "--backend", "cpu", "--bench-sizes", "200",
                        "--bench-frames", "1", "--bench-json", "-"])
    check(rc == 0 and "ball-steps/s" in err, "bench json -: %r" % err)
    check(len([json.loads(l) for l in out.splitlines()]) == 2, "stdout: %r" % out)


def test_bench_runs():
    # --bench-runs 3: each row run three times in turns; the row shown is
    # the run with the median ms/frame, and the JSON lists all three.
    js = os.path.join(TMP, "bench-runs.json")
    rc, out, err = run(["--bench", "--backend", "cpu", "--bench-sizes", "200",
                        "--bench-frames", "2", "--bench-runs", "3", "--bench-json", js])
    check(rc == 0, "bench runs: rc %d %r" % (rc, err))
    rows = [json.loads(l) for l in open(js).read().splitlines()]
    check([(r["scene"], r["n"]) for r in rows] == [("rain", 200), ("pile", 200)],
          "rows: %r" % rows)
    for r in rows:
        ms = r["ms_per_frame_runs"]
        check(r["runs"] == 3 and len(ms) == 3 and all(m > 0 for m in ms), "row %r" % r)
        check(r["ms_per_frame"] == sorted(ms)[1], "not the median run: %r" % r)
        # the shown row is that run's, whole: its other figures agree with it
        check(abs(r["wall_s"] * 1000 / 2 - r["ms_per_frame"]) <= 1e-9 * r["ms_per_frame"],
              "row mixes runs: %r" % r)
        check(abs(sum(r["ms_each_frame"]) / 2 - r["ms_per_frame"]) <= 1e-9 * r["ms_per_frame"],
              "ms_each_frame not the median run's: %r" % r)
    notes = [l for l in out.splitlines() if "the median of 3 runs" in l]
    check(len(notes) == 2, "table: %r" % out)
    for r, l in zip(rows, notes):
        shown = [float(v) for v in l.split(":")[1].split()]
        check(shown == [round(m, 2) for m in r["ms_per_frame_runs"]], "%r vs %r" % (l, r))


def test_bench_each_frame_cap():
    # ms_each_frame keeps the first 1,000 timed frames of a longer row.
    rc, out, err = run(["--bench", "--backend", "cpu", "--bench-sizes", "50",
                        "--bench-frames", "1001", "--bench-json", "-"])
    check(rc == 0, "bench 1001 frames: rc %d %r" % (rc, err))
    for r in [json.loads(l) for l in out.splitlines()]:
        each = r["ms_each_frame"]
        check(r["frames"] == 1001 and len(each) == 1000 and all(m > 0 for m in each),
              "row %r" % {k: v for k, v in r.items() if k != "ms_each_frame"})
        check(sum(each) < 1001 * r["ms_per_frame"], "the cap's sum: %r" % sum(each))


def test_no_window_build():
    rc, out, err = run(["--version"])
    if "sandbox window: not built" not in out:
        return "skipped: this build has the sandbox window"
    rc, out, err = run([])
    one_error_line(rc, out, err, 1, "--headless")


def main():
    tests = [(n, f) for n, f in sorted(globals().items())
             if n.startswith("test_") and callable(f) and FILTER in n]
    failed = 0
    for name, fn in tests:
        try:
            note = fn()
            print("ok   %s%s" % (name, " (%s)" % note if note else ""))
        except Exception as e:  # report every failure, then go on
            failed += 1
            print("FAIL %s: %s" % (name, e))
        sys.stdout.flush()
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    import shutil
    shutil.rmtree(TMP, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
