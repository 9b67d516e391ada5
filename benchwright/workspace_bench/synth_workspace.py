"""The plan of one role workspace (``filesys/<role>_raw``) of the synthetic Workspace-Bench release.

A workspace is a set of *bundles* — the files of one piece of a worker's work, with the
dependencies between them — plus loose files (downloads, desktop notes, exports). Bundles per role:

* ``yunying`` (Operations Manager): monthly sales series (raw CSV -> workbook with a formula naming
  the year's targets workbook -> Word report with the chart embedded and a link to the workbook ->
  Markdown summary repeating the numbers), customer dossiers (contract PDF, account plan, e-mail,
  orders workbook, notes about one named customer), campaigns (brief v1 -> v2 -> final, a deck with
  a hyperlink, a picture and the budget workbook embedded as an OLE object, a landing page with its
  stylesheet, scripts and banner).
* ``houqin`` (Logistics Manager): warehouse stock workbooks by month with an external link and a
  formula to the supplier price list, a reorder script and its INI, a floor-plan SVG over a photo,
  a SQLite stock database; dated shipment CSVs whose rows name their packing-list PDFs, weekly
  reports; supplier dossiers.
* ``research``: LaTeX papers (``\\input``/``\\include`` sections, ``\\includegraphics`` figures,
  ``\\bibliography``) with Word drafts v1 -> v2 -> final; experiments (config YAML naming the data,
  a training script importing its model module and reading the config, a notebook importing a helper,
  reading the metrics and showing a figure, arrays and tables in npy/npz/parquet/feather/jsonl);
  reading dossiers about one named paper.
* ``kaifa`` (Backend Developer): service repositories (README links and picture, Python package with
  relative imports and path literals, settings YAML naming the logging INI, pyproject naming the
  README, SQL schema including its migrations, deploy script sourcing its environment, Dockerfile,
  Makefile, logs), web front-ends (HTML with <script src>/<link href>/<img src>, CSS @import, JS
  imports and requires, TS/TSX imports), polyglot tool folders.
* ``chanpin`` (Product Manager): PRDs v1 -> v2 -> final with mockups embedded and linked, review
  decks, KPI workbooks and dashboards, prototypes; interview notes and surveys with derived summaries;
  competitor dossiers; meeting notes and invitations.

Each file's explicit references are ``Ref`` objects on its ``FileSpec``; implicit dependencies are
listed with the bundle (version chains oldest -> newest, derived_from source -> derived file,
same_entity between every pair of a dossier's files, smaller path first).
"""
from __future__ import annotations

import posixpath
import random
from dataclasses import dataclass, field

from benchwright.hashing import stable_hash64
from benchwright.workspace_bench.synth_content import Words, number_table, slug
from benchwright.workspace_bench.synth_files import FORMAT_OF_TYPE, FileSpec, Ref, file_type


@dataclass(frozen=True, order=True)
class PlantedEdge:
    """One planted dependency; ``src``/``dst`` are paths relative to ``workspace``."""

    workspace: str
    src: str
    dst: str
    edge_type: str
    kind: str
    file_type: str

    def as_json(self) -> dict:
        return {"workspace": self.workspace, "src": self.src, "dst": self.dst, "edge_type": self.edge_type,
                "kind": self.kind, "file_type": self.file_type}


@dataclass
class WorkspacePlan:
    role: str
    persona: str
    files: dict[str, FileSpec] = field(default_factory=dict)       # path -> spec, in planning order
    implicit: list[tuple[str, str, str]] = field(default_factory=list)   # (src, dst, edge_type)

    @property
    def name(self) -> str:
        return f"filesys/{self.role}_raw"

    def edges(self) -> list[PlantedEdge]:
        out = {(s.path, r.dst, r.edge_type, "explicit") for s in self.files.values() for r in s.refs}
        out |= {(src, dst, t, "implicit") for src, dst, t in self.implicit}
        return sorted(PlantedEdge(self.name, src, dst, t, kind, file_type(src)) for src, dst, t, kind in out)

    def ambiguous(self) -> list[tuple[str, str, str]]:
        """(src, bare name as written, intended dst) of the deliberately ambiguous references."""
        return sorted((s.path, posixpath.basename(r.dst), r.dst) for s in self.files.values() for r in s.refs
                      if r.style == "ambiguous")


