"""What a person opens in a build, in a real browser: every dataset's card (``_build/card.html``) and its
validation report (``_build/validation/``) load in Debian's headless Chromium over 127.0.0.1 with every
other host unreachable (``benchwright.browser``: the DevTools protocol over Chromium's pipe): the suite
results fill the report, every figure the card shows decodes, the card's tables appear, the styles
apply and nothing is fetched from elsewhere. ``benchwright screenshot`` writes a full-page PNG of each
page under ``_build/screenshots/``, which ``benchwright validate`` does not count as part of the build.

The builds are the contract tests' tiny builds (``tests.quality_builds.tiny_build``, made once per session)."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from benchwright import registry
from benchwright.browser import PAGE_STATE, VIEWPORT, Chromium, is_loopback, screenshot_build, serve
from benchwright.cli import main as cli_main
from benchwright.card import card_html
from benchwright.layout import CARD_HTML, SCREENSHOTS_DIR, VALIDATION_DIR
from tests.quality_builds import tiny_build

FIGURE = re.compile(r"!\[[^\]]*\]\(([^)]+)\)")
TABLE_RULE = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$", re.MULTILINE)  # a Markdown table's header rule

CARD_FACTS = """JSON.stringify({
  images: Array.from(document.images).map(i => ({src: i.src, loaded: i.complete && i.naturalWidth > 0,
                                                  width: i.naturalWidth})),
  tables: document.querySelectorAll("table").length,
  configsRows: Array.from(document.querySelectorAll("table"))
    .filter(t => Array.from(t.tHead.rows[0].cells).map(c => c.textContent).join("|") === "config|split|rows|bytes")
    .map(t => t.tBodies[0].rows.length),
  visibleTables: Array.from(document.querySelectorAll("table")).filter(t => t.getClientRects().length > 0).length,
  h1: document.querySelector("h1").textContent,
  font: getComputedStyle(document.body).fontFamily,
  th: getComputedStyle(document.querySelector("th")).backgroundColor,
  metadata: Array.from(document.querySelectorAll("p.metadata span")).map(s => s.textContent),
  scripts: document.scripts.length,
  title: document.title,
  text: document.body.textContent,
})"""
PLACEHOLDER = re.compile(r"<([A-Za-z][\w ]*)>")  # "<split>", "<annotation file>": text, not a tag
CARD_BLOCK_TAGS = {"details", "summary"}  # the only HTML the card templates write

REPORT_FACTS = """JSON.stringify({
  rows: Array.from(document.querySelectorAll("table.results")).map(t => t.tBodies[0].rows.length),
  firstTable: document.querySelector("table.results").id,
  statuses: Array.from(document.querySelectorAll("td.status")).map(td => td.textContent),
  ok: getComputedStyle(document.querySelector("td.status.ok")).backgroundColor,
  okWeight: getComputedStyle(document.querySelector("td.status.ok")).fontWeight,
  plain: getComputedStyle(document.querySelector("td.detail")).backgroundColor,
  border: getComputedStyle(document.querySelector("td.detail")).borderTopStyle,
  badge: getComputedStyle(document.querySelector("span.badge")).backgroundColor,
  font: getComputedStyle(document.body).fontFamily,
  links: Array.from(document.querySelectorAll("nav a")).map(a => a.getAttribute("href")),
  overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth,
})"""


@pytest.fixture(scope="module")
def tab():
    """One headless Chromium for every page of every dataset, one tab."""
    with Chromium() as browser:
        yield browser.new_page()


@pytest.fixture(scope="module", params=registry.names())
def built(request, tmp_path_factory) -> tuple[str, Path]:
    return request.param, tiny_build(request.param, tmp_path_factory)[1]


def _load(tab, url: str, facts: str) -> tuple[dict, list[dict]]:
    network = tab.load(url)
    return json.loads(tab.evaluate(facts)), network


def _check_network(network: list[dict], base: str) -> None:
    requests = [e["params"]["request"]["url"] for e in network if e["method"] == "Network.requestWillBeSent"]
    failed = [e["params"] for e in network if e["method"] == "Network.loadingFailed"]
    assert any(u.startswith(base + "/") for u in requests) and all(is_loopback(u) for u in requests), requests
    assert not failed, failed


def test_card_and_report_render_offline_in_headless_chromium(built, tab):
    name, root = built
    card_text = (root / "README.md").read_text(encoding="utf-8")
    body = card_text.split("\n---\n", 1)[1]  # after the YAML header
    figures = FIGURE.findall(body)
    html = (root / CARD_HTML).read_text(encoding="utf-8")
    sources = re.findall(r"""\bsrc=["']([^"']*)""", html)
    assert "<script" not in html and "@import" not in html
    assert re.findall(r"<link[^>]*>", html) == ['<link rel="icon" href="data:,">']  # no request for an icon
    assert sources and all(":" not in s and not s.startswith("/") for s in sources), sources  # the build's own files
    assert "Content-Security-Policy" in html
    report = json.loads((root / VALIDATION_DIR / "report.json").read_text())
    for page in (root / VALIDATION_DIR).glob("*.html"):  # nothing to fetch from elsewhere, nothing about the run
        text = page.read_text()
        assert "http://" not in text and "https://" not in text and "<script" not in text, page.name

    with serve(root) as base:
        card, network = _load(tab, f"{base}/{CARD_HTML}", CARD_FACTS)
        _check_network(network, base)
        # every figure the card references is an <img> that loaded (decoded pixels), in the card's order
        assert figures and [i["src"] for i in card["images"]] == [f"{base}/{f}" for f in figures]
        assert all(i["loaded"] and i["width"] > 0 for i in card["images"]), card["images"]
        # every Markdown table of the card is an HTML table; the core's configs table lists every split
        assert card["tables"] == len(TABLE_RULE.findall(body)) > 0 and card["visibleTables"] > 0
        sizes = json.loads((root / "_build" / "manifest.json").read_text())["reconciliation"]["rows"]
        assert card["configsRows"] == [sum(len(s) for s in sizes.values())]
        assert card["h1"] == re.search(r"^# (.+)$", body, re.MULTILINE).group(1)
        assert card["scripts"] == 0
        # text in angle brackets is shown as written, never swallowed as a tag (issue 23: WildBox's Omni3D
        # field table showed "WildBox <split>" as "WildBox ")
        placeholders = {f"<{p}>" for p in PLACEHOLDER.findall(body) if p not in CARD_BLOCK_TAGS}
        assert placeholders and not {p for p in placeholders if p not in card["text"]}, placeholders
        if name == "wildbox":
            assert '"WildBox <split>"' in card["text"]
        assert "system-ui" in card["font"] and card["th"] == "rgb(246, 248, 250)"  # the styles apply
        licence = registry.get(name).license
        assert f"licence: {licence}" in card["metadata"]
        # opened from disk, as a person opening the build folder would, the figures load too
        tab.load((root / CARD_HTML).as_uri())
        assert json.loads(tab.evaluate(PAGE_STATE)) == {"images": len(figures), "broken": [], "title": card["title"]}

        index, network = _load(tab, f"{base}/{VALIDATION_DIR}/index.html", REPORT_FACTS)
        _check_network(network, base)
        assert index["firstTable"] == "all-table" and index["rows"] == [report["checks"]]  # the suite results
        assert len(index["statuses"]) == report["checks"] and set(index["statuses"]) <= {"ok", "WARN"}
        assert index["ok"] == "rgb(218, 251, 225)" and index["okWeight"] == "700"   # the styles apply
        assert index["plain"] == "rgba(0, 0, 0, 0)" and index["border"] == "solid"
        assert index["badge"] == "rgb(26, 127, 55)" and "system-ui" in index["font"]
        configs = list(registry.get(name).configs)
        assert index["links"] == ["index.html"] + [f"{c}.html" for c in configs]
        assert index["overflow"] == 0  # the navigation wraps: nothing wider than the window

        config = configs[0]
        page, network = _load(tab, f"{base}/{VALIDATION_DIR}/{config}.html", REPORT_FACTS)
        _check_network(network, base)
        own = [r for r in report["results"] if r.get("config") == config or r["check"].startswith(f"{config}:")]
        splits = json.loads((root / "_build" / "statistics" / "statistics.json").read_text())["configs"][config]
        assert page["rows"][0] == len(own) > 0
        assert page["rows"][1:] == [len(s["columns"]) for s in splits["splits"].values()]  # statistics per split


def test_card_html_fetches_and_runs_nothing_a_value_could_smuggle_in(tab, tmp_path):
    """A value in a card's text that is markup (an image from elsewhere, a script, a <base>, a form) is
    blocked by the page's policy; relative links are re-pointed from _build/."""
    (tmp_path / "_build" / "figures").mkdir(parents=True)
    _, png = cv2.imencode(".png", np.full((20, 30, 3), 200, np.uint8))
    (tmp_path / "_build" / "figures" / "a.png").write_bytes(png.tobytes())
    text = ("---\nlicense: mit\npretty_name: A card\n---\n# A card\n\n![a figure](_build/figures/a.png)\n\n"
            'A value: <img src="http://example.org/y.png"> <script>document.title = "ran"</script>\n\n'
            '<img src="http://example.org/x.png">\n\n'
            '<base href="http://example.org/"> <form action="http://example.org/f"><input name="q"></form>\n\n'
            "| a | b |\n|---|---:|\n| 1 | <b>2</b> |\n\n[the exports](exports/x.json)\n")
    (tmp_path / CARD_HTML).write_text(card_html(text), encoding="utf-8")
    with serve(tmp_path) as base:
        network = tab.load(f"{base}/{CARD_HTML}")
        state = json.loads(tab.evaluate(PAGE_STATE))
        href = tab.evaluate("document.querySelector('a[href]').getAttribute('href')")
        resolved = tab.evaluate("document.querySelector('a[href]').href")
        shown = json.loads(tab.evaluate("JSON.stringify({text: document.body.textContent, "
                                        "cell: document.querySelector('td:last-child').innerHTML})"))
    # markup inside a line of text is text: shown as written, neither fetched nor run
    assert 'A value: <img src="http://example.org/y.png"> <script>document.title = "ran"</script>' in shown["text"]
    assert shown["cell"] == "&lt;b&gt;2&lt;/b&gt;"
    assert resolved.startswith(base), resolved  # the smuggled <base> is ignored (base-uri 'none')
    assert state == {"images": 2, "broken": ["http://example.org/x.png"], "title": "A card"}  # the script did not run
    assert [e["params"].get("blockedReason") for e in network if e["method"] == "Network.loadingFailed"] == ["csp"]
    assert href == "../exports/x.json"
    # what the screenshot command reports for such a page (it fails on it)
    (tmp_path / VALIDATION_DIR).mkdir(parents=True)
    (tmp_path / VALIDATION_DIR / "index.html").write_text("<!DOCTYPE html><title>report</title><p>checks</p>")
    card, index = screenshot_build(tmp_path)
    assert card["broken_images"] == ["http://example.org/x.png"] and card["images"] == 2
    assert card["failed_requests"] == ["http://example.org/x.png: csp"]
    assert card["outside_requests"] == ["http://example.org/x.png"]
    assert not (index["broken_images"] or index["failed_requests"] or index["outside_requests"])


def _check_png(png: Path) -> None:
    image = cv2.imread(str(png), cv2.IMREAD_COLOR)
    assert image is not None, png
    height, width = image.shape[:2]
    assert width == VIEWPORT[0] and 300 <= height <= 20_000, (png, image.shape)
    assert float(image.var()) > 0, png  # not blank


def test_screenshot_command_writes_a_png_of_every_page(tmp_path_factory, tmp_path, capsys):
    """One command over every other dataset's build (one browser): the card and the validation index of each;
    WildBox's with --configs: those two and each config's page too (every page shot once)."""
    copies = {}
    for name in registry.names():  # copies: the shared builds stay as the other tests expect them
        copies[name] = tmp_path / name
        shutil.copytree(tiny_build(name, tmp_path_factory)[1], copies[name])
    plain = [name for name in copies if name != "wildbox"]
    capsys.readouterr()
    assert cli_main(["screenshot", *(str(copies[name]) for name in plain)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("ok   ") == 2 * len(plain) and "FAIL" not in printed
    for name in plain:
        shots = copies[name] / SCREENSHOTS_DIR
        assert sorted(p.name for p in shots.iterdir()) == ["card.png", "validation.png"], name

    assert cli_main(["screenshot", str(copies["wildbox"]), "--configs"]) == 0
    configs = registry.get("wildbox").configs
    printed = capsys.readouterr().out
    assert printed.count("ok   ") == 2 + len(configs) and "FAIL" not in printed
    shots = copies["wildbox"] / SCREENSHOTS_DIR
    expected = {"card.png", "validation.png", *(f"validation-{c}.png" for c in configs)}
    assert {p.name for p in shots.iterdir()} == expected
    for name, copy in copies.items():
        shots = copy / SCREENSHOTS_DIR
        for png in sorted(shots.iterdir()):
            _check_png(png)
        # a whole page, not the window: a card is longer than the viewport
        assert cv2.imread(str(shots / "card.png")).shape[0] > VIEWPORT[1], name


def test_validate_leaves_screenshots_out_but_reports_any_other_file(tmp_path, tmp_path_factory, capsys):
    root = tiny_build("wordeval", tmp_path_factory)[1]
    copy = tmp_path / "wordeval"
    shutil.copytree(root, copy)
    (copy / SCREENSHOTS_DIR).mkdir(parents=True)
    (copy / SCREENSHOTS_DIR / "card.png").write_bytes(b"a view made after the build")
    capsys.readouterr()
    assert cli_main(["validate", str(copy)]) == 0
    (copy / "_build" / "notes.txt").write_text("not part of the build")
    (copy / "_build" / "screenshots-old.png").write_bytes(b"beside the folder, not in it")
    capsys.readouterr()
    assert cli_main(["validate", str(copy)]) == 1
    out = capsys.readouterr().out
    assert "_build/notes.txt is not in the manifest" in out
    assert "_build/screenshots-old.png is not in the manifest" in out
    assert f"{SCREENSHOTS_DIR}/card.png" not in out


def test_screenshot_refuses_object_storage_naming_a_local_copy(capsys):
    assert cli_main(["screenshot", "s3://bucket/out/wildbox"]) == 2
    assert "local" in capsys.readouterr().err


def test_validation_report_shows_markup_in_a_detail_as_written(tab, tmp_path):
    """A check's name or detail holding angle brackets (a value such as "WildBox <split>") is text on
    the report's pages, not a tag the browser drops."""
    from types import SimpleNamespace

    from benchwright.report import write_report

    detail = '"WildBox <split>" held <b>no</b> rows'
    results = [{"check": "boxes: info.name <split>", "ok": False, "detail": detail, "config": "boxes"}]
    report = {"passed": False, "checks": 1, "failed": 1, "results": results}
    write_report(SimpleNamespace(name="demo", configs={"boxes": None}), report, {"configs": {}}, tmp_path)
    with serve(tmp_path) as base:
        for page in ("index.html", "boxes.html"):
            tab.load(f"{base}/{page}")
            cells = json.loads(tab.evaluate(
                "JSON.stringify(Array.from(document.querySelectorAll('td')).map(td => td.textContent))"))
            assert detail in cells and "boxes: info.name <split>" in cells, (page, cells)
            assert tab.evaluate("document.querySelectorAll('td b').length") == 0
