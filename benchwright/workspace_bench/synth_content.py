"""Vocabularies and text for the synthetic Workspace-Bench release (``synth.py``).

Everything a generated file says comes from here: per-persona topics, the named entities of the
dossiers (customers, suppliers, candidates...), sentence parts, and the file-type tables (the 74
workspace types, the 24 task-manifest types and the release's type groups). Text is drawn from a
``random.Random`` the caller seeds, so the same seed gives the same words.

Names of dossier entities are drawn without replacement and never reused in another file, so the
``same_entity`` edges the generator plants are the only files that share a proper name.
"""
from __future__ import annotations

import random

# ---------------------------------------------------------------------------------------------
# File types
# ---------------------------------------------------------------------------------------------

# A file's type: its lower-case extension, or its name when it has none (Dockerfile, Makefile).
WORKSPACE_TYPES = (
    # documents
    "docx", "xlsx", "pptx", "pdf", "md", "txt", "html", "rst",
    # notebooks and code
    "ipynb", "py", "js", "ts", "jsx", "tsx", "css", "sql", "sh", "bat", "ps1", "java", "go", "rs", "c", "h",
    "cpp", "rb", "php", "lua", "pl", "r", "proto", "graphql",
    # data and configuration
    "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "ini", "cfg", "env", "properties", "xml",
    "sqlite", "db", "parquet", "feather", "npy", "npz",
    # LaTeX
    "tex", "bib",
    # images
    "png", "jpg", "svg", "gif", "bmp", "tiff", "webp", "ico",
    # archives
    "zip", "tar", "gz",
    # other
    "eml", "log", "ics", "vcf", "srt", "patch", "dot", "mmd", "wav", "Dockerfile", "Makefile",
)
assert len(WORKSPACE_TYPES) == len(set(WORKSPACE_TYPES)) == 74

# The release's file-type groups (dataset-stats.json fileTypeGroups) over the 24 manifest types.
# Its groups add up to one less than its file total; the one file outside every group is a Makefile.
MANIFEST_TYPE_GROUPS = {
    "Documents": ("md", "docx", "pdf", "txt", "pptx", "html"),
    "Spreadsheets": ("xlsx", "csv", "tsv"),
    "Code": ("py", "sh", "js", "ts", "sql", "ipynb"),
    "Data": ("json", "yaml", "yml", "xml", "jsonl"),
    "Media": ("png", "jpg"),
    "Archives": ("zip",),
    "Other": ("Makefile",),
}
# Files per manifest type in ``full``: the groups sum to the release's 1764 / 812 / 652 / 585 / 37 / 3
# plus the one ungrouped file = 3,854.
FULL_MANIFEST_TYPE_COUNTS = {
    "md": 820, "docx": 420, "pdf": 250, "txt": 150, "pptx": 64, "html": 60,
    "xlsx": 520, "csv": 250, "tsv": 42,
    "py": 230, "sh": 160, "js": 80, "ts": 52, "sql": 90, "ipynb": 40,
    "json": 230, "yaml": 180, "yml": 75, "xml": 60, "jsonl": 40,
    "png": 25, "jpg": 12,
    "zip": 3,
    "Makefile": 1,
}
MANIFEST_TYPES = tuple(FULL_MANIFEST_TYPE_COUNTS)
assert len(MANIFEST_TYPES) == 24 and sum(FULL_MANIFEST_TYPE_COUNTS.values()) == 3854

# How much a persona's tasks lean on each manifest type (the type allocation multiplies these by
# the files still to place).
_DOC = {"md": 3, "docx": 4, "pdf": 3, "txt": 2, "pptx": 2, "html": 1}
PERSONA_TYPE_AFFINITY = {
    "Operations Manager": {**_DOC, "xlsx": 6, "csv": 3, "tsv": 1, "json": 1, "png": 2, "jpg": 1, "zip": 1},
    "Logistics Manager": {**_DOC, "xlsx": 6, "csv": 5, "tsv": 2, "xml": 2, "json": 1, "jpg": 2, "zip": 1},
    "Researcher": {**_DOC, "py": 3, "ipynb": 4, "csv": 3, "json": 2, "jsonl": 3, "png": 3, "tsv": 1, "xlsx": 1},
    "Backend Developer": {"md": 5, "txt": 1, "html": 1, "py": 5, "sh": 6, "js": 4, "ts": 4, "sql": 5,
                          "json": 4, "yaml": 6, "yml": 5, "xml": 2, "jsonl": 1, "Makefile": 1, "csv": 1},
    "Product Manager": {**_DOC, "pptx": 4, "xlsx": 3, "csv": 1, "png": 3, "jpg": 2, "html": 2, "json": 1},
}

# ---------------------------------------------------------------------------------------------
# Words
# ---------------------------------------------------------------------------------------------

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")