class Builder:
    """Adds files and dependencies to a WorkspacePlan; every name comes from one seeded generator."""

    def __init__(self, plan: WorkspacePlan, seed: int):
        self.plan = plan
        self.seed = seed
        self.rng = random.Random(stable_hash64(f"workspace:{seed}:{plan.role}"))
        self.words = Words(plan.persona, self.rng)

    def add(self, path: str, title: str = "", table: list | None = None, refs=(), **extra) -> str:
        if path in self.plan.files:
            raise ValueError(f"{self.plan.name}: {path} planned twice")
        ftype = file_type(path)
        self.plan.files[path] = FileSpec(path, FORMAT_OF_TYPE[ftype], self.plan.persona,
                                         stable_hash64(f"{self.seed}:{self.plan.role}:{path}") >> 32,
                                         title=title, table=table, refs=list(refs), extra=extra)
        return path

    def ref(self, src: str, edge_type: str, dst: str, style: str = "relative") -> None:
        self.plan.files[src].refs.append(Ref(edge_type, dst, style))

    def chain(self, paths: list[str]) -> None:
        for a, b in zip(paths, paths[1:]):
            self.plan.implicit.append((a, b, "version_chain"))

    def derived(self, source: str, derived: str) -> None:
        self.plan.implicit.append((source, derived, "derived_from"))

    def same_entity(self, paths: list[str]) -> None:
        ordered = sorted(paths)
        for i, a in enumerate(ordered):
            for b in ordered[i + 1:]:
                self.plan.implicit.append((a, b, "same_entity"))

    def table(self, header: list[str], rows: int | None = None, labels: list[str] | None = None) -> list[list]:
        return number_table(self.rng, header, rows or self.rng.randint(4, 12), labels)

    def year_month(self) -> tuple[int, int]:
        return self.rng.choice((2023, 2024, 2024, 2025)), self.rng.randint(1, 10)


def _months(year: int, month: int, n: int) -> list[str]:
    return [f"{year}-{month + k:02d}" for k in range(n)]


# ---------------------------------------------------------------------------------------------
# yunying — Operations Manager
# ---------------------------------------------------------------------------------------------

def sales_series(b: Builder) -> None:
    year, month = b.year_month()
    stem = b.words.stem()
    months = _months(year, month, b.rng.randint(2, 3))
    targets = b.add(f"documents/sales/{year}/{stem}_targets_{year}.xlsx", table=b.table(["month", "target"], 12))
    csvs, books = [], []
    for ym in months:
        folder = f"documents/sales/{year}/{ym[5:]}"
        table = b.table(["channel", "orders", "revenue"], labels=["online", "retail", "wholesale", "partner", "direct"],
                        rows=5)
        raw = b.add(f"{folder}/{stem}_{ym}.csv", table=table)
        book = b.add(f"{folder}/{stem}_{ym}.xlsx", table=table)
        b.ref(book, "formula", targets)
        b.derived(raw, book)
        csvs.append(raw)
        books.append(book)
    b.chain(csvs)
    b.chain(books)
    last, ym = books[-1], months[-1]
    table = b.plan.files[last].table
    chart = b.add(f"reports/monthly/charts/{stem}_chart_{ym}.png", table=table)
    report = b.add(f"reports/monthly/{stem}_report_{ym}.docx", table=table)
    b.ref(report, "link", last)
    b.ref(report, "image", chart)
    b.derived(last, report)
    summary = b.add(f"reports/monthly/{stem}_summary_{ym}.md", table=table)
    b.ref(summary, "link", report, "bare")
    b.derived(last, summary)


def customer_dossier(b: Builder) -> None:
    entity = b.words.entity("customer")
    s = slug(entity)
    folder = f"documents/customers/{s}"
    lines = [f"Customer: {entity}.", f"Account owner notes for {entity}."]
    files = [
        b.add(f"{folder}/contract_{s}.pdf", title=f"Service agreement with {entity}", lines=lines),
        b.add(f"{folder}/{s}_account_plan.docx", title=f"{entity} account plan", lines=lines),
        b.add(f"{folder}/re_{s}_renewal.eml", title=f"Re: {entity} renewal", lines=lines,
              sender=f"accounts@{s.replace('_', '')}.example.com"),
        b.add(f"{folder}/{s}_orders.xlsx", title=f"{entity} orders", lines=[f"Orders placed by {entity}"],
              table=b.table(["month", "orders", "value"])),
    ]
    if b.rng.random() < 0.5:
        files.append(b.add(f"{folder}/meeting_notes_{s}.md", title=f"Meeting with {entity}", lines=lines))
    b.same_entity(files)


