"""e2e.py - shared helpers for the sandbox's end-to-end tests.

Each test starts its own Xvfb (Xvfb -displayfd picks a free display number,
so tests can run in parallel and never touch a real display), starts the
real ballpit window in it with --state-file, drives it with xdotool, and
reads the state file and the screenshots the program writes itself.
Exit status 77 (meson: skipped) with a reason when Xvfb or xdotool is
missing or the build has no window.
"""
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

SKIP = 77


def skip(reason):
    print("SKIP: " + reason)
    sys.exit(SKIP)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print("ok   " + msg)


def read_png(path):
    """Decodes an 8-bit RGB/RGBA PNG (any filter) -> (w, h, channels, rows)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, idat, w, h, ctype = 8, b"", 0, 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        ctype_b = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        if zlib.crc32(ctype_b + body) & 0xffffffff != crc:
            raise ValueError("bad CRC in chunk %r" % ctype_b)
        if ctype_b == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            if depth != 8 or ctype not in (2, 6):
                raise ValueError("unexpected PNG format")
        elif ctype_b == b"IDAT":
            idat += body
        elif ctype_b == b"IEND":
            break
        pos += 12 + n
    raw = zlib.decompress(idat)  # also checks the Adler-32 trailer
    ch = 3 if ctype == 2 else 4
    stride = w * ch
    if len(raw) != h * (stride + 1):
        raise ValueError("wrong amount of pixel data")
    rows, prev = [], bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft != 0:
            for i in range(stride):
                a = line[i - ch] if i >= ch else 0
                b = prev[i]
                c = prev[i - ch] if i >= ch else 0
                if ft == 1:
                    p = a
                elif ft == 2:
                    p = b
                elif ft == 3:
                    p = (a + b) // 2
                else:
                    pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                    p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + p) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, ch, rows


def pixel(png, x, y):
    w, h, ch, rows = png
    o = x * ch
    return tuple(rows[y][o:o + 3])


def sanitizer_problems(text):
    """Sanitizer reports in a program's output that concern ballpit."""
    out = []
    for line in text.splitlines():
        if "ERROR: AddressSanitizer" in line or "runtime error:" in line:
            out.append(line.strip())
    # Leak reports: blocks that start with "Direct leak"/"Indirect leak".
    block = []
    for line in text.splitlines() + [""]:
        if line.startswith(("Direct leak", "Indirect leak")) or not line.strip():
            if block and any(("/src/app/" in l or "/src/sim/" in l or "/src/cli" in l)
                             for l in block):
                out.append(block[0].strip() + " " + " / ".join(
                    l.strip() for l in block if "/src/" in l)[:300])
            block = [line] if line.strip() else []
        elif block:
            block.append(line)
    return out


