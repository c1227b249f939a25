#!/usr/bin/env python3
"""Regenerates the pictures in docs/images with the program itself.

usage: python3 docs/images/make_images.py BUILD/src/ballpit [NAME.png ...]
(without names: all of them)

Every picture is a screenshot ballpit wrote (F12 or --screenshot-after),
taken under a private Xvfb with the mouse and keys driven by xdotool, as
the end-to-end tests do (tests/e2e/e2e.py). ballpit writes uncompressed
PNGs (its own tiny writer has no zlib); this script re-packs them with
zlib, losslessly, so the repository stays small: the pixels are exactly
the ones the program wrote (the script checks that).
"""
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "e2e"))
import e2e  # noqa: E402


def repack(src, dst):
    """Lossless zlib re-encoding of an RGB PNG (Sub filter on every row)."""
    w, h, ch, rows = e2e.read_png(src)
    raw = bytearray()
    for row in rows:
        raw.append(1)
        prev = bytes(ch)
        out = bytearray(len(row))
        for i in range(len(row)):
            out[i] = (row[i] - (row[i - ch] if i >= ch else 0)) & 255
        raw += out
    def chunk(t, body):
        return (struct.pack(">I", len(body)) + t + body +
                struct.pack(">I", zlib.crc32(t + body) & 0xffffffff))
    png = b"\x89PNG\r\n\x1a\n"
    png += chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2 if ch == 3 else 6, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(bytes(raw), 9))
    png += chunk(b"IEND", b"")
    with open(dst, "wb") as f:
        f.write(png)
    if e2e.read_png(dst)[3] != rows:
        e2e.fail("re-packing changed pixels of " + dst)
    print("wrote %s (%dx%d, %d KB)" % (dst, w, h, os.path.getsize(dst) // 1024))


def after(exe, name, frames, args=()):
    """--screenshot-after: the same picture every run (lockstep)."""
    xvfb, display = e2e.start_xvfb("1600x1000x24")
    try:
        tmp = os.path.join(HERE, ".tmp-" + name)
        env = dict(os.environ, DISPLAY=display, SDL_VIDEODRIVER="x11")
        p = subprocess.run([exe] + list(args) + ["--screenshot-after", str(frames),
                                                  "--screenshot-path", tmp],
                           env=env, timeout=900)
        if p.returncode != 0:
            e2e.fail("ballpit exited with status %d" % p.returncode)
        repack(tmp, os.path.join(HERE, name))
        os.remove(tmp)
    finally:
        xvfb.terminate()
        xvfb.wait()


def driven(exe, name, scene, script, args=()):
    sys.argv[1:] = [exe]
    sb = e2e.Sandbox(args=list(args), scene=scene)
    with sb:
        path = script(sb)
        repack(path, os.path.join(HERE, name))


def drawing(sb):
    sb.frames_pass(20)
    # A freehand ramp on the left, a straight one on the right.
    pts = [(120 + 12 * i, 300 + int(0.0016 * (12 * i) ** 2)) for i in range(30)]
    sb.drag(1, pts, mods=("ctrl",), step_sleep=0.01)
    sb.drag(1, [(1180, 330), (1000, 390), (900, 420)])
    # A bigger swarm, thrown up and to the left.
    sb.click(4, 640, 200)
    sb.drag(3, [(1000, 200), (960, 180), (920, 160), (880, 140)], step_sleep=0.02)
    sb.frames_pass(12)
    # A line in the middle of being drawn: its preview is in the picture.
    sb.move(300, 560)
    sb.xdo("mousedown", "1")
    sb.move(450, 600)
    time.sleep(0.1)
    sb.move(620, 640)
    sb.frames_pass(3)
    # Plain F12: xdotool's --clearmodifiers would release the mouse button.
    before = sb.state().get("last_screenshot", "")
    sb.xdo("key", "F12")
    s = sb.wait(lambda s: s.get("last_screenshot", "") not in ("", before), 20,
                "the screenshot")
    sb.xdo("mouseup", "1")
    return s["last_screenshot"]


def help_overlay(sb):
    sb.frames_pass(30)
    sb.key("F1")
    sb.wait(lambda s: s["help"], 5, "help shown")
    sb.frames_pass(3)
    return sb.screenshot()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    exe = os.path.abspath(sys.argv[1])
    want = set(sys.argv[2:])
    jobs = [
        ("sandbox.png", lambda: after(exe, "sandbox.png", 75)),
        ("rain-letterboxed.png", lambda: after(exe, "rain-letterboxed.png", 60,
                                               ["rain", "--window", "1280x720"])),
        ("drawing.png", lambda: driven(exe, "drawing.png", None, drawing)),
        ("help.png", lambda: driven(exe, "help.png", None, help_overlay)),
    ]
    for name, job in jobs:
        if not want or name in want:
            job()


main()
