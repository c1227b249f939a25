"""End-to-end: F12 writes a valid PNG of the window's size that is not
blank, named ballpit-YYYYMMDD-HHMMSS.png in a folder it creates; a folder
that cannot be written is reported, never fatal; --screenshot-after N
writes one and quits with status 0."""
import os
import re
import subprocess

from e2e import Sandbox, check, read_png, pixel


def not_blank(png):
    w, h = png[0], png[1]
    colours, lit = set(), 0
    for y in range(0, h, 4):
        for x in range(0, w, 4):
            p = pixel(png, x, y)
            colours.add(p)
            lit += max(p) > 60
    return len(colours), lit / float((w // 4) * (h // 4))


def main():
    with Sandbox(args=["--window", "800x600"]) as sb:
        check(not os.path.exists(sb.shots), "screenshot folder not there yet")
        path = sb.screenshot()
        check(os.path.dirname(path) == sb.shots, "folder created: " + sb.shots)
        check(re.fullmatch(r"ballpit-\d{8}-\d{6}(-\d+)?\.png",
                           os.path.basename(path)) is not None,
              "dated name " + os.path.basename(path))
        png = read_png(path)
        check((png[0], png[1]) == (800, 600), "valid PNG of the window size 800x600")
        ncol, lit = not_blank(png)
        check(ncol > 20 and lit > 0.005,
              "not blank (%d colours, %.1f%% lit)" % (ncol, 100 * lit))
        if sb.state()["font"]:
            # The HUD panel sits in the top-left corner: light text pixels.
            hud = sum(max(pixel(png, x, y)) > 180
                      for y in range(12, 60) for x in range(12, 200))
            check(hud > 50, "the HUD is in the picture (%d text pixels)" % hud)
        second = sb.screenshot()
        check(second != path and os.path.exists(path), "a second shot gets a new name")

        # Resize: the screenshot follows the window.
        sb.xdo("windowsize", sb.wid, "1000", "500")
        sb.wait(lambda s: s["window"] == [1000, 500], 10, "resized window")
        png = read_png(sb.screenshot())
        check((png[0], png[1]) == (1000, 500), "after a resize the PNG is 1000x500")
        check(sb.quit() == 0, "Escape quits with status 0")

    # An unwritable screenshot folder: reported in the state/HUD, not fatal.
    sb = Sandbox()
    blocker = os.path.join(sb.tmp, "plainfile")
    with open(blocker, "w") as f:
        f.write("not a folder\n")
    sb.args = ["--screenshot-dir", os.path.join(blocker, "shots")]
    with sb:
        sb.key("F12")
        s = sb.wait(lambda s: s["screenshot_error"], 10, "screenshot error")
        check("plainfile" in s["screenshot_error"],
              "unwritable folder reported: " + s["screenshot_error"])
        r = s["rendered"]
        sb.wait(lambda s: s["rendered"] > r + 5, 10, "still running")
        print("ok   and the sandbox keeps running")
        check(sb.quit() == 0, "Escape quits with status 0")

    # --screenshot-after N: one picture, then exit 0.
    sb2 = Sandbox()
    sb2.__enter__()
    try:
        out = os.path.join(sb2.tmp, "after", "doc.png")
        p = subprocess.run([sb2.exe, "--window", "640x360", "--screenshot-after",
                            "5", "--screenshot-path", out], env=sb2.env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=50)
        check(p.returncode == 0, "--screenshot-after 5 exits 0 " + p.stdout.strip())
        png = read_png(out)
        check((png[0], png[1]) == (640, 360), "its PNG is 640x360")
        # A path it cannot write: one line and status 1 before the window
        # opens, not a silent status 1 after N frames (100,000 frames would
        # take 50 minutes; the HUD's message vanished with the window).
        blocker = os.path.join(sb2.tmp, "plainfile")
        with open(blocker, "w") as f:
            f.write("not a folder\n")
        for flags, name in ((["--screenshot-after", "100000", "--screenshot-path"],
                             os.path.join(blocker, "x.png")),
                            (["--screenshot-after", "100000", "--screenshot-path"],
                             sb2.tmp),
                            (["--state-file"], os.path.join(sb2.tmp, "no", "st.json"))):
            p = subprocess.run([sb2.exe] + flags + [name], env=sb2.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=30)
            lines = p.stderr.splitlines()
            check(p.returncode == 1 and len(lines) == 1 and
                  lines[0].startswith("ballpit: " + flags[-1] + " " + name),
                  "%s %s: status %d, %r" % (flags[-1], name, p.returncode, p.stderr))
        print("ok   unwritable --screenshot-path and --state-file said at once")
    finally:
        sb2.close()


main()