def start_xvfb(screen="1600x900x24"):
    """Starts Xvfb on a display number it picks itself (-displayfd).
    Returns (process, ":N") or (None, None)."""
    if not shutil.which("Xvfb"):
        skip("Xvfb is not installed (apt-get install xvfb)")
    r, w = os.pipe()
    proc = subprocess.Popen(
        ["Xvfb", "-displayfd", str(w), "-screen", "0", screen,
         "-nolisten", "tcp", "-noreset"],
        pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    num = b""
    deadline = time.time() + 20
    while time.time() < deadline and not num.endswith(b"\n"):
        chunk = os.read(r, 16)
        if not chunk:
            break
        num += chunk
    os.close(r)
    if not num.strip():
        proc.kill()
        proc.wait()
        return None, None
    return proc, ":" + num.decode().strip()


class Sandbox:
    """Xvfb + the ballpit window + helpers. Use as a context manager."""

    def __init__(self, args=(), scene=None, screen="1600x900x24"):
        self.exe = os.environ.get("BALLPIT") or (sys.argv[1] if len(sys.argv) > 1 else None)
        if not self.exe or not os.access(self.exe, os.X_OK):
            skip("ballpit executable not given")
        for tool in ("Xvfb", "xdotool"):
            if not shutil.which(tool):
                skip("%s is not installed (apt-get install xvfb xdotool)" % tool)
        self.tmp = tempfile.mkdtemp(prefix="bp_e2e_")
        self.state_path = os.path.join(self.tmp, "state.json")
        self.shots = os.path.join(self.tmp, "shots")
        self.args = list(args)
        self.scene = scene
        self.screen = screen
        self.xvfb = self.app = None
        self.wid = None

    def __enter__(self):
        self.xvfb, display = start_xvfb(self.screen)
        if not self.xvfb:
            self.close()
            skip("Xvfb did not start")
        self.env = dict(os.environ)
        self.env["DISPLAY"] = display
        self.env["SDL_VIDEODRIVER"] = "x11"
        # Sanitizer builds: leaks inside X11/Mesa/D-Bus (libraries SDL
        # loads and unloads) must not fail the run; sanitizer_problems()
        # fails it for any leak with a frame in ballpit's own sources.
        self.env["LSAN_OPTIONS"] = "exitcode=0"
        # PoCL compiles kernels with LLVM, which installs its own signal
        # stack in the calling thread (here the logic thread); ASan's would
        # then fail to unmap when that thread exits.
        asan = self.env.get("ASAN_OPTIONS", "")
        self.env["ASAN_OPTIONS"] = (asan + ":" if asan else "") + "use_sigaltstack=0"
        # Tests must not write into the user's folders.
        self.env["HOME"] = self.tmp
        self.env.pop("XDG_PICTURES_DIR", None)
        self.env.pop("XDG_DATA_HOME", None)
        cmd = [self.exe]
        if self.scene:
            cmd.append(self.scene)
        cmd += ["--state-file", self.state_path]
        if "--screenshot-dir" not in self.args:
            cmd += ["--screenshot-dir", self.shots]
        cmd += self.args
        self.log = open(os.path.join(self.tmp, "app.log"), "w+")
        self.app = subprocess.Popen(cmd, env=self.env, stdout=self.log,
                                    stderr=subprocess.STDOUT)
        self.wait(lambda s: s.get("rendered", 0) >= 3, 30, "window shows frames")
        out = ""
        deadline = time.time() + 10
        while time.time() < deadline:
            out = self.xdo("search", "--name", "^ballpit", check=False).strip()
            if out:
                break
            time.sleep(0.2)
        if not out:
            fail("no ballpit window found")
        self.wid = out.split()[0]
        self.xdo("windowfocus", "--sync", self.wid, check=False)
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self.app and self.app.poll() is None:
            self.app.send_signal(signal.SIGTERM)
            try:
                self.app.wait(10)
            except subprocess.TimeoutExpired:
                self.app.kill()
                self.app.wait()
        if self.xvfb and self.xvfb.poll() is None:
            self.xvfb.terminate()
            try:
                self.xvfb.wait(10)
            except subprocess.TimeoutExpired:
                self.xvfb.kill()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def dump_log(self):
        try:
            self.log.seek(0)
            print(self.log.read())
        except (OSError, ValueError):
            pass

    def xdo(self, *args, check=True):
        p = subprocess.run(["xdotool"] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, timeout=30)
        if check and p.returncode != 0:
            fail("xdotool %s: %s" % (" ".join(args), p.stderr.strip()))
        return p.stdout

    def state(self):
        try:
            with open(self.state_path) as f:
                return json.load(f)
        except (OSError, ValueError):
            return {}

    def wait(self, cond, timeout, what):
        deadline = time.time() + timeout
        s = {}
        while time.time() < deadline:
            if self.app.poll() is not None:
                self.dump_log()
                fail("ballpit exited (status %d) while waiting for: %s"
                     % (self.app.returncode, what))
            s = self.state()
            if s and cond(s):
                return s
            time.sleep(0.1)
        self.dump_log()
        fail("timed out after %ds waiting for: %s (state: %s)" % (timeout, what, s))

    def frames_pass(self, n=3):
        """Waits until n more frames have been drawn (edits applied)."""
        r = self.state().get("rendered", 0)
        self.wait(lambda s: s.get("rendered", 0) >= r + n, 20, "%d frames" % n)

    def key(self, *keys):
        self.xdo("windowfocus", "--sync", self.wid, check=False)
        self.xdo("key", "--clearmodifiers", *keys)

    def move(self, x, y):
        self.xdo("mousemove", "--window", self.wid, str(x), str(y))

    def drag(self, button, points, mods=(), step_sleep=0.02):
        """Presses button at points[0], moves through points, releases."""
        self.move(*points[0])
        for m in mods:
            self.xdo("keydown", m)
        self.xdo("mousedown", str(button))
        for p in points[1:]:
            time.sleep(step_sleep)
            self.move(*p)
        time.sleep(step_sleep)
        self.xdo("mouseup", str(button))
        for m in mods:
            self.xdo("keyup", m)

    def click(self, button, x, y):
        self.move(x, y)
        self.xdo("click", str(button))

    def screenshot(self):
        """Presses F12 and returns the new screenshot's path."""
        before = self.state().get("last_screenshot", "")
        self.key("F12")
        s = self.wait(lambda s: s.get("last_screenshot", "") not in ("", before)
                      or s.get("screenshot_error", ""), 20, "a screenshot")
        if s.get("screenshot_error"):
            fail("screenshot failed: " + s["screenshot_error"])
        return s["last_screenshot"]

    def close_window(self):
        """Asks the window to close as a window manager's close button does
        (a WM_DELETE_WINDOW client message, sent through libX11)."""
        import ctypes
        import ctypes.util

        lib = ctypes.util.find_library("X11")
        if not lib:
            skip("libX11 not found for the close-button test")
        x = ctypes.CDLL(lib)
        x.XOpenDisplay.restype = ctypes.c_void_p
        x.XOpenDisplay.argtypes = [ctypes.c_char_p]
        x.XInternAtom.restype = ctypes.c_ulong
        x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

        class ClientMessage(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("serial", ctypes.c_ulong),
                        ("send_event", ctypes.c_int), ("display", ctypes.c_void_p),
                        ("window", ctypes.c_ulong), ("message_type", ctypes.c_ulong),
                        ("format", ctypes.c_int), ("l", ctypes.c_long * 5)]

        class XEvent(ctypes.Union):
            _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]

        x.XSendEvent.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int,
                                 ctypes.c_long, ctypes.POINTER(XEvent)]
        x.XFlush.argtypes = [ctypes.c_void_p]
        x.XCloseDisplay.argtypes = [ctypes.c_void_p]
        d = x.XOpenDisplay(self.env["DISPLAY"].encode())
        if not d:
            fail("cannot open the X display to close the window")
        ev = XEvent()
        ev.xclient.type = 33  # ClientMessage
        ev.xclient.window = int(self.wid)
        ev.xclient.message_type = x.XInternAtom(d, b"WM_PROTOCOLS", 0)
        ev.xclient.format = 32
        ev.xclient.l[0] = x.XInternAtom(d, b"WM_DELETE_WINDOW", 0)
        ev.xclient.l[1] = 0  # CurrentTime
        x.XSendEvent(d, int(self.wid), 0, 0, ctypes.byref(ev))
        x.XFlush(d)
        x.XCloseDisplay(d)
        try:
            rc = self.app.wait(20)
        except subprocess.TimeoutExpired:
            fail("ballpit did not quit when its window was closed")
        self.sanitizer_check()
        return rc

    def quit(self):
        self.key("Escape")
        try:
            rc = self.app.wait(20)
        except subprocess.TimeoutExpired:
            fail("ballpit did not quit on Escape")
        self.sanitizer_check()
        return rc

    def sanitizer_check(self):
        """Fails on any AddressSanitizer/UBSan error in the app's output and
        on any leak whose stack passes through ballpit's own sources."""
        try:
            self.log.seek(0)
            text = self.log.read()
        except (OSError, ValueError):
            return
        problems = sanitizer_problems(text)
        if problems:
            print(text)
            fail("sanitizer: " + problems[0])


def write_scene(dirpath, name, body):
    path = os.path.join(dirpath, name)
    with open(path, "w") as f:
        f.write(body)
    return path
