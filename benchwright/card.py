"""Dataset cards: a built dataset's README.md, rendered from the dataset's template
(``cards/<dataset>.md.j2``, package data of ``benchwright.cards``).

The YAML header is produced by ``datasets`` / ``huggingface_hub`` themselves from the configs'
Features and the written files, so what the card declares is exactly what ``load_dataset`` reads:
explicit ``data_files`` globs per split (never touching ``_build/`` or ``exports/``) and
``dataset_info`` with features, ``num_examples`` and ``num_bytes`` per split.

Beside it, ``_build/card.html`` is the same card as one offline HTML page (``card_html``) for a person
opening the build folder; it is in the manifest like every other file of the build.
"""
from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import jinja2
import jinja2.meta
import pyarrow.parquet as pq

from benchwright.croissant import croissant_section
from benchwright.layout import CARD_HTML
from benchwright.memory import collection_paused
from benchwright.report import page_template
from benchwright.writer import parse_shard_name


# Every card's build section (``{{ runners }}``). The card cannot name this build's own runner and
# worker count: the published files, the card among them, are the same bytes on every runner and
# worker count, and only the manifest (``execution``) says where a copy was built.
RUNNERS_NOTE = (
    "The build is one Beam pipeline followed by steps on the building machine. Its published files do not "
    "depend on the runner or on how many workers it has: Beam's in-process runner (any running mode and "
    "worker count) and Beam's Dask runner on a dask.distributed cluster (`benchwright build --runner dask`, "
    "1 or 2 worker processes) give the same bytes. The runner and the workers this copy was built on are "
    "named in `_build/manifest.json`, under `execution`.")


def card_yaml(dataset, root: Path, sizes: dict[str, dict[str, tuple[int, int]]] | None = None) -> str:
    """The card's YAML header; ``sizes``: ``{config: split_sizes(root, config)}`` if already read."""
    # datasets takes ~2 s to import: only a card needs it here
    from datasets import DatasetInfo, SplitDict, SplitInfo
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCardData

    card = DatasetCardData(license=dataset.license, task_categories=list(dataset.task_categories),
                           tags=list(dataset.tags), pretty_name=dataset.pretty_name)
    infos, configs = {}, {}
    for config, features in dataset.configs.items():
        splits = sizes[config] if sizes is not None else split_sizes(root, config)
        if not splits:
            continue
        split_dict = SplitDict()
        for split, (rows, nbytes) in splits.items():
            split_dict.add(SplitInfo(name=split, num_bytes=nbytes, num_examples=rows))
        infos[config] = DatasetInfo(features=features, splits=split_dict, config_name=config)
        configs[config] = {"data_files": [{"split": s, "path": f"{config}/{s}-*.parquet"} for s in splits]}
    DatasetInfosDict(infos).to_dataset_card_data(card)
    MetadataConfigs(configs).to_dataset_card_data(card)
    return card.to_yaml().rstrip("\n")


def split_sizes(root: Path, config: str) -> dict[str, tuple[int, int]]:
    """{split: (rows, bytes)} from the Parquet files of a config, splits in a fixed order."""
    sizes: dict[str, list[int]] = {}
    for f in sorted((root / config).glob("*.parquet")):
        entry = sizes.setdefault(parse_shard_name(f.as_posix())[1], [0, 0])
        entry[0] += pq.ParquetFile(f).metadata.num_rows
        entry[1] += f.stat().st_size
    order = {"train": 0, "validation": 1, "test": 2}
    return {s: tuple(sizes[s]) for s in sorted(sizes, key=lambda s: (order.get(s, 9), s))}


_CODE_SPAN = re.compile(r"(`+)(?:.+?)\1")


def markdown_text(text: str) -> str:
    """``text`` with each ``<`` outside code spans escaped (``\\<``), so a value such as ``"WildBox <split>"``
    reads as text, not as an HTML tag, in every CommonMark renderer (the Hub's too)."""
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out += [text[at:span.start()].replace("<", "\\<"), span.group(0)]
        at = span.end()
    return "".join(out + [text[at:].replace("<", "\\<")])