# Name parts for unique file stems: adjective x noun gives 2,500 stems per persona vocabulary. No
# version words (draft, final, revised, v1): two unrelated stems must never look like versions.
STEM_ADJECTIVES = (
    "annual", "archived", "baseline", "brief", "central", "client", "core", "daily", "detailed", "autumn",
    "east", "external", "field", "lean", "global", "internal", "key", "legacy", "local", "main",
    "manual", "master", "monthly", "north", "open", "partner", "pending", "pilot", "primary", "quarterly",
    "quick", "raw", "regional", "spring", "rolling", "shared", "short", "south", "spare", "special",
    "staff", "standard", "summary", "team", "temporary", "travel", "urgent", "vendor", "weekly", "west",
)
STEM_NOUNS = {
    "Operations Manager": (
        "accounts", "agenda", "audience", "backlog", "banner", "budget", "calendar", "campaign", "channels",
        "churn", "coupons", "dashboard", "deals", "feedback", "forecast", "funnel", "growth", "kpis",
        "leads", "listings", "margin", "members", "metrics", "newsletter", "offers", "orders", "outreach",
        "partners", "pipeline", "playbook", "pricing", "promotions", "quotas", "referrals", "refunds",
        "renewals", "retention", "revenue", "reviews", "segments", "signups", "social", "stores",
        "subscribers", "surveys", "targets", "territories", "tickets", "traffic", "visits"),
    "Logistics Manager": (
        "allocations", "assets", "audits", "bins", "cargo", "carriers", "claims", "consignments", "costs",
        "customs", "deliveries", "depots", "dispatch", "docks", "drivers", "freight", "fuel", "handovers",
        "inbound", "inspections", "inventory", "invoices", "labels", "lanes", "leases", "loads",
        "maintenance", "manifests", "orders", "outbound", "pallets", "parcels", "parts", "permits",
        "pickups", "purchases", "receipts", "returns", "routes", "safety", "schedules", "shifts",
        "shipments", "stock", "storage", "suppliers", "tariffs", "transfers", "vehicles", "warehouses"),
    "Researcher": (
        "ablation", "abstract", "annotations", "appendix", "baselines", "benchmark", "citations", "corpus",
        "curves", "dataset", "embeddings", "equations", "errors", "experiments", "features", "figures",
        "grants", "hypotheses", "labels", "lectures", "literature", "logs", "methods", "metrics", "models",
        "notes", "outline", "participants", "pilot", "posters", "preprint", "proofs", "protocol",
        "queries", "readings", "results", "reviews", "rebuttal", "samples", "seminar", "simulations",
        "slides", "splits", "statistics", "summaries", "survey", "tables", "theses", "trials", "weights"),
    "Backend Developer": (
        "alerts", "api", "auth", "backups", "billing", "buckets", "cache", "certs", "cluster", "cron",
        "deploy", "dns", "events", "exporter", "fixtures", "gateway", "healthcheck", "hooks", "indexes",
        "ingest", "jobs", "keys", "limits", "loadtest", "locks", "mailer", "metrics", "migrations",
        "mirror", "monitor", "nodes", "notifier", "oauth", "partitions", "payments", "proxy", "queue",
        "quota", "replicas", "routing", "scheduler", "schemas", "search", "secrets", "sessions",
        "storage", "tenants", "tokens", "uploads", "workers"),
    "Product Manager": (
        "analytics", "backlog", "benchmarks", "canvas", "checkout", "competitors", "concepts", "dashboard",
        "discovery", "epics", "experiments", "feedback", "flows", "goals", "hypotheses", "insights",
        "interviews", "journeys", "kpis", "launch", "mockups", "navigation", "notifications", "okrs",
        "onboarding", "personas", "pricing", "priorities", "profile", "prototype", "release", "requests",
        "requirements", "research", "retro", "roadmap", "search", "settings", "sketches", "specs",
        "sprints", "stories", "survey", "tiers", "usability", "vision", "wallet", "widgets", "wireframes",
        "workshop"),
}

# Topics a persona's prose talks about (no proper names: those belong to the dossiers).
TOPICS = {
    "Operations Manager": ("regional sales", "customer retention", "the spring campaign", "channel mix",
                           "subscriber growth", "store performance", "promotion results", "churn drivers",
                           "monthly revenue", "lead conversion"),
    "Logistics Manager": ("warehouse stock levels", "inbound shipments", "carrier performance", "fleet upkeep",
                          "reorder points", "customs clearance", "delivery delays", "pallet utilisation",
                          "supplier lead times", "returns handling"),
    "Researcher": ("the ablation study", "baseline results", "dataset construction", "error analysis",
                   "the related work", "evaluation metrics", "training stability", "annotation agreement",
                   "the pilot experiment", "statistical significance"),
    "Backend Developer": ("the deployment pipeline", "database migrations", "API rate limits",
                          "cache invalidation", "service health checks", "log retention", "queue back-pressure",
                          "secret rotation", "the monitoring stack", "integration tests"),
    "Product Manager": ("the onboarding flow", "checkout conversion", "the quarterly roadmap",
                        "user interview findings", "feature prioritisation", "the pricing page",
                        "notification settings", "search relevance", "the beta launch", "accessibility fixes"),
}
_VERBS = ("reviewed", "updated", "summarised", "compared", "checked", "consolidated", "revised", "tracked",
          "prepared", "analysed", "flagged", "confirmed", "estimated", "listed", "documented")