def campaign(b: Builder) -> None:
    year, _ = b.year_month()
    stem = b.words.stem()
    folder = f"marketing/campaigns/{year}/{stem}"
    briefs = [b.add(f"{folder}/brief_{v}.docx", title=f"Campaign brief ({v})") for v in ("v1", "v2", "final")]
    b.chain(briefs)
    banner = b.add(f"{folder}/banner.png", photo=True)
    budget = b.add(f"{folder}/{stem}_budget.xlsx", table=b.table(["channel", "planned", "spent"]))
    b.ref(budget, "link", briefs[-1])
    deck = b.add(f"{folder}/{stem}_kickoff.pptx")
    b.ref(deck, "link", briefs[-1])
    b.ref(deck, "image", banner)
    b.ref(deck, "embedded_object", budget)
    if b.rng.random() < 0.6:
        page = b.add(f"{folder}/landing/index.html")
        css = b.add(f"{folder}/landing/style.css")
        js = b.add(f"{folder}/landing/app.js")
        cfg = b.add(f"{folder}/landing/config.js")
        b.ref(page, "include", css)
        b.ref(page, "include", js)
        b.ref(page, "image", banner)
        b.ref(page, "link", briefs[-1])
        b.ref(css, "image", banner)
        b.ref(js, "import", cfg)


# ---------------------------------------------------------------------------------------------
# houqin — Logistics Manager
# ---------------------------------------------------------------------------------------------

def warehouse(b: Builder) -> None:
    year, month = b.year_month()
    wh = b.words.stem()
    folder = f"inventory/{wh}"
    prices = b.add(f"purchasing/supplier_prices_{wh}.xlsx", table=b.table(["sku", "unit_price"]))
    stocks = []
    for ym in _months(year, month, b.rng.randint(2, 3)):
        book = b.add(f"{folder}/stock_{wh}_{ym}.xlsx", table=b.table(["sku", "on_hand", "reorder_point"]))
        b.ref(book, "external_link", prices)
        b.ref(book, "formula", prices)
        stocks.append(book)
    b.chain(stocks)
    ini = b.add(f"{folder}/reorder_{wh}.ini")
    b.ref(ini, "data_reference", stocks[-1])
    script = b.add(f"scripts/reorder_{wh}.py")
    b.ref(script, "path_literal", stocks[-1])
    b.ref(script, "path_literal", ini)
    photo = b.add(f"{folder}/{wh}_floor.jpg", photo=True)
    plan = b.add(f"{folder}/{wh}_layout.svg")
    b.ref(plan, "image", photo)
    if b.rng.random() < 0.5:
        b.add(f"{folder}/{wh}_stock.sqlite", table=b.plan.files[stocks[-1]].table)
    if b.rng.random() < 0.4:
        b.add(f"{folder}/archive/{wh}_old_counts.csv.gz", table=b.table(["sku", "counted"]))


def shipments(b: Builder) -> None:
    year, month = b.year_month()
    lane = b.words.stem()
    folder = f"shipping/{year}/{month:02d}/{lane}"
    days = sorted(b.rng.sample(range(1, 28), b.rng.randint(2, 3)))
    sheets = []
    for d in days:
        lists = [b.add(f"{folder}/packing/packing_{b.words.stem()}.pdf") for _ in range(b.rng.randint(1, 2))]
        sheet = b.add(f"{folder}/shipments_{year}-{month:02d}-{d:02d}.csv",
                      table=b.table(["consignment", "pallets", "weight_kg"]))
        for lst in lists:
            b.ref(sheet, "data_reference", lst)
        sheets.append(sheet)
    b.chain(sheets)
    b.add(f"{folder}/customs_{year}-{month:02d}.xml", table=b.table(["declaration", "value"]))
    report = b.add(f"reports/weekly/{lane}_weekly_{year}-{month:02d}-{days[-1]:02d}.docx",
                   table=b.plan.files[sheets[-1]].table)
    b.ref(report, "link", sheets[-1])
    b.derived(sheets[-1], report)


def supplier_dossier(b: Builder) -> None:
    entity = b.words.entity("supplier")
    s = slug(entity)
    folder = f"suppliers/{s}"
    lines = [f"Supplier: {entity}.", f"Terms agreed with {entity}."]
    files = [
        b.add(f"{folder}/contract_{s}.docx", title=f"Supply contract with {entity}", lines=lines),
        b.add(f"{folder}/invoice_{s}.pdf", title=f"{entity} invoice", lines=lines),
        b.add(f"{folder}/{s}_quote.xlsx", title=f"{entity} quote", lines=[f"Quote from {entity}"],
              table=b.table(["item", "qty", "price"])),
        b.add(f"{folder}/re_{s}_delivery.eml", title=f"Re: {entity} delivery window", lines=lines),
    ]
    b.same_entity(files)


