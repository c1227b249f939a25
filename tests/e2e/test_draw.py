"""End-to-end: draw, undo/redo, freehand, erase and clear lines in the real
window (driven by xdotool under Xvfb), checked in the state file and in the
pixels of a screenshot the program takes itself (F12)."""
import os

from e2e import Sandbox, check, read_png, pixel, write_scene

EMPTY = """ballpit-scene 1
# no balls, no lines: a clean background for pixel checks
world 1280 720
gravity 0 900
"""


def bright(png, x, y, r=2):
    """Brightest grey level in a small square around (x, y)."""
    best = 0
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            best = max(best, min(pixel(png, x + dx, y + dy)))
    return best


def main():
    sb = Sandbox()
    sb.scene = write_scene(sb.tmp, "empty.scene", EMPTY)
    with sb:
        s = sb.state()
        check(s["lines"] == 0 and s["balls"] == 0, "the empty scene opens")
        check(s["window"] == [1280, 720], "default window 1280x720")

        # Straight line, dragged in steps (the preview follows the mouse).
        pts = [(200 + 80 * i, 150 + 20 * i) for i in range(6)]
        sb.drag(1, pts)
        sb.wait(lambda s: s["lines"] == 1, 10, "one line after the drag")
        print("ok   left-drag adds a line")
        sb.frames_pass(3)
        png = read_png(sb.screenshot())
        check(png[0] == 1280 and png[1] == 720, "screenshot is window-sized")
        on = [bright(png, int(200 + 400 * t / 20), int(150 + 100 * t / 20))
              for t in range(1, 20)]
        check(min(on) > 170, "the line is drawn along its whole length "
              "(min brightness %d)" % min(on))
        off = [bright(png, int(200 + 400 * t / 20), int(150 + 100 * t / 20) + 25)
               for t in range(1, 20)]
        check(max(off) < 90, "and nowhere beside it (max brightness %d)" % max(off))

        # Undo and redo.
        sb.key("ctrl+z")
        sb.wait(lambda s: s["lines"] == 0, 10, "Ctrl+Z removes the line")
        print("ok   Ctrl+Z undoes the line")
        sb.key("ctrl+y")
        sb.wait(lambda s: s["lines"] == 1, 10, "Ctrl+Y puts it back")
        print("ok   Ctrl+Y redoes it")

        # Freehand: a half circle of 60 mouse moves becomes a few segments.
        import math
        arc = [(int(640 + 150 * math.cos(math.pi * i / 59)),
                int(450 + 150 * math.sin(math.pi * i / 59))) for i in range(60)]
        sb.drag(1, arc, mods=("ctrl",), step_sleep=0.01)
        s = sb.wait(lambda s: s["lines"] > 1, 10, "freehand lines")
        added = s["lines"] - 1
        check(3 <= added <= 40, "Ctrl+drag draws a simplified polyline "
              "(%d segments from 60 mouse moves)" % added)

        # Middle-drag across the straight line erases it (and only it).
        sb.drag(2, [(400, 120), (400, 170), (400, 230)])
        s = sb.wait(lambda s: s["lines"] == added, 10, "middle-drag erases")
        print("ok   middle-drag erases the line it crosses")
        sb.key("ctrl+z")
        sb.wait(lambda s: s["lines"] == added + 1, 10, "undo the erase")
        print("ok   Ctrl+Z brings the erased line back")

        # Eraser mode on E: the left button erases; a drag through the
        # whole arc removes all its segments in one stroke.
        sb.key("e")
        sb.wait(lambda s: s["eraser"], 5, "eraser mode on")
        sb.drag(1, arc[::4] + [arc[-1]], step_sleep=0.02)
        s = sb.wait(lambda s: s["lines"] == 1, 10, "the arc is erased")
        print("ok   E + left-drag erases")
        sb.key("e")

        # L clears all lines; Ctrl+Z restores them.
        sb.key("l")
        sb.wait(lambda s: s["lines"] == 0, 10, "L clears the lines")
        sb.key("ctrl+z")
        sb.wait(lambda s: s["lines"] == 1, 10, "undo the clear")
        print("ok   L clears lines, Ctrl+Z restores them")

        check(sb.quit() == 0, "Escape quits with status 0")

    # The other way of drawing (GPU renderers use it; forced here): the
    # line and a swarm must be in the screenshot too.
    os.environ["BALLPIT_DRAW"] = "geometry"
    sb = Sandbox()
    del os.environ["BALLPIT_DRAW"]
    sb.scene = write_scene(sb.tmp, "empty.scene", EMPTY)
    with sb:
        sb.key("space")
        sb.drag(1, pts)
        sb.click(3, 900, 400)
        sb.wait(lambda s: s["lines"] == 1 and s["balls"] == 200, 10, "line and swarm")
        sb.frames_pass(3)
        png = read_png(sb.screenshot())
        on = [bright(png, int(200 + 400 * t / 20), int(150 + 100 * t / 20))
              for t in range(1, 20)]
        check(min(on) > 170, "geometry drawing: the line is there (min %d)" % min(on))
        lit = sum(max(pixel(png, x, y)) > 80 for y in range(330, 470, 2)
                  for x in range(830, 970, 2))
        check(lit > 100, "geometry drawing: the swarm is there (%d lit samples)" % lit)
        check(sb.quit() == 0, "Escape quits with status 0")


main()
