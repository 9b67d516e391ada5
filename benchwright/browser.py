"""Headless Chromium for the pages a build writes for people: its card (``_build/card.html``) and its
validation report (``_build/validation/``).

``Chromium`` drives Debian's ``chromium`` over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: no port, no extra package) with every host but 127.0.0.1 unreachable, so a
page that would fetch anything from elsewhere shows it as a failed request. ``serve`` puts a folder on
http://127.0.0.1:<free port>/. ``screenshot_build`` loads each page of a local build, records whether
everything on it loaded, and writes a full-page PNG of it under ``_build/screenshots/``: views made
after the build, so they are not in its manifest (``benchwright.manifest.describe_files`` leaves them
out, and ``benchwright validate`` does not report them).
"""
from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import math
import os
import select
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from benchwright.errors import BenchwrightError
from benchwright.layout import CARD_HTML, SCREENSHOTS_DIR, VALIDATION_DIR

CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium")
VIEWPORT = (1280, 800)  # CSS pixels at device scale 1: a screenshot is this wide


def find_chromium() -> str:
    """The Chromium executable (Debian's package, which ``scripts/setup.sh`` installs)."""
    for candidate in CHROMIUM_CANDIDATES:
        path = candidate if os.path.isabs(candidate) else shutil.which(candidate)
        if path and os.access(path, os.X_OK):
            return path
    raise BenchwrightError("headless Chromium is not installed (Debian's chromium package; scripts/setup.sh "
                           "installs it)")


class Chromium:
    """A headless Chromium process and its DevTools protocol client: JSON messages separated by NUL on
    fds 3 (to the browser) and 4 (from it). Events that arrive while waiting for a reply are kept in
    ``events``."""

    def __init__(self, timeout: float = 60.0):
        self.timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="benchwright-chromium-")
        to_browser, self._in = os.pipe()
        self._out, from_browser = os.pipe()

        def wire():
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.proc = subprocess.Popen(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             "--disable-background-networking", "--disable-component-update", "--mute-audio",
             f"--user-data-dir={self._profile.name}",
             # no network but loopback: every name resolves to nothing, any proxied request goes nowhere
             # (loopback bypasses the proxy: Chromium's implicit rule)
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._next, self.events = b"", 0, []

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def call(self, method: str, session: str | None = None, **params) -> dict:
        """Send a command (to a page when ``session`` is given) and return its result."""
        self._next += 1
        message = {"id": self._next, "method": method, "params": params} | ({"sessionId": session} if session else {})
        os.write(self._in, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                if "error" in reply:
                    raise BenchwrightError(f"Chromium: {method} failed: {reply['error']}")
                return reply["result"]
            self.events.append(reply)

    def wait_for(self, method: str, session: str | None, since: int) -> dict:
        """The first event ``method`` of ``session`` at or after ``events[since]``, reading until it comes."""
        while True:
            for event in self.events[since:]:
                if event.get("method") == method and event.get("sessionId") == session:
                    return event
            since = len(self.events)
            self.events.append(self._read())

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._out], [], [], self.timeout)
            if not ready:
                raise BenchwrightError(f"Chromium did not answer within {self.timeout:g} s")
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                raise BenchwrightError("Chromium closed its DevTools pipe (it exited)")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def new_page(self, width: int = VIEWPORT[0], height: int = VIEWPORT[1]) -> "Page":
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable", session)
        # a fixed viewport and scale: the same page gives a screenshot of the same size anywhere
        self.call("Emulation.setDeviceMetricsOverride", session, width=width, height=height, deviceScaleFactor=1,
                  mobile=False)
        return Page(self, target, session)

    def close(self) -> None:
        try:
            if self.proc.poll() is None:
                self.call("Browser.close")
        except BenchwrightError:
            self.proc.kill()
        finally:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            os.close(self._in)
            os.close(self._out)
            self._profile.cleanup()