# ---------------------------------------------------------------------------------------------
# research
# ---------------------------------------------------------------------------------------------

def paper(b: Builder) -> None:
    year, _ = b.year_month()
    stem = b.words.stem()
    folder = f"papers/{year}_{stem}"
    main = b.add(f"{folder}/main.tex", title=stem.replace("_", " ").title(), main=True)
    bib = b.add(f"{folder}/refs.bib")
    sections = [b.add(f"{folder}/sections/{name}.tex", title=name.capitalize())
                for name in ("introduction", "method", "results")]
    for sec in sections:
        b.ref(main, "include", sec)
    b.ref(main, "bibliography", bib)
    table = b.table(["setting", "accuracy", "f1"], labels=["baseline", "ours", "ablation", "oracle"], rows=4)
    fig = b.add(f"{folder}/figures/{stem}_results.png", table=table)
    b.ref(sections[2], "image", fig)
    if b.rng.random() < 0.5:
        overview = b.add(f"{folder}/figures/{stem}_overview.png", table=b.table(["stage", "ms"]))
        b.ref(sections[1], "image", overview)
    drafts = [b.add(f"{folder}/drafts/{stem}_draft_{v}.docx", table=table) for v in ("v1", "v2", "final")]
    b.chain(drafts)
    if b.rng.random() < 0.5:
        talk = b.add(f"talks/{stem}_talk.pptx", table=table)
        b.ref(talk, "image", fig)
        b.ref(talk, "link", drafts[-1])


def experiment(b: Builder) -> None:
    stem = b.words.stem()
    folder = f"experiments/{stem}"
    train_data = b.add(f"{folder}/data/train.csv", table=b.table(["id", "x1", "x2", "label"]))
    test_data = b.add(f"{folder}/data/test.{b.rng.choice(('csv', 'parquet', 'feather'))}",
                      table=b.table(["id", "x1", "x2", "label"]))
    config = b.add(f"{folder}/config.{b.rng.choice(('yaml', 'yml'))}")
    b.ref(config, "data_reference", train_data)
    b.ref(config, "data_reference", test_data)
    model = b.add(f"{folder}/model.py")
    train = b.add(f"{folder}/train.py")
    b.ref(train, "import", model)
    b.ref(train, "path_literal", config)
    metrics = b.add(f"{folder}/results/metrics.json", table=b.table(["epoch", "loss", "accuracy"]))
    evaluate = b.add(f"{folder}/evaluate.py", writes=True)      # writes the metrics: open(..., "w")
    b.ref(evaluate, "path_literal", metrics)
    b.ref(evaluate, "path_literal", test_data)
    helpers = b.add(f"{folder}/helpers.py")
    fig = b.add(f"{folder}/figures/learning_curve.png", table=b.plan.files[metrics].table)
    nb = b.add(f"{folder}/analysis.ipynb")
    b.ref(nb, "import", helpers)
    b.ref(nb, "path_literal", metrics)
    b.ref(nb, "image", fig)
    readme = b.add(f"{folder}/README.md")
    b.ref(readme, "link", config)
    b.ref(readme, "image", fig)
    b.ref(nb, "link", readme)
    extra = b.rng.sample(("npy", "npz", "jsonl", "toml"), b.rng.randint(1, 3))
    if "npy" in extra:
        b.add(f"{folder}/data/embeddings.npy", table=b.table(["id", "d1", "d2", "d3"]))
    if "npz" in extra:
        b.add(f"{folder}/data/features.npz", table=b.table(["id", "d1", "d2"]))
    if "jsonl" in extra:
        b.add(f"{folder}/results/runs.jsonl", table=b.table(["run", "seed", "score"]))
    if "toml" in extra:
        params = b.add(f"{folder}/params.toml")
        b.ref(params, "data_reference", train_data)


def reading_dossier(b: Builder) -> None:
    entity = b.words.entity("paper")
    s = slug(entity)
    folder = f"literature/{s}"
    lines = [f"Paper: {entity}.", f"Reading notes on the {entity} approach."]
    files = [b.add(f"{folder}/{s}.pdf", title=f"{entity}: a preprint", lines=lines),
             b.add(f"{folder}/{s}_notes.md", title=f"Notes on {entity}", lines=lines),
             b.add(f"{folder}/{s}_review.docx", title=f"Review of {entity}", lines=lines)]
    b.same_entity(files)


