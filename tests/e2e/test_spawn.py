"""End-to-end: right-click spawns, the wheel sets the swarm size, a
right-drag throws, holding pours; pause, single step, gravity, slow motion,
sub-steps, clear and reset, all in the real window under Xvfb."""
import time

from e2e import Sandbox, check, write_scene

SCENE = """ballpit-scene 1
world 1280 720
gravity 0 900
line 100 600 1180 600
"""


def main():
    sb = Sandbox()
    sb.scene = write_scene(sb.tmp, "floor.scene", SCENE)
    with sb:
        s = sb.state()
        check(s["balls"] == 0 and s["swarm_size"] == 200, "opens with no balls")
        sb.click(3, 640, 200)
        sb.wait(lambda s: s["balls"] == 200, 10, "a swarm of 200")
        print("ok   right-click spawns a swarm of 200")

        sb.click(4, 640, 200)  # wheel up
        sb.wait(lambda s: s["swarm_size"] == 500, 5, "wheel grows the swarm")
        sb.xdo("keydown", "shift")
        sb.click(4, 640, 200)
        sb.xdo("keyup", "shift")
        s = sb.wait(lambda s: s["radius"] > 4, 5, "Shift+wheel grows the radius")
        print("ok   wheel: swarm 500, Shift+wheel: radius %g" % s["radius"])

        # A quick right-drag throws a swarm of 500.
        sb.drag(3, [(300, 300), (340, 290), (380, 280), (420, 270)],
                step_sleep=0.02)
        sb.wait(lambda s: s["balls"] == 700, 10, "a thrown swarm of 500")
        print("ok   right-drag throws a swarm")

        # Holding pours: more than one swarm's worth after ~1.2 s.
        sb.move(900, 200)
        sb.xdo("mousedown", "3")
        time.sleep(1.2)
        sb.xdo("mouseup", "3")
        s = sb.wait(lambda s: s["balls"] > 700 + 500, 20, "pouring")
        print("ok   holding the right button pours (%d balls)" % s["balls"])

        # Fewer balls from here on keep the frames quick on two cores.
        sb.key("c")
        sb.wait(lambda s: s["balls"] == 0, 20, "C clears the balls")
        print("ok   C clears the balls")

        # Pause: the world frame stops while the window keeps drawing.
        sb.key("space")
        s = sb.wait(lambda s: s["paused"], 5, "paused")
        f0 = s["frame"]
        sb.frames_pass(10)
        check(sb.state()["frame"] == f0, "Space pauses the simulation")
        sb.key("n")
        sb.wait(lambda s: s["frame"] == f0 + 1, 5, "N steps one frame")
        print("ok   N steps exactly one frame while paused")
        sb.key("space")
        sb.wait(lambda s: not s["paused"] and s["frame"] > f0 + 3, 10, "resumed")

        sb.key("v")
        sb.wait(lambda s: not s["gravity"], 5, "V turns gravity off")
        sb.key("s")
        sb.wait(lambda s: s["slowmo"], 5, "S turns slow motion on")
        print("ok   V gravity off, S slow motion on")

        # ] and [: twice and half the sub-steps per frame, in the HUD's
        # line and the state file; the frame count runs on.
        check(sb.state()["substeps"] == 30, "the scene's 30 sub-steps")
        sb.key("bracketright")
        s = sb.wait(lambda s: s["substeps"] == 60, 5, "] doubles the sub-steps")
        check("sub-steps per frame: 60" in s["message"], "] says so: %r" % s["message"])
        f1 = s["frame"]
        sb.key("bracketleft", "bracketleft")
        s = sb.wait(lambda s: s["substeps"] == 15, 5, "[ halves the sub-steps")
        sb.wait(lambda s: s["frame"] > f1 + 2, 10, "frames go on at 15 sub-steps")
        print("ok   ] and [ double and halve the sub-steps (30 -> 60 -> 15)")

        sb.click(3, 640, 200)
        sb.wait(lambda s: s["balls"] == 500, 10, "spawn again")
        sb.key("r")
        s = sb.wait(lambda s: s["balls"] == 0 and s["gravity"], 10,
                    "R resets to the loaded scene")
        check(s["lines"] == 1, "R resets to the loaded scene (its line kept)")
        check(s["substeps"] == 30, "R resets the sub-steps to the scene's")
        check(sb.quit() == 0, "Escape quits with status 0")


main()
