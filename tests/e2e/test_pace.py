"""End-to-end: while the engine's step takes longer than a frame, the
window (whose drawing rasterises on the CPU under Xvfb, on the cores the
engine steps on) draws every second frame, says so in the HUD and the
state file, still takes screenshots, and draws every frame again when the
step has room to spare or the world is paused (src/app/pace.h)."""
import time

from e2e import Sandbox, check, write_scene

# 3,000 balls at 896 sub-steps a frame: a step of about two frames' time
# on two cores (2.7 million ball-steps a frame); 3 sub-steps after eight
# presses of [ (integer halving), a step of a few ms even in a sanitizer
# build; 768 after eight presses of ].
SCENE = """ballpit-scene 1
world 1280 720
gravity 0 900
substeps 896
line 100 650 1180 650
swarm 400 400 1000 3 120 0 0 1
swarm 640 400 1000 3 120 0 0 2
swarm 880 400 1000 3 120 0 0 3
"""


def main():
    sb = Sandbox()
    sb.scene = write_scene(sb.tmp, "heavy.scene", SCENE)
    with sb:
        s = sb.state()
        check(s["balls"] == 3000 and s["substeps"] == 896, "opens with 3,000 balls at 896 sub-steps")
        s = sb.wait(lambda s: s.get("draw_every") == 2, 30,
                    "every second frame drawn while the step is long")
        print("ok   the step takes %.0f ms: every second frame drawn" % s["step_ms"])
        time.sleep(1.5)  # the fps is measured over half a second
        s = sb.state()
        check(s["draw_every"] == 2 and 5 < s["fps"] < 25,
              "the window draws about half the frames (fps %.1f)" % s["fps"])
        r0 = s["rendered"]
        time.sleep(1.0)
        check(sb.state()["rendered"] > r0 + 5, "frames are still drawn")
        shot = sb.screenshot()
        check(shot.endswith(".png"), "a screenshot while halved")

        for _ in range(8):
            sb.key("bracketleft")
        s = sb.wait(lambda s: s["substeps"] == 3, 10, "[ x8: 3 sub-steps")
        s = sb.wait(lambda s: s.get("draw_every") == 1, 30,
                    "every frame drawn again once the step is short")
        print("ok   %d sub-steps, step %.1f ms: every frame drawn" % (s["substeps"], s["step_ms"]))

        for _ in range(8):
            sb.key("bracketright")
        sb.wait(lambda s: s["substeps"] == 768 and s.get("draw_every") == 2, 30,
                "] x8: 768 sub-steps, halved again")
        sb.key("space")
        s = sb.wait(lambda s: s["paused"] and s.get("draw_every") == 1, 10,
                    "paused: every frame drawn")
        print("ok   paused: every frame drawn")
        sb.sanitizer_check()


main()