# ---------------------------------------------------------------------------------------------
# kaifa — Backend Developer
# ---------------------------------------------------------------------------------------------

def service_repo(b: Builder) -> None:
    svc = b.words.stem()
    root = f"projects/{svc}"
    pkg = f"{root}/src/{svc}"
    readme = b.add(f"{root}/README.md")
    arch = b.add(f"{root}/docs/architecture.md")
    arch_png = b.add(f"{root}/docs/architecture.png")
    b.ref(readme, "link", arch)
    b.ref(readme, "image", arch_png)
    logging_ini = b.add(f"{root}/config/logging.ini")
    settings = b.add(f"{root}/config/settings.yaml")
    b.ref(settings, "data_reference", logging_ini)
    b.ref(arch, "link", settings)
    pyproject = b.add(f"{root}/pyproject.toml")
    b.ref(pyproject, "data_reference", readme)
    b.add(f"{pkg}/__init__.py")
    models = b.add(f"{pkg}/models.py", package=True)
    service = b.add(f"{pkg}/service.py", package=True)
    b.ref(service, "import", models)
    b.ref(service, "path_literal", settings)
    database = b.add(f"{root}/db/{svc}.sqlite")
    dbmod = b.add(f"{pkg}/db.py", package=True)
    b.ref(dbmod, "path_literal", database)
    b.ref(dbmod, "import", models)
    migrations = [b.add(f"{root}/db/migrations/{k + 1:03d}_{name}.sql")
                  for k, name in enumerate(b.rng.sample(("init", "add_index", "add_audit", "split_users"), 2))]
    schema = b.add(f"{root}/db/schema.sql")
    for m in migrations:
        b.ref(schema, "include", m)
    env = b.add(f"{root}/scripts/env.sh")
    deploy = b.add(f"{root}/scripts/deploy.sh")
    b.ref(deploy, "include", env, b.rng.choice(("relative", "bare")))
    b.add(f"{root}/Dockerfile")
    b.add(f"{root}/Makefile")
    b.add(f"{root}/{svc}.env")
    b.add(f"{root}/requirements.txt")
    fixture = b.add(f"{root}/tests/fixtures/{svc}_sample.json")
    test = b.add(f"{root}/tests/test_{svc}.py")
    b.ref(test, "path_literal", fixture)
    b.add(f"{root}/logs/{svc}.log")
    if b.rng.random() < 0.5:
        b.add(f"{root}/docs/flow.mmd")
        b.add(f"{root}/config/app.properties")


def web_frontend(b: Builder) -> None:
    app = b.words.stem()
    root = f"projects/{app}_web"
    page = b.add(f"{root}/public/index.html")
    css = b.add(f"{root}/public/style.css")
    reset = b.add(f"{root}/public/reset.css")
    logo = b.add(f"{root}/public/img/logo.png")
    bundle = b.add(f"{root}/public/app.js")
    api = b.add(f"{root}/public/api.js")
    conf = b.add(f"{root}/public/config.js")
    b.ref(page, "include", css)
    b.ref(page, "include", bundle)
    b.ref(page, "image", logo)
    b.ref(css, "include", reset)
    b.ref(bundle, "import", api)
    b.ref(bundle, "import", conf)
    types = b.add(f"{root}/src/types.ts")
    main = b.add(f"{root}/src/main.ts")
    panel = b.add(f"{root}/src/Panel.tsx")
    button = b.add(f"{root}/src/Button.jsx")
    b.ref(main, "import", types)
    b.ref(panel, "import", types)
    b.ref(panel, "import", button)
    pkg = b.add(f"{root}/package.json", fields={"name": app.replace("_", "-"), "private": True})
    b.ref(pkg, "data_reference", bundle)
    if b.rng.random() < 0.5:
        b.add(f"{root}/public/favicon.ico")


