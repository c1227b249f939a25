"""End-to-end: G switches the engine CPU -> OpenCL (on PoCL or a GPU) and
back without losing a ball; when OpenCL is unusable the state (and HUD)
says why and the sandbox stays on the CPU."""
from e2e import Sandbox, check


def main():
    with Sandbox(args=["--window", "960x540"]) as sb:
        s = sb.state()
        check(s["engine"] == "cpu", "starts on the CPU engine")
        sb.key("space")  # paused: the ball count cannot change by itself
        s = sb.wait(lambda s: s["paused"], 5, "paused")
        balls = s["balls"]
        sb.key("g")
        s = sb.wait(lambda s: s["engine"] == "opencl" or s["engine_error"], 55,
                    "the engine switch")
        check(not s["engine_starting"], "the HUD no longer says OpenCL is starting")
        if s["engine"] == "opencl":
            print("ok   G switched to OpenCL on: " + s["device"])
            check(s["balls"] == balls, "no ball lost in the switch (%d)" % balls)
            sb.key("n")
            sb.wait(lambda s: s["engine"] == "opencl" and s["frame"] > 0, 20,
                    "a frame on OpenCL")
            sb.key("g")
            s = sb.wait(lambda s: s["engine"] == "cpu", 30, "back to the CPU")
            check(s["balls"] == balls, "G again: back on the CPU, no ball lost")
        else:
            check(s["engine"] == "cpu", "OpenCL unusable: stays on the CPU")
            check(len(s["engine_error"]) > 5 and "OpenCL" in s["message"],
                  "and says why: " + s["engine_error"])
        check(sb.quit() == 0, "Escape quits with status 0")


main()
