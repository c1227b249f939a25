#!/usr/bin/env python3
"""run_fuzz.py FUZZER CORPUS [--seconds N] [--dict FILE]: one short fuzz run.

Runs a libFuzzer binary for N seconds on a COPY of CORPUS in a temporary
folder (the corpus in the source tree is never written by a test run).
Exit status: the fuzzer's (0 = no crash). A crash input is copied into the
current folder (meson's build folder for the test) and its path printed, so
it can be added to the corpus as a regression input.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fuzzer")
    ap.add_argument("corpus")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--dict", default=None)
    a = ap.parse_args()
    a.fuzzer = os.path.abspath(a.fuzzer)  # meson may pass a bare name
    if not os.path.isdir(a.corpus):
        print(f"run_fuzz: corpus folder {a.corpus} is missing", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="bp-fuzz-") as tmp:
        work = os.path.join(tmp, "corpus")
        shutil.copytree(a.corpus, work)
        seeds = len(os.listdir(work))
        arts = os.path.join(tmp, "artifacts")
        os.mkdir(arts)
        cmd = [a.fuzzer, f"-max_total_time={a.seconds}", "-timeout=20",
               "-rss_limit_mb=2048", "-print_final_stats=1",
               f"-artifact_prefix={arts}/", work]
        if a.dict:
            cmd.insert(1, f"-dict={a.dict}")
        env = dict(os.environ)
        env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        print("run_fuzz:", " ".join(cmd), f"({seeds} seed inputs)", flush=True)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           env=env, text=True, errors="replace")
        out = p.stdout
        # The status lines and final stats, not every NEW line.
        keep = [l for l in out.splitlines()
                if not re.match(r"^#\d+\s+(NEW|REDUCE|pulse)", l)]
        print("\n".join(keep[-60:]))
        for name in os.listdir(arts):
            dst = os.path.abspath(os.path.basename(a.fuzzer) + "-" + name)
            shutil.copy(os.path.join(arts, name), dst)
            print(f"run_fuzz: crash input saved as {dst}")
        if p.returncode != 0:
            print(f"run_fuzz: {os.path.basename(a.fuzzer)} failed (exit {p.returncode})")
        return p.returncode


if __name__ == "__main__":
    sys.exit(main())