def polyglot_tools(b: Builder) -> None:
    tool = b.words.stem()
    root = f"projects/{tool}_tools"
    for ext in b.rng.sample(("go", "rs", "java", "c", "cpp", "rb", "php", "lua", "pl", "r", "bat", "ps1"), 4):
        b.add(f"{root}/{tool}_{ext}_port.{ext}" if ext not in ("c", "h") else f"{root}/{tool}_native.{ext}")
    b.add(f"{root}/{tool}_native.h")
    b.add(f"{root}/proto/{tool}.proto")
    b.add(f"{root}/schema.graphql")
    b.add(f"{root}/docs/{tool}_deps.dot")
    b.add(f"{root}/patches/{tool}_timeout.patch", target="settings.cfg")
    b.add(f"{root}/settings.cfg")


# ---------------------------------------------------------------------------------------------
# chanpin — Product Manager
# ---------------------------------------------------------------------------------------------

def prd(b: Builder) -> None:
    product, feature = b.words.stem(), b.words.stem()
    folder = f"prd/{product}/{feature}"
    mock_dir = f"mockups/{product}/{feature}"
    home = b.add(f"{mock_dir}/{feature}_home.png", photo=True)
    flow = b.add(f"{mock_dir}/{feature}_flow.svg")
    b.ref(flow, "image", home)
    versions = [b.add(f"{folder}/prd_{feature}_{v}.docx") for v in ("v1", "v2", "final")]
    b.chain(versions)
    b.ref(versions[-1], "image", home)
    b.ref(versions[-1], "link", flow)
    kpis_csv = b.add(f"metrics/{feature}_kpis.csv", table=b.table(["week", "visits", "conversions"]))
    kpis = b.add(f"metrics/{feature}_kpis.xlsx", table=b.plan.files[kpis_csv].table)
    b.derived(kpis_csv, kpis)
    b.ref(kpis, "link", versions[-1])
    dash = b.add(f"metrics/{feature}_dashboard.json")
    b.ref(dash, "data_reference", kpis_csv, b.rng.choice(("relative", "bare")))
    deck = b.add(f"decks/{product}_{feature}_review.pptx")
    b.ref(deck, "link", versions[-1])
    b.ref(deck, "image", home)
    if b.rng.random() < 0.5:
        b.ref(deck, "embedded_object", kpis)
    if b.rng.random() < 0.5:
        sketch = b.add(f"{mock_dir}/{feature}_sketch.jpg", photo=True)
        proto = b.add(f"prototype/{feature}/index.html")
        style = b.add(f"prototype/{feature}/style.css")
        b.ref(proto, "include", style)
        b.ref(proto, "image", sketch)


def user_research(b: Builder) -> None:
    year, month = b.year_month()
    folder = f"research/{year}-{month:02d}"
    topic = b.words.stem()
    survey = b.add(f"{folder}/{topic}_survey.csv", table=b.table(["question", "agree", "disagree"]))
    summary = b.add(f"{folder}/{topic}_summary_{year}-{month:02d}.md", table=b.plan.files[survey].table)
    b.ref(summary, "link", survey)
    b.derived(survey, summary)
    for _ in range(b.rng.randint(1, 3)):
        b.add(f"{folder}/interviews/interview_{b.words.stem()}.md")


def competitor_dossier(b: Builder) -> None:
    entity = b.words.entity("product")
    s = slug(entity)
    folder = f"competitors/{s}"
    lines = [f"Competitor: {entity}.", f"Pricing and positioning of {entity}."]
    files = [b.add(f"{folder}/{s}_teardown.pdf", title=f"{entity} teardown", lines=lines),
             b.add(f"{folder}/{s}_pricing.xlsx", title=f"{entity} pricing", lines=[f"Plans of {entity}"],
                   table=b.table(["plan", "monthly", "annual"])),
             b.add(f"{folder}/{s}_notes.md", title=f"Notes on {entity}", lines=lines)]
    b.same_entity(files)


def meetings(b: Builder) -> None:
    year, month = b.year_month()
    folder = f"meetings/{year}/{month:02d}"
    stem = b.words.stem()
    b.add(f"{folder}/{year}-{month:02d}-{b.rng.randint(1, 28):02d}_{stem}.md")
    b.add(f"{folder}/{stem}_invite.ics")
    if b.rng.random() < 0.5:
        b.add(f"{folder}/{stem}_recording.srt")


BUNDLES = {
    "yunying": (sales_series, customer_dossier, campaign),
    "houqin": (warehouse, shipments, supplier_dossier),
    "research": (paper, experiment, reading_dossier),
    "kaifa": (service_repo, web_frontend, polyglot_tools),
    "chanpin": (prd, user_research, competitor_dossier, meetings),
}
# Bundles a tiny workspace gets (between them every explicit edge type and most writers).
TINY_BUNDLES = {
    "yunying": (sales_series, campaign), "houqin": (warehouse, shipments), "research": (paper, experiment),
    "kaifa": (service_repo,), "chanpin": (prd, competitor_dossier),
}

