"""The validation report renders fully offline: headless Chromium (Debian's package) loads the index and
a config's page over 127.0.0.1 with every other host unreachable; the results table is filled and the
styles apply. Driven with the DevTools protocol over Chromium's pipe (``--remote-debugging-pipe``)."""
from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from tests.quality_builds import tiny_wildbox

CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", shutil.which("chromium") or "") if p and os.path.exists(p)), None)


class DevTools:
    """A DevTools protocol client over the pipe: JSON messages separated by NUL on fds 3 (in) and 4 (out)."""

    def __init__(self, profile: Path):
        to_browser, self._in = os.pipe()
        self._out, from_browser = os.pipe()

        def wire():
            os.dup2(to_browser, 3)
            os.dup2(from_browser, 4)

        self.proc = subprocess.Popen(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             f"--user-data-dir={profile}",
             # no network but loopback: every name resolves to nothing, any proxied request goes nowhere
             # (loopback bypasses the proxy: Chromium's implicit rule)
             "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--proxy-server=http://127.0.0.1:9",
             "about:blank"],
            pass_fds=(3, 4), preexec_fn=wire, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._next, self.events = b"", 0, []

    def call(self, method: str, session: str | None = None, **params) -> dict:
        self._next += 1
        message = {"id": self._next, "method": method, "params": params} | ({"sessionId": session} if session else {})
        os.write(self._in, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next:
                assert "error" not in reply, reply
                return reply["result"]
            self.events.append(reply)

    def _read(self) -> dict:
        while b"\0" not in self._buffer:
            chunk = os.read(self._out, 1 << 16)
            assert chunk, "chromium closed its DevTools pipe"
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        try:
            self.call("Browser.close")
        finally:
            self.proc.wait(timeout=30)
            os.close(self._in)
            os.close(self._out)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The tiny build's validation folder over http://127.0.0.1:<port>/ (and the report it holds)."""
    root = tiny_wildbox(tmp_path_factory)[1] / "_build" / "validation"
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


PAGE_FACTS = """JSON.stringify({
  rows: Array.from(document.querySelectorAll("table.results")).map(t => t.tBodies[0].rows.length),
  firstTable: document.querySelector("table.results").id,
  statuses: Array.from(document.querySelectorAll("td.status")).map(td => td.textContent),
  ok: getComputedStyle(document.querySelector("td.status.ok")).backgroundColor,
  okWeight: getComputedStyle(document.querySelector("td.status.ok")).fontWeight,
  plain: getComputedStyle(document.querySelector("td.detail")).backgroundColor,
  border: getComputedStyle(document.querySelector("td.detail")).borderTopStyle,
  badge: getComputedStyle(document.querySelector("span.badge")).backgroundColor,
  links: Array.from(document.querySelectorAll("nav a")).map(a => a.getAttribute("href")),
})"""


def _load(tools: DevTools, session: str, url: str) -> dict:
    tools.call("Page.navigate", session, url=url)
    ready = f"document.readyState === 'complete' && location.href === {json.dumps(url)}"
    for _ in range(10_000):  # each DevTools round trip paces the wait
        if tools.call("Runtime.evaluate", session, expression=ready, returnByValue=True)["result"]["value"]:
            break
    else:
        raise AssertionError(f"{url} did not load")
    result = tools.call("Runtime.evaluate", session, expression=PAGE_FACTS, returnByValue=True)
    assert "exceptionDetails" not in result, (url, result)
    value = result["result"]["value"]
    return json.loads(value)


def test_the_report_renders_offline_in_headless_chromium(served, tmp_path):
    assert CHROMIUM, "Debian's chromium is not installed (scripts/setup.sh installs it)"
    base, root = served
    report = json.loads((root / "report.json").read_text())
    for page in root.glob("*.html"):  # nothing to fetch from elsewhere, nothing about the run
        text = page.read_text()
        assert "http://" not in text and "https://" not in text and "<script" not in text, page.name
    tools = DevTools(tmp_path / "profile")
    try:
        target = tools.call("Target.createTarget", url="about:blank")["targetId"]
        session = tools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        tools.call("Network.enable", session)
        index = _load(tools, session, f"{base}/index.html")
        assert index["firstTable"] == "all-table" and index["rows"] == [report["checks"]]
        assert len(index["statuses"]) == report["checks"] and set(index["statuses"]) <= {"ok", "WARN"}
        assert index["ok"] == "rgb(218, 251, 225)" and index["okWeight"] == "700"   # the styles apply
        assert index["plain"] == "rgba(0, 0, 0, 0)" and index["border"] == "solid"
        assert index["badge"] == "rgb(26, 127, 55)"
        assert "boxes.html" in index["links"]
        boxes = _load(tools, session, f"{base}/boxes.html")
        own = [r for r in report["results"] if r.get("config") == "boxes" or r["check"].startswith("boxes:")]
        assert boxes["rows"][0] == len(own) > 0
        assert len(boxes["rows"]) == 3 and all(n > 20 for n in boxes["rows"][1:])  # statistics, train and validation
        assert boxes["ok"] == "rgb(218, 251, 225)"
        requests = [e["params"]["request"]["url"] for e in tools.events if e.get("method") == "Network.requestWillBeSent"]
        failed = [e for e in tools.events if e.get("method") == "Network.loadingFailed"]
        assert requests and all(u.startswith(base) for u in requests) and not failed
    finally:
        tools.close()
