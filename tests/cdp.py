"""A headless Chromium driven through the DevTools protocol, for the browser tests.

One browser per test module (`Browser`, a context manager); each `page()` is a tab of it, opened
at a given viewport, where a test can run JavaScript (`evaluate`), read the accessibility tree
(`ax_nodes`), print to PDF as a student's print dialog does (`pdf`: background graphics off,
the browser's default paper) and take a screenshot (`screenshot`). The protocol runs over
`--remote-debugging-pipe` (file descriptors 3 and 4, messages ending in NUL): no port, no
websocket library, nothing but the standard library.
"""

from __future__ import annotations

import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")
TRAMPOLINE = ("import os, sys\n"
              "os.dup2(int(sys.argv[1]), 3); os.dup2(int(sys.argv[2]), 4)\n"
              "os.close(int(sys.argv[1])); os.close(int(sys.argv[2]))\n"
              "os.execv(sys.argv[3], sys.argv[3:])\n")
TIMEOUT = 60  # seconds for one command's answer


def unavailable() -> str | None:
    """Why this interpreter cannot drive Chromium this way, or None: the DevTools pipe is
    handed over on fds 3 and 4 (fcntl, pass_fds), which Windows' Python has not."""
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return ("no fcntl here (Windows): the DevTools pipe is handed to Chromium on fds 3"
                " and 4, which this interpreter cannot do")
    return None


def _above_four(fd: int) -> int:
    import fcntl  # POSIX only, as the fd passing is: importing this module needs neither

    high = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return high


class Browser:
    def __init__(self, chromium: str):
        self.profile = tempfile.mkdtemp(prefix="leaselab-cdp-")
        to_browser, self._send = os.pipe()   # we write, it reads on fd 3
        self._receive, from_browser = os.pipe()  # it writes on fd 4, we read
        # above 4, so that putting one on 3 or 4 cannot close the other
        to_browser, from_browser = (_above_four(to_browser), _above_four(from_browser))
        # a small Python puts the pipes on 3 and 4, where Chromium looks for them, and becomes it
        self.process = subprocess.Popen(
            [sys.executable, "-c", TRAMPOLINE, str(to_browser), str(from_browser), chromium,
             *FLAGS, "--remote-debugging-pipe", f"--user-data-dir={self.profile}", "about:blank"],
            pass_fds=(to_browser, from_browser), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._next_id = 0
        self._buffer = b""
        self.events: list[dict] = []

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._send, self._receive):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    # -- the protocol ----------------------------------------------------------------------------
    def send(self, method: str, session: str | None = None, **params) -> dict:
        """Send one command and wait for its answer; events that come first are kept."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._send, json.dumps(message).encode() + b"\0")
        while True:
            got = self._read()
            if got.get("id") == self._next_id:
                if "error" in got:
                    raise RuntimeError(f"{method}: {got['error']}")
                return got.get("result", {})
            self.events.append(got)

    def wait_for(self, method: str, session: str) -> dict:
        """The first event `method` of the session not yet waited for."""
        while True:
            for n, event in enumerate(self.events):
                if event.get("method") == method and event.get("sessionId") == session:
                    return self.events.pop(n)
            self.events.append(self._read())

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._receive], [], [], TIMEOUT)
            if not ready:
                raise TimeoutError("Chromium did not answer")
            chunk = os.read(self._receive, 1 << 20)
            if not chunk:
                raise EOFError("Chromium closed the DevTools pipe")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def page(self, path: Path, width: int, height: int = 900, *, mobile: bool = False) -> Page:
        """A new tab showing `path` at width x height CSS px, loaded."""
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        page = Page(self, target, session)
        page.send("Page.enable")
        page.send("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=mobile)
        page.send("Page.navigate", url=Path(path).resolve().as_uri())
        self.wait_for("Page.loadEventFired", session)
        return page


class Page:
    def __init__(self, browser: Browser, target: str, session: str):
        self.browser, self.target, self.session = browser, target, session

    def __enter__(self) -> Page:
        return self

    def __exit__(self, *exc) -> None:
        self.browser.send("Target.closeTarget", targetId=self.target)

    def send(self, method: str, **params) -> dict:
        return self.browser.send(method, self.session, **params)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (DevTools runs it: the report's
        Content-Security-Policy does not apply)."""
        got = self.send("Runtime.evaluate", expression=expression, returnByValue=True,
                        awaitPromise=True)
        if "exceptionDetails" in got:
            raise RuntimeError(got["exceptionDetails"])
        return got["result"].get("value")

    def media(self, media: str) -> None:
        """Lay the page out for `media` ("print", "screen"; "" for the default)."""
        self.send("Emulation.setEmulatedMedia", media=media)

    def ax_nodes(self) -> list[dict]:
        """The whole accessibility tree, as Chromium gives it to a screen reader."""
        return self.send("Accessibility.getFullAXTree")["nodes"]

    def pdf(self, out: Path) -> Path:
        """Print as a student would from the print dialog: background graphics off, default
        margins and paper (Letter), no header or footer."""
        data = self.send("Page.printToPDF", printBackground=False, displayHeaderFooter=False,
                         preferCSSPageSize=True)["data"]
        out.write_bytes(base64.b64decode(data))
        return out

    def screenshot(self, out: Path, selector: str | None = None) -> Path:
        """A PNG of the whole page, or of the first element `selector` finds (and 10 px round it)."""
        if selector is None:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            box = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
        else:
            box = self.evaluate(f"""(() => {{
                const r = document.querySelector({json.dumps(selector)}).getBoundingClientRect();
                return {{x: Math.max(r.left + scrollX - 10, 0), y: Math.max(r.top + scrollY - 10, 0),
                         width: r.width + 20, height: r.height + 20}}; }})()""")
        data = self.send("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                         clip={**box, "scale": 1})["data"]
        out.write_bytes(base64.b64decode(data))
        return out