# Loose files per role: (folder, type, weight). They carry no references except the desktop notes
# (below), which link to a bundle file by its bare name.
LOOSE = {
    "yunying": (("desktop", "txt", 3), ("desktop", "md", 3), ("downloads", "pdf", 3), ("downloads", "xlsx", 3),
                ("documents/exports", "tsv", 1), ("documents/exports", "csv", 2), ("documents/notes", "docx", 3),
                ("documents/decks", "pptx", 2), ("calendar", "ics", 1), ("contacts", "vcf", 1),
                ("marketing/assets", "gif", 1), ("marketing/assets", "webp", 1), ("marketing/audio", "wav", 1),
                ("documents/exports", "json", 1), ("documents/exports", "jsonl", 1), ("downloads", "zip", 1)),
    "houqin": (("desktop", "txt", 3), ("desktop", "md", 2), ("downloads", "pdf", 3), ("documents", "xlsx", 4),
               ("fleet", "tsv", 2), ("fleet", "log", 1), ("documents", "docx", 3), ("receipts", "zip", 1),
               ("receipts", "jpg", 2), ("receipts", "tiff", 1), ("receipts", "bmp", 1), ("mail", "eml", 2),
               ("exports", "xml", 1), ("exports", "csv", 2), ("backups", "tar", 1), ("backups", "db", 1)),
    "research": (("desktop", "txt", 2), ("desktop", "md", 2), ("downloads", "pdf", 4), ("notes", "md", 2),
                 ("datasets", "csv", 2), ("datasets", "parquet", 1), ("datasets", "jsonl", 1), ("datasets", "npy", 1),
                 ("slides", "pptx", 1), ("notes", "rst", 1), ("notes", "docx", 2), ("bib", "bib", 1),
                 ("scripts", "r", 1), ("scripts", "sh", 1), ("recordings", "wav", 1), ("figures", "tiff", 1)),
    "kaifa": (("desktop", "txt", 2), ("desktop", "md", 2), ("snippets", "py", 2), ("snippets", "js", 1),
              ("snippets", "ts", 1), ("snippets", "sql", 2), ("snippets", "sh", 2), ("logs", "log", 2),
              ("configs", "yaml", 2), ("configs", "yml", 1), ("configs", "json", 2), ("configs", "toml", 1),
              ("configs", "ini", 1), ("configs", "env", 1), ("configs", "properties", 1), ("downloads", "zip", 1),
              ("downloads", "gz", 1), ("downloads", "tar", 1), ("notes", "rst", 1), ("patches", "patch", 1),
              ("snippets", "go", 1), ("snippets", "rs", 1), ("snippets", "java", 1), ("docs", "xml", 1)),
    "chanpin": (("desktop", "txt", 2), ("desktop", "md", 3), ("downloads", "pdf", 3), ("documents", "docx", 3),
                ("documents", "xlsx", 2), ("decks", "pptx", 2), ("assets", "png", 2), ("assets", "jpg", 2),
                ("assets", "svg", 1), ("assets", "gif", 1), ("assets", "ico", 1), ("assets", "webp", 1),
                ("research", "csv", 1), ("flows", "mmd", 1), ("documents", "html", 1), ("calendar", "ics", 1)),
}
LOOSE_EXTRA_FOLDERS = ("archive/{year}", "documents/{year}", "shared/{year}/{month:02d}")


def _loose(b: Builder, folder: str, ftype: str) -> str:
    year, month = b.year_month()
    if b.rng.random() < 0.3:
        folder = b.rng.choice(LOOSE_EXTRA_FOLDERS).format(year=year, month=month) + "/" + folder.split("/")[-1]
    name = ftype if ftype in ("Dockerfile", "Makefile") else f"{b.words.stem()}.{ftype}"
    if ftype in ("Dockerfile", "Makefile"):
        folder = f"{folder}/{b.words.stem()}"
    table = b.table(["item", "count", "amount"]) if ftype in ("xlsx", "csv", "tsv", "json", "jsonl", "xml",
                                                               "parquet", "npy", "db", "png", "gz") else None
    extra = {"contact": b.words.entity("person")} if ftype == "vcf" else {}
    return b.add(f"{folder}/{name}", table=table, photo=ftype in ("jpg", "webp", "tiff", "bmp", "gif"), **extra)


