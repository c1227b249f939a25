"""End-to-end: window title, help overlay (whole in a small window), save and load (Ctrl+S/Ctrl+O,
including a save that cannot be written and a file that cannot be
loaded), drawing in a letterboxed window lands under the mouse, running
without a font, and closing the window quits with status 0."""
import os

from e2e import Sandbox, check, read_png, pixel, write_scene

SCENE = """ballpit-scene 1
world 1280 720
gravity 0 900
line 100 650 1180 650
swarm 640 300 300 3 80 0 0 7
"""


def main():
    sb = Sandbox()
    sb.scene = write_scene(sb.tmp, "session.scene", SCENE)
    save = os.path.join(sb.tmp, "saves", "mine.scene")
    sb.args = ["--save-to", save]
    with sb:
        title = sb.xdo("getwindowname", sb.wid).strip()
        check(title == "ballpit - session", "window title: " + title)
        sb.key("F1")
        sb.wait(lambda s: s["help"], 5, "F1 shows the help")
        sb.key("h")
        sb.wait(lambda s: not s["help"], 5, "H hides it")
        print("ok   F1/H toggle the help overlay")

        # Draw a line and save: the file has the balls and both lines.
        sb.drag(1, [(200, 200), (400, 260), (600, 300)])
        sb.wait(lambda s: s["lines"] == 2, 10, "a second line")
        sb.key("ctrl+s")
        s = sb.wait(lambda s: "saved" in s["message"], 10, "Ctrl+S saves")
        check(os.path.exists(save), "Ctrl+S wrote " + save + " (folder created)")
        rows = open(save).read().splitlines()
        nl = sum(r.startswith("line ") for r in rows)
        nb = sum(r.startswith("ball ") for r in rows)
        check(nl == 2 and nb == 300, "the saved scene has 2 lines and 300 balls "
              "(%d, %d)" % (nl, nb))

        # Change the world, then Ctrl+O brings the saved one back.
        sb.key("c")
        sb.key("l")
        sb.wait(lambda s: s["balls"] == 0 and s["lines"] == 0, 10, "cleared")
        sb.key("ctrl+o")
        s = sb.wait(lambda s: s["lines"] == 2 and s["balls"] == 300, 15,
                    "Ctrl+O loads the saved scene")
        print("ok   Ctrl+O restores 300 balls and 2 lines")
        t = sb.xdo("getwindowname", sb.wid).strip()
        check(t == "ballpit - mine", "the title follows the loaded scene: " + t)

        # A save that cannot be written keeps the old file and says why.
        before = open(save).read()
        if os.geteuid() != 0:
            os.chmod(os.path.dirname(save), 0o500)
            try:
                sb.key("ctrl+s")
                s = sb.wait(lambda s: "save failed" in s["message"], 10,
                            "a failed save is reported")
            finally:
                os.chmod(os.path.dirname(save), 0o700)
            check(open(save).read() == before, "unwritable folder: save "
                  "refused, old file intact: " + s["message"])
        else:
            print("ok   (root writes anywhere: read-only folder check skipped)")
        # The save folder is replaced by a regular file: the save fails and
        # says why, for any user (root included), and the sandbox goes on.
        folder = os.path.dirname(save)
        os.rename(folder, folder + ".away")
        with open(folder, "w") as f:
            f.write("a file where the folder was\n")
        sb.key("ctrl+s")
        s = sb.wait(lambda s: "save failed" in s["message"], 10,
                    "a failed save is reported")
        check("not a folder" in s["message"] or "saves" in s["message"],
              "save into a non-folder reported: " + s["message"])
        os.remove(folder)
        os.rename(folder + ".away", folder)
        check(open(save).read() == before, "the old saved file is intact")
        # A broken file is reported by line and the world is kept.
        with open(save, "w") as f:
            f.write("ballpit-scene 1\nworld 1280 720\nline 1 2 three 4\n")
        sb.key("ctrl+o")
        s = sb.wait(lambda s: "load failed" in s["message"], 10, "bad file reported")
        check(":3:" in s["message"] and s["lines"] == 2,
              "bad scene reported with its line number, world kept: " + s["message"])
        check(sb.close_window() == 0, "closing the window quits with status 0")

    # Letterboxed: a 1000x800 window shows the 1280x720 world at 0.78 with
    # bars above and below; a drag must draw exactly under the mouse.
    sb = Sandbox(args=["--window", "1000x800"])
    sb.scene = write_scene(sb.tmp, "empty.scene", "ballpit-scene 1\nworld 1280 720\n")
    with sb:
        sb.key("space")
        sb.drag(1, [(150, 250), (500, 400), (850, 550)])
        sb.wait(lambda s: s["lines"] == 1, 10, "a line")
        png = read_png(sb.screenshot())
        check(png[0] == 1000 and png[1] == 800, "screenshot 1000x800")
        on = [max(min(pixel(png, 150 + 35 * i + dx, 250 + 15 * i + dy))
                  for dx in (-1, 0, 1) for dy in (-1, 0, 1)) for i in range(1, 20)]
        check(min(on) > 150, "the line is under the mouse path (min %d)" % min(on))
        bar = pixel(png, 500, 20)  # above the world box: letterbox bar
        box = pixel(png, 500, 120)  # inside the world box
        check(sum(bar) < sum(box), "letterbox bar %s darker than the box %s"
              % (bar, box))
        check(sb.quit() == 0, "Escape quits with status 0")

    # A window too small for the help table: F1 shows it whole, scaled down
    # (its bottom edge, the panel's border colour across most of a row, is
    # on screen; before, the last rows fell below the window).
    sb = Sandbox(args=["--window", "400x300"])
    sb.scene = write_scene(sb.tmp, "empty.scene", "ballpit-scene 1\nworld 1280 720\n")
    with sb:
        # The status panel, too, is scaled to the window: its right edge
        # (the border colour down a column) and its bottom edge (across a
        # row) are on screen, the bottom within two fifths of the height.
        # Before, the panel was 530 px wide and ran off the window.
        sb.wait(lambda s: s["fps"] > 0, 10, "the HUD is up")
        png = read_png(sb.screenshot())

        def border(x, y):  # (70, 80, 100) at the panel's alpha, 170
            return max(abs(a - b) for a, b in zip(pixel(png, x, y), (51, 58, 74))) < 10
        right = [x for x in range(100, png[0])
                 if sum(border(x, y) for y in range(10, 120)) > 40]
        bottom = [y for y in range(20, png[1])
                  if sum(border(x, y) for x in range(png[0])) > png[0] // 2]
        check(right and bottom and bottom[0] <= png[1] * 2 // 5,
              "the status panel fits a 400x300 window (right edge %s, bottom %s)"
              % (right[-1:], bottom[:1]))
        print("ok   the status panel fits a 400x300 window (right edge x=%d, bottom y=%d)"
              % (right[-1] if right else -1, bottom[0] if bottom else -1))
        sb.key("F1")
        sb.wait(lambda s: s["help"], 5, "F1 shows the help")
        png = read_png(sb.screenshot())
        edge = [y for y in range(150, png[1])
                if sum(max(abs(a - b) for a, b in zip(pixel(png, x, y), (70, 80, 100))) < 14
                       for x in range(png[0])) > png[0] // 2]
        check(edge, "the help's bottom edge is inside a 400x300 window")
        print("ok   the help fits a 400x300 window (bottom edge at y=%d)" % edge[-1])
        check(sb.quit() == 0, "Escape quits with status 0")

    # No font: one line on stderr, the sandbox still runs and screenshots.
    os.environ["BALLPIT_FONT_SEARCH"] = "0"  # copied into the app's env
    sb = Sandbox(args=["--font", "/nonexistent/font.ttf"])
    with sb:
        s = sb.state()
        check(s["font"] is False, "no font: runs without the HUD")
        sb.screenshot()
        check(sb.quit() == 0, "and quits with status 0")
        sb.log.seek(0)
        log = sb.log.read()
        check(log.count("no usable font") == 1,
              "said so on one line: " + log.strip().replace("\n", " | "))
        check("/nonexistent/font.ttf" in log, "the line names the --font given")
    del os.environ["BALLPIT_FONT_SEARCH"]

    # A --font that cannot be opened, with a system font to fall back on:
    # one line naming both, and the HUD is there.
    sb = Sandbox(args=["--font", "/nonexistent/font.ttf"])
    with sb:
        s = sb.state()
        if s["font"]:
            check(sb.quit() == 0, "quits with status 0")
            sb.log.seek(0)
            lines = [l for l in sb.log.read().splitlines() if "--font" in l]
            check(len(lines) == 1 and "/nonexistent/font.ttf" in lines[0] and
                  "instead" in lines[0],
                  "a bad --font with a fallback: one line naming both: %r" % lines)
            print("ok   a bad --font falls back: " + (lines[0] if lines else ""))
        else:
            sb.quit()
            print("skip: no system font here to fall back on")


main()