def markdown_table(headers: list[str], rows: list[list]) -> str:
    def fmt(v):
        return f"{v:,}" if isinstance(v, int) else (f"{v:.3g}" if isinstance(v, float) else markdown_text(str(v)))

    lines = ["| " + " | ".join(headers) + " |",
             "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def card_baselines(dataset, root, beside: bool = False) -> dict:
    """The card's tables the dataset declares a consumer makes (``Dataset.card_baselines``, or with ``beside``
    ``card_baselines_beside``), computed on the build at ``root`` with the dataset's settings; {} when it declares
    none. Resolved here, so that the pipeline that declares them imports no baseline."""
    from benchwright.registry import resolve

    target = dataset.card_baselines_beside if beside else dataset.card_baselines
    return resolve(target)(str(root), dataset.settings) if target else {}


def render_card(dataset, root: Path, reconciliation: dict, checks: list[dict] | None = None,
                beside: dict | None = None) -> Path:
    """Renders ``cards/<dataset>.md.j2`` into ``root/README.md``. Every card gets the core's data
    quality section (``data_quality``: statistics, drift, what is checked) where its template
    puts ``{{ data_quality }}``, or at its end, and the section on the Croissant file (``croissant``) the same way. ``checks``: the data checks' results (else the stored report's);
    ``beside``: the dataset's ``card_baselines(..., beside=True)`` of ``root`` when the build computed it already
    (else it is computed here)."""
    # The templates are data, not code: the core reads them without importing the cards layer.
    templates = Path(str(files("benchwright.cards")))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates)), keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    name = f"{dataset.name}.md.j2"
    template = env.get_template(name)
    placed = jinja2.meta.find_undeclared_variables(env.parse(env.loader.get_source(env, name)[0]))
    quality = quality_section(dataset, root, checks)
    croissant = croissant_section(dataset)
    sizes = {cfg: split_sizes(root, cfg) for cfg in dataset.configs}
    text = template.render(data_quality=quality, croissant=croissant, runners=RUNNERS_NOTE,
        yaml=card_yaml(dataset, root, sizes), dataset=dataset, sizes=sizes, reconciliation=reconciliation,
        configs_table=markdown_table(
            ["config", "split", "rows", "bytes"],
            [[cfg, s, r, b] for cfg, splits in sizes.items() for s, (r, b) in splits.items()]),
        **dataset.card_context(str(root)),
        **card_baselines(dataset, root),
        **(beside if beside is not None else card_baselines(dataset, root, beside=True)),
    )
    for section, text_of in (("data_quality", quality), ("croissant", croissant)):
        if section not in placed:
            text = text.rstrip("\n") + "\n\n" + text_of
    path = root / "README.md"
    path.write_text(text)
    (root / CARD_HTML).parent.mkdir(parents=True, exist_ok=True)
    (root / CARD_HTML).write_text(card_html(text), encoding="utf-8")
    return path


CARD_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto; max-width: 72rem;
       padding: 0 2rem; color: #1f2328; background: #ffffff; line-height: 1.5; }
h1 { font-size: 1.8rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.3rem; }
h2 { font-size: 1.4rem; margin-top: 2rem; border-bottom: 1px solid #d0d7de; padding-bottom: 0.2rem; }
h3 { font-size: 1.15rem; margin-top: 1.5rem; }
p.metadata span { display: inline-block; margin: 0 0.4rem 0.3rem 0; padding: 0.05rem 0.6rem; border-radius: 0.8rem;
                  background-color: rgb(221, 244, 255); font-size: 0.85rem; }
table { border-collapse: collapse; margin: 0.8rem 0; font-size: 0.9rem; display: block; overflow-x: auto; }
th { background-color: rgb(246, 248, 250); font-weight: 600; }
th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.6rem; vertical-align: top; }
tr:nth-child(2n) td { background-color: #f6f8fa; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85em; background-color: #eff1f3;
       padding: 0.1em 0.3em; border-radius: 0.3rem; }