def start_workspace(role: str, persona: str, budget: int | None, seed: int) -> Builder:
    """The bundles of a workspace: the tiny ones (``budget`` None), else random bundles until about
    85% of ``budget`` files."""
    b = Builder(WorkspacePlan(role, persona), seed)
    if budget is None:
        for bundle in TINY_BUNDLES[role]:
            bundle(b)
    else:
        while len(b.plan.files) < 0.85 * budget - 45:
            b.rng.choice(BUNDLES[role])(b)
    return b


def finish_workspace(b: Builder, budget: int | None, must_types: tuple[str, ...] = ()) -> WorkspacePlan:
    """One loose file per type of ``must_types``, loose files up to exactly
    ``budget`` (None: none), the desktop notes' bare-name links (one deliberately ambiguous), and bare
    references whose name is not unique turned relative."""
    plan = b.plan
    tiny = budget is None
    loose = LOOSE[plan.role]
    for ftype in must_types:
        _loose(b, next((f for f, t, _ in loose if t == ftype), "misc"), ftype)
    target = budget if budget is not None else len(plan.files)
    notes = _desktop_notes(b, tiny)
    while len(plan.files) < target - len(notes):
        folder, ftype, _ = b.rng.choices(loose, weights=[w for *_, w in loose])[0]
        _loose(b, folder, ftype)
    for path, refs in notes:
        b.add(path)
        plan.files[path].refs.extend(refs)
    _resolve_bare_names(plan)
    return plan


def _desktop_notes(b: Builder, tiny: bool) -> list[tuple[str, list[Ref]]]:
    """Desktop notes linking to bundle files by bare name; the first links to a name two folders share
    (a deliberately ambiguous reference; its intended target is the first such file planned)."""
    plan = b.plan
    by_name: dict[str, list[str]] = {}
    for p in plan.files:
        by_name.setdefault(posixpath.basename(p), []).append(p)
    linkable = [p for p in plan.files if file_type(p) in ("docx", "xlsx", "pdf", "md", "csv", "pptx", "png")]
    unique = [p for p in linkable if len(by_name[posixpath.basename(p)]) == 1]
    shared = [paths[0] for name, paths in sorted(by_name.items()) if len(paths) > 1 and file_type(name) in
              ("docx", "xlsx", "md", "png", "yaml", "sh", "css", "js", "html", "tex", "py", "csv", "pdf", "json")]
    if not shared:
        # no two folders share a name yet: an older copy of a bundle file lands in downloads/
        original = b.rng.choice(sorted(p for p in linkable if len(by_name[posixpath.basename(p)]) == 1))
        spec = plan.files[original]
        b.add(f"downloads/{posixpath.basename(original)}", title=spec.title, table=spec.table,
              **{k: v for k, v in spec.extra.items() if k not in ("package", "main")})
        shared = [original]
        unique = [p for p in unique if p != original]
    notes = []
    n_notes = 1 if tiny else max(2, len(plan.files) // 150)
    for k in range(n_notes):
        refs = [Ref("link", d, "bare") for d in b.rng.sample(unique, min(len(unique), b.rng.randint(1, 3)))]
        if k == 0 and shared:
            refs.append(Ref("link", b.rng.choice(shared), "ambiguous"))
        notes.append((f"desktop/todo_{b.words.stem()}.md", refs))
    return notes


def _resolve_bare_names(plan: WorkspacePlan) -> None:
    counts: dict[str, int] = {}
    for p in plan.files:
        counts[posixpath.basename(p)] = counts.get(posixpath.basename(p), 0) + 1
    for spec in plan.files.values():
        spec.refs = [Ref(r.edge_type, r.dst, "relative") if r.style == "bare" and counts[posixpath.basename(r.dst)] > 1
                     else r for r in spec.refs]
        for r in spec.refs:
            if r.dst not in plan.files:
                raise ValueError(f"{plan.name}/{spec.path}: reference to unplanned {r.dst}")


def assign_loose_types(types: list[str], roles: list[str]) -> dict[str, tuple[str, ...]]:
    """Which role gets a loose file of each of ``types``: the first role whose loose list has the type,
    else round-robin."""
    out: dict[str, list[str]] = {r: [] for r in roles}
    for k, t in enumerate(types):
        role = next((r for r in roles if any(ft == t for _, ft, _ in LOOSE[r])), roles[k % len(roles)])
        out[role].append(t)
    return {r: tuple(ts) for r, ts in out.items()}
