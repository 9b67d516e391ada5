"""The validation report as static HTML that renders anywhere, offline, and the same every time.

``_build/validation/index.html`` lists every check of the build (status, check, detail) and links one
page per config (``_build/validation/<config>.html``: that config's checks and its statistics per
split). Each page is one self-contained file: the styles are inline, there is no script, no font,
image or stylesheet from elsewhere, and nothing about the run (no clock time, no host, no path), so
two builds of the same input give the same bytes. great-expectations' own Data Docs are not built:
they load bootstrap, jQuery, bootstrap-table and fontawesome from CDNs and stamp the run's time.
"""
from __future__ import annotations

from pathlib import Path

import jinja2
from markupsafe import Markup

from benchwright.statistics import column_summary

CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem; color: #1f2328; background: #ffffff; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.2rem; }
p.summary { font-size: 1rem; }
span.badge { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 0.8rem; color: #ffffff; font-weight: 600; }
span.badge.passed { background-color: rgb(26, 127, 55); }
span.badge.failed { background-color: rgb(207, 34, 46); }
table.results { border-collapse: collapse; width: 100%; margin-top: 0.5rem; font-size: 0.9rem; }
table.results th { background-color: rgb(246, 248, 250); text-align: left; border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; }
table.results td { border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; vertical-align: top; }
td.status { font-weight: 700; white-space: nowrap; text-align: center; width: 4.5rem; }
td.status.ok { background-color: rgb(218, 251, 225); color: rgb(26, 127, 55); }
td.status.fail { background-color: rgb(255, 235, 233); color: rgb(207, 34, 46); }
td.status.warn { background-color: rgb(255, 248, 197); color: rgb(154, 103, 0); }
td.detail { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.8rem; word-break: break-word; }
nav { display: flex; flex-wrap: wrap; row-gap: 0.3rem; }
nav a { margin-right: 1rem; }
"""

# The head of every offline page the core writes (the validation report's and the card's): a
# policy when given, no favicon request (the empty data: icon), inline styles only.
PAGE_HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
{% if csp %}<meta http-equiv="Content-Security-Policy" content="{{ csp }}">
{% endif %}<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{ title }}</title>
<style>{{ css }}</style>
</head>
<body>
"""


def page_template(body: str) -> jinja2.Template:
    return jinja2.Template(PAGE_HEAD + body, autoescape=True, keep_trailing_newline=True)


PAGE = page_template("""<nav><a href="index.html">{{ dataset }}: all checks</a>{% for c in configs %}<a href="{{ c.page }}">{{ c.name }}</a>{% endfor %}</nav>
<h1>{{ title }}</h1>
<p class="summary"><span class="badge {{ 'passed' if passed else 'failed' }}">{{ 'passed' if passed else 'FAILED' }}</span>
{{ total }} checks, {{ failed }} failed, {{ warnings }} beyond a non-blocking limit.</p>
{% for section in sections %}
<h2 id="{{ section.id }}">{{ section.title }}</h2>
{% if section.note %}<p>{{ section.note }}</p>{% endif %}
<table class="results" id="{{ section.id }}-table">
<thead><tr>{% for h in section.headers %}<th>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in section.rows %}<tr>{% if row.status %}<td class="status {{ row.status }}">{{ row.label }}</td>{% endif %}{% for cell in row.cells %}<td{% if loop.last %} class="detail"{% endif %}>{{ cell }}</td>{% endfor %}</tr>
{% endfor %}</tbody>
</table>
{% endfor %}
</body>
</html>
""")

STATUS = {"ok": "ok", "fail": "FAIL", "warn": "WARN"}


def _status(result: dict) -> str:
    return "fail" if not result["ok"] else ("warn" if result.get("warning") else "ok")


def _row(result: dict) -> dict:
    status = _status(result)
    return {"status": status, "label": STATUS[status], "cells": [result["check"], result["detail"]]}


def _config_of(result: dict, configs) -> str | None:
    if result.get("config"):
        return result["config"]
    head = result["check"].split(":", 1)[0]
    return head if head in configs else None


def write_report(dataset, report: dict, stats: dict, out: Path) -> Path:
    """Writes ``index.html`` and one page per config under ``out``; returns the index."""
    configs = list(dataset.configs)
    pages = [{"name": c, "page": f"{c}.html"} for c in configs]
    # Markup: the styles go in verbatim (escaped quotes inside <style> would drop the font declarations)
    common = {"css": Markup(CSS), "dataset": dataset.name, "configs": pages, "passed": report["passed"],
              "failed": report["failed"], "warnings": report.get("warnings", 0)}
    groups = [("failed", "Failed checks", [r for r in report["results"] if not r["ok"]]),
              ("all", "All checks", report["results"])]
    sections = [{"id": gid, "title": title, "headers": ["status", "check", "detail"], "rows": [_row(r) for r in rows],
                 "note": None} for gid, title, rows in groups if rows]
    (out / "index.html").write_text(PAGE.render(title=f"{dataset.name}: validation", total=report["checks"],
                                                sections=sections, **common), encoding="utf-8")
    for config in configs:
        own = [r for r in report["results"] if _config_of(r, configs) == config]
        sections = [{"id": "checks", "title": "Checks", "headers": ["status", "check", "detail"],
                     "rows": [_row(r) for r in own], "note": None if own else "No check names this config alone."}]
        for split, entry in stats["configs"].get(config, {}).get("splits", {}).items():
            sections.append({"id": f"statistics-{split}", "title": f"Statistics: {split} ({entry['rows']:,} rows)",
                             "headers": ["column", "kind", "summary"], "note": None,
                             "rows": [{"status": None, "cells": [path, col["kind"], column_summary(col)]}
                                      for path, col in entry["columns"].items()]})
        failed = sum(not r["ok"] for r in own)
        (out / f"{config}.html").write_text(PAGE.render(
            title=f"{dataset.name} / {config}: validation", total=len(own), sections=sections,
            **{**common, "passed": failed == 0, "failed": failed, "warnings": sum(bool(r.get("warning")) for r in own)}),
            encoding="utf-8")
    return out / "index.html"