_OBJECTS = ("the figures for this period", "the open issues", "the agreed next steps", "the main risks",
            "the changes since the last version", "the totals per category", "the outstanding actions",
            "the assumptions behind the estimate", "the items that need a decision",
            "the differences against the plan", "the owners of each action", "the expected impact")
_OPENERS = ("This week we", "The team", "We", "Our group", "The working group", "In this round we",
            "Before the review we", "As agreed, we")
_CLOSERS = ("Further detail follows in the sections below.", "Comments are welcome before the next review.",
            "The next update is due at the end of the month.", "Numbers are provisional until sign-off.",
            "Open questions are listed at the end.", "Please flag anything that looks wrong.")

# Named entities of the dossiers (drawn without replacement; see module docstring).
_ENTITY_FIRST = ("Alder", "Birch", "Cedar", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Indigo",
                 "Juniper", "Kestrel", "Linden", "Maple", "Nimbus", "Onyx", "Pioneer", "Quartz", "Raven",
                 "Summit", "Tundra", "Umber", "Vertex", "Willow", "Xenon", "Yarrow", "Zephyr", "Apex",
                 "Beacon", "Cobalt", "Dune", "Everest", "Falcon", "Glacier", "Horizon", "Iris", "Jade")
_ENTITY_SECOND = {
    "customer": ("Retail", "Foods", "Outfitters", "Pharmacy", "Hotels", "Motors", "Books", "Fitness",
                 "Electronics", "Furniture", "Cafe", "Travel"),
    "supplier": ("Packaging", "Freight", "Metals", "Plastics", "Textiles", "Logistics", "Components",
                 "Chemicals", "Paper", "Tools", "Pallets", "Cold Chain"),
    "paper": ("Transformer", "Graph", "Diffusion", "Retrieval", "Contrastive", "Sparse", "Federated",
              "Causal", "Bayesian", "Multimodal", "Continual", "Robust"),
    "service": ("Gateway", "Ledger", "Relay", "Indexer", "Notifier", "Scheduler", "Vault", "Tracker",
                "Router", "Collector", "Mailer", "Broker"),
    "product": ("App", "Studio", "Pay", "Hub", "Desk", "Go", "Plus", "Connect", "Cloud", "Pulse",
                "Lens", "Board"),
    "person": ("Moss", "Ng", "Ortiz", "Park", "Reyes", "Silva", "Tran", "Varga", "Weber", "Young", "Zhou",
               "Brooks"),
}


class Words:
    """The text and names of one persona, drawn from one seeded generator."""

    def __init__(self, persona: str, rng: random.Random):
        self.persona = persona
        self.rng = rng
        self._used_stems: set[str] = set()
        self._used_entities: set[str] = set()

    def topic(self) -> str:
        return self.rng.choice(TOPICS[self.persona])

    def sentence(self) -> str:
        r = self.rng
        return f"{r.choice(_OPENERS)} {r.choice(_VERBS)} {r.choice(_OBJECTS)} for {r.choice(TOPICS[self.persona])}."

    def paragraph(self, n: int = 3) -> str:
        return " ".join([self.sentence() for _ in range(n)] + [self.rng.choice(_CLOSERS)])

    def stem(self) -> str:
        """A file stem no other call returned (adjective_noun, then a third word when needed); never
        ends in a number or a date, so unrelated stems never look like a version chain."""
        nouns = STEM_NOUNS[self.persona]
        for _ in range(40):
            s = f"{self.rng.choice(STEM_ADJECTIVES)}_{self.rng.choice(nouns)}"
            if s not in self._used_stems:
                self._used_stems.add(s)
                return s
        while True:
            s = f"{self.rng.choice(STEM_ADJECTIVES)}_{self.rng.choice(nouns)}_{self.rng.choice(nouns)}"
            if s not in self._used_stems:
                self._used_stems.add(s)
                return s

    def entity(self, kind: str) -> str:
        """A proper name (e.g. "Cobalt Foods") not returned before for this persona."""
        second = _ENTITY_SECOND[kind]
        for _ in range(60):
            name = f"{self.rng.choice(_ENTITY_FIRST)} {self.rng.choice(second)}"
            if name not in self._used_entities:
                self._used_entities.add(name)
                return name
        while True:
            name = f"{self.rng.choice(_ENTITY_FIRST)} {self.rng.choice(_ENTITY_FIRST)} {self.rng.choice(second)}"
            if name not in self._used_entities:
                self._used_entities.add(name)
                return name


def slug(text: str) -> str:
    """``"Cobalt Foods"`` -> ``"cobalt_foods"``."""
    return "".join(c if c.isalnum() else "_" for c in text.lower()).strip("_")


def number_table(rng: random.Random, header: list[str], rows: int, labels: list[str] | None = None,
                 low: int = 100, high: int = 9000) -> list[list]:
    """A header row and ``rows`` rows: a label then integers (the numbers a derived file repeats)."""
    labels = labels or [f"{MONTHS[i % 12][:3]}" for i in range(rows)]
    return [list(header)] + [[labels[i]] + [rng.randint(low, high) for _ in header[1:]] for i in range(rows)]