class Page:
    """One tab: load a URL and wait for its load event (the page and every image on it), evaluate
    JavaScript, capture it whole."""

    def __init__(self, browser: Chromium, target: str, session: str):
        self.browser, self.target, self.session = browser, target, session

    def load(self, url: str) -> list[dict]:
        """Navigate to ``url`` and wait for its load event; returns the network events of this load."""
        start = len(self.browser.events)
        done = self.browser.call("Page.navigate", self.session, url=url)
        if done.get("errorText"):
            raise BenchwrightError(f"{url}: {done['errorText']}")
        self.browser.wait_for("Page.loadEventFired", self.session, start)
        return [e for e in self.browser.events[start:]
                if e.get("sessionId") == self.session and e.get("method", "").startswith("Network.")]

    def evaluate(self, expression: str):
        """The value of a JavaScript expression (JSON-serialisable)."""
        result = self.browser.call("Runtime.evaluate", self.session, expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise BenchwrightError(f"JavaScript failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def close(self) -> None:
        self.browser.call("Target.closeTarget", targetId=self.target)

    def screenshot(self) -> bytes:
        """A PNG of the whole page (not only the viewport), at device scale 1."""
        size = self.browser.call("Page.getLayoutMetrics", self.session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": math.ceil(size["width"]), "height": math.ceil(size["height"]), "scale": 1}
        # optimizeForSpeed: zlib's fastest level; the best one takes twice as long on a tall page
        shot = self.browser.call("Page.captureScreenshot", self.session, format="png", captureBeyondViewport=True,
                                 optimizeForSpeed=True, clip=clip)
        return base64.b64decode(shot["data"])


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # no line on stderr per request
        pass


@contextlib.contextmanager
def serve(root: Path):
    """``root`` over http://127.0.0.1:<free port> (yields that base URL) while the block runs."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def is_loopback(url: str) -> bool:
    """Whether ``url`` is on this machine's 127.0.0.1 (any port)."""
    return url.startswith("http://127.0.0.1:")


# What a person would see broken on a page: images that did not load (each <img> must have decoded
# pixels); and its title.
PAGE_STATE = """JSON.stringify({
  images: document.images.length,
  broken: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute("src")),
  title: document.title,
})"""


def build_pages(root: Path, configs: bool = False) -> list[tuple[str, str]]:
    """(screenshot name, page path relative to ``root``) of the pages a build has for people: the card and
    the validation index, and with ``configs`` each config's validation page."""
    vdir = root / VALIDATION_DIR
    pages = [("card", CARD_HTML), ("validation", f"{VALIDATION_DIR}/index.html")]
    missing = [rel for _, rel in pages if not (root / rel).is_file()]
    if missing:
        raise BenchwrightError(f"{root}: no {' and no '.join(missing)} (a build by an earlier benchwright has no "
                               "card.html: rebuild it)")
    return pages + [(f"validation-{p.stem}", f"{VALIDATION_DIR}/{p.name}")
                    for p in sorted(vdir.glob("*.html")) if configs and p.name != "index.html"]


def screenshot_build(root: Path, configs: bool = False, browser: Chromium | None = None) -> list[dict]:
    """Serve the local build at ``root`` on 127.0.0.1, load each of its pages (``build_pages``) in headless
    Chromium (``browser``, or one started for this build) and write a full-page PNG of each to
    ``_build/screenshots/<name>.png`` (the folder is replaced). Returns per page: its path, the PNG, the
    images on it and those that did not load, and every request that failed or went anywhere but 127.0.0.1."""
    root = Path(root)
    pages = build_pages(root, configs)
    out = root / SCREENSHOTS_DIR
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    results = []
    with serve(root) as base, (contextlib.nullcontext(browser) if browser else Chromium()) as chromium:
        tab = chromium.new_page()
        try:
            results += _shoot(tab, base, pages, out, root)
        finally:  # a page that fails does not leave its tab open in a shared browser
            tab.close()
    return results


def _shoot(tab, base: str, pages: list, out: Path, root: Path) -> list[dict]:
    """Each page loaded in ``tab``, its PNG written under ``out``, what loaded and what did not."""
    results = []
    for name, rel in pages:
        network = tab.load(f"{base}/{rel}")
        state = json.loads(tab.evaluate(PAGE_STATE))
        png = out / f"{name}.png"
        png.write_bytes(tab.screenshot())
        urls = {e["params"]["requestId"]: e["params"]["request"]["url"] for e in network
                if e["method"] == "Network.requestWillBeSent"}
        results.append({
            "page": rel, "screenshot": png.relative_to(root).as_posix(), "images": state["images"],
            "broken_images": state["broken"],
            "failed_requests": [f"{urls.get(e['params']['requestId'], '?')}: "
                                f"{e['params'].get('errorText') or e['params'].get('blockedReason')}"
                                for e in network if e["method"] == "Network.loadingFailed"],
            "outside_requests": sorted(u for u in urls.values() if not is_loopback(u))})
    return results