pre { background-color: #f6f8fa; padding: 0.8rem; overflow-x: auto; border-radius: 0.4rem; }
pre code { background: none; padding: 0; }
img { max-width: 100%; border: 1px solid #d0d7de; }
details { margin: 0.8rem 0; }
summary { cursor: pointer; font-weight: 600; }
"""

# Nothing may be fetched from elsewhere, even if a value in the card's text were markup: only the build's
# own images (same origin, or beside the file when opened from disk), inline styles, no script, no
# <base> and no form (default-src covers neither).
# (The empty data: icon keeps the browser from asking the server for /favicon.ico.)
CARD_CSP = "default-src 'none'; img-src 'self' file: data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"

CARD_PAGE = page_template("""<p class="metadata">{% for label, value in metadata %}<span>{{ label }}: {{ value }}</span>{% endfor %}</p>
{{ body }}
<details><summary>The card's YAML header (what <code>load_dataset</code> reads)</summary>
<pre><code>{{ yaml }}</code></pre>
</details>
</body>
</html>
""")


def card_html(text: str) -> str:
    """The card (``README.md``'s text) as one self-contained HTML page for ``_build/card.html``: the
    Markdown rendered by markdown-it (CommonMark with GitHub's tables and the card's HTML blocks, such
    as ``<details>``, as the Hub shows them; HTML inside a line of text is shown as text, so a value
    like ``"WildBox <split>"`` is not swallowed as a tag), links and images relative to the build re-pointed from ``_build/``, the YAML header's
    licence, task categories and tags on top and the header itself at the end. Inline styles, no
    script, a policy that blocks anything from elsewhere; the same text gives the same bytes."""
    import posixpath
    from urllib.parse import urlsplit

    from huggingface_hub import RepoCard
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    card = RepoCard(text)
    meta = card.data.to_dict()
    renderer = MarkdownIt("commonmark", {"html": True}).enable("table").disable("html_inline")
    tokens = renderer.parse(card.text)
    base = posixpath.dirname(CARD_HTML)
    for token in (c for t in tokens for c in [t, *(t.children or [])]):
        attr = {"image": "src", "link_open": "href"}.get(token.type)
        url = token.attrGet(attr) if attr else None
        if url and not urlsplit(url).scheme and not url.startswith(("/", "#")):
            token.attrSet(attr, posixpath.relpath(url, base))
    metadata = [(label, ", ".join(v) if isinstance(v, list) else v) for label, key in
                (("licence", "license"), ("task categories", "task_categories"), ("tags", "tags")) if (v := meta.get(key))]
    return CARD_PAGE.render(csp=CARD_CSP, css=Markup(CARD_CSS), title=meta.get("pretty_name") or "dataset card",
                            metadata=metadata, body=Markup(renderer.renderer.render(tokens, renderer.options, {})),
                            yaml=card.data.to_yaml())


def quality_section(dataset, root: Path, checks: list[dict] | None = None) -> str:
    """The card's data quality section, the same for every dataset: the statistics summary, the drift
    against the previous build, and every check on the data with its result."""
    import json

    from benchwright.drift import read_drift
    from benchwright.layout import VALIDATION_DIR
    from benchwright.statistics import STATISTICS, statistics_of

    root = Path(root)
    if checks is None and (root / VALIDATION_DIR / "report.json").exists():
        checks = json.loads((root / VALIDATION_DIR / "report.json").read_text())["results"]
    stats = statistics_of(dataset, str(root))
    parts = ["## Data quality", "",
             "### Statistics", "",
             f"Per config, split and column (full figures: `{STATISTICS}`: counts, missing values, quantiles and "
             "histograms of numbers, value counts of categories, lengths of strings and lists, sizes and "
             "decode failures of images).", "",
             "<details><summary>Column statistics</summary>", "", statistics_markdown(stats), "", "</details>", "",
             "### Drift against the previous build", "", drift_markdown(read_drift(str(root))), ""]
    parts += ["### What is checked", ""]
    if checks is None:
        parts.append("`benchwright validate` runs the checks (none recorded with this build).")
    else:
        data = [c for c in checks if c.get("kind") not in ("drift", "integrity")]
        failed = sum(not c["ok"] for c in data)
        parts += [f"Every build is validated before it is published: each file's sha256 against the manifest, "
                  f"`read = written + quarantined + filtered` for every unit, and these {len(data):,} checks on the "
                  f"data ({failed:,} failed), plus one per drift comparison above. The report with every result "
                  f"renders offline: `{VALIDATION_DIR}/index.html`.", "",
                  "<details><summary>Checks and results</summary>", "",
                  markdown_table(["check", "kind", "result"],
                                 [[c["check"].replace("|", "\\|"), c.get("kind", "expectation"),
                                   ("ok" if c["ok"] else "FAILED")] for c in data]),
                  "", "</details>"]
    return "\n".join(parts) + "\n"  # a blank line before whatever follows it in the template


def statistics_markdown(stats: dict) -> str:
    from benchwright.statistics import column_summary

    """Markdown: per config, a row per top-level column with one phrase per split."""
    parts = []
    for config, entry in stats["configs"].items():
        splits = list(entry["splits"])
        if not splits:
            parts.append(f"**{config}**: no rows")
            continue
        rows_line = ", ".join(f"{s} {entry['splits'][s]['rows']:,} rows" for s in splits)
        names = sorted({p for s in splits for p in entry["splits"][s]["columns"] if "." not in p and "[" not in p})
        rows = []
        for name in names:
            cells = [column_summary(entry["splits"][s]["columns"][name]) if name in entry["splits"][s]["columns"]
                     else "" for s in splits]
            kind = next(entry["splits"][s]["columns"][name]["kind"] for s in splits
                        if name in entry["splits"][s]["columns"])
            rows.append([f"`{name}`", kind, *[c.replace("|", "\\|") for c in cells]])
        parts.append(f"**{config}** ({rows_line})\n\n" + markdown_table(["column", "kind", *splits], rows))
    return "\n\n".join(parts)


def drift_markdown(drift: dict | None) -> str:
    """The card's drift section body."""
    if drift is None or drift["previous"] is None:
        return "There was no previous build at this output: nothing to compare with."
    prev = drift["previous"]
    head = (f"Against the previous build `{prev['build']}` (input sha256 `{str(prev['input_sha256'])[:12]}...`): "
            f"{drift['note']}.")
    if not drift["comparisons"]:
        return head
    rows = [c for c in drift["comparisons"] if c["metric"] == "rows"]
    text = head + f" {len(drift['comparisons']):,} comparisons, {drift['exceeded']:,} beyond their limit " \
                  f"({drift['blocking_failures']:,} blocking).\n\n" + markdown_table(
        ["config", "split", "rows before", "rows now", "change"],
        [[c["config"], c["split"], c["previous"], c["current"], f"{100 * c['value']:.1f}%"] for c in rows])
    beyond = [c for c in drift["comparisons"] if c["exceeded"] and c["metric"] != "rows"]
    largest = sorted((c for c in drift["comparisons"] if c["metric"] != "rows"), key=lambda c: (-c["value"], c["target"]))
    shown = beyond if beyond else largest[:5]
    if shown:
        title = "Columns beyond their limit" if beyond else "No column beyond its limit; the largest changes"
        text += f"\n\n{title}:\n\n" + markdown_table(
            ["column", "metric", "value", "limit", "blocking", "before", "now"],
            [[f"`{c['target']}`", c["metric"], c["value"], c["limit"], "yes" if c["blocking"] else "no",
              str(c["previous"]).replace("|", "\\|"), str(c["current"]).replace("|", "\\|")] for c in shown])
    return text


FIGURES_DIR = "_build/figures"


def pyplot():
    """matplotlib's pyplot on the Agg backend (no display; imported only when a card draws)."""
    with collection_paused():
        import matplotlib  # ~1 s to import: only a card that draws pays it

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

    return plt


def save_figure(fig, root: Path, name: str) -> str:
    """Write ``fig`` as ``_build/figures/<name>.png`` under ``root`` with fixed metadata (matplotlib
    otherwise stamps the PNG with its version and a date, and two builds would differ); returns the
    path relative to ``root``, as the card links it."""
    rel = f"{FIGURES_DIR}/{name}.png"
    (root / FIGURES_DIR).mkdir(parents=True, exist_ok=True)
    fig.savefig(root / rel, dpi=90, metadata={"Software": None})
    pyplot().close(fig)
    return rel
