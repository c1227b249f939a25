#!/usr/bin/env python3
"""The CPU engine's team of threads on the built-in scenes: each run of
`ballpit --headless SCENE --threads 2` must end with status 0 and report
2 threads in its stats line. Built with ThreadSanitizer (tools/quickstart.sh
test, build-tsan/) a data race between the threads makes the run end with
ThreadSanitizer's status 66 and its report, which this test prints; other
builds run the same scenes as a check of the two-thread runs.

Usage: test_threads.py BALLPIT
"""
import json
import subprocess
import sys

BALLPIT = sys.argv[1]
# the scenes and their frames: the rain's 10,000 balls take the team of
# threads through every pass (the grid's merge, the ranges cut by time);
# the others are smaller worlds, the pile's balls at rest
RUNS = [("rain", 20), ("pile", 20), ("gas", 20), ("default", 20)]


def main():
    failed = 0
    for scene, frames in RUNS:
        args = [BALLPIT, "--headless", scene, "--frames", str(frames), "--threads", "2",
                "--backend", "cpu", "--stats"]
        p = subprocess.run(args, capture_output=True, text=True, timeout=600)
        why = None
        if "ThreadSanitizer" in p.stderr:
            why = "ThreadSanitizer reported (status %d)" % p.returncode
        elif p.returncode != 0:
            why = "status %d" % p.returncode
        else:
            try:
                stats = json.loads(p.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                stats = None
            if not stats or stats.get("threads") != 2 or stats.get("frames") != frames:
                why = "stats line without 2 threads and %d frames: %r" % (frames, p.stdout[-300:])
        if why:
            failed += 1
            print("FAIL %s: %s" % (scene, why))
            print("\n".join(p.stderr.splitlines()[:60]))
        else:
            print("ok   %s: %d frames on 2 threads" % (scene, frames))
    print("%d passed, %d failed" % (len(RUNS) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
