"""Workspace-Bench: vocabularies and the datasets.Features of every config (the single source of truth).

Configs: ``tasks`` (one row per task), ``rubrics`` (one row per rubric), ``files`` (one row per scanned
file), ``edges`` (dependencies extracted from the files) and ``task_edges`` (each task's own
``file_dep_graph``). Splits ``full`` and ``lite``: ``lite`` repeats the ``full`` rows that belong to
Workspace-Bench-Lite (``Dataset.subset_splits``).
"""
from __future__ import annotations

from datasets import ClassLabel, Features, List, Value

SPLITS = ("full", "lite")
SUBSET_SPLITS = {"lite": "full"}

# The five worker profiles, in the release's order (dataset-stats.json), and the runner's role folder
# (filesys/<role>_raw) of each.
PERSONAS = ("Operations Manager", "Logistics Manager", "Researcher", "Backend Developer", "Product Manager")
ROLE_OF_PERSONA = {"Operations Manager": "yunying", "Logistics Manager": "houqin", "Researcher": "research",
                   "Backend Developer": "kaifa", "Product Manager": "chanpin"}
ROLES = tuple(ROLE_OF_PERSONA.values())
DIFFICULTIES = ("easy", "medium", "hard")
# The six tested capabilities (= collaboration_type), as the release spells them.
CAPABILITIES = ("Workspace Exploration", "Task-Providing File Utilization", "Result-Providing Files Utilization",
                "Semantic Content Relations Understanding", "Lineage Tracing", "Heterogeneous File Understanding")
# One rubric-type vocabulary; the release uses two ("... Evaluation", legacy "... Assessment") and
# both "Result" and "Results". The original label is kept beside the normalised one.
RUBRIC_TYPES = ("Basic", "Outcome", "Process", "Result")

# Dependency edges between files. Explicit edges are written in a file (an import, a link, a formula
# naming another workbook...); implicit ones are inferred by a rule over names and contents.
EXPLICIT_EDGE_TYPES = (
    "import",          # Python / notebook import of a workspace module, JS/TS import or require
    "include",         # LaTeX \input / \include, HTML <script src> / <link href>, SQL \i, shell `source`
    "image",           # an embedded or referenced image: \includegraphics, <img src>, ![](...), a .docx/.pptx picture
    "link",            # a hyperlink: Markdown / HTML <a href>, .docx / .pptx / .xlsx hyperlinks, PDF link annotations
    "embedded_object", # an OLE object or attached file inside an Office document
    "external_link",   # an .xlsx external workbook link (xl/externalLinks)
    "formula",         # an .xlsx formula naming another file ('[book.xlsx]Sheet'!A1)
    "bibliography",    # LaTeX \bibliography / \addbibresource
    "path_literal",    # a string literal in code passed to a reader or writer (open, read_csv, ...)
    "data_reference",  # a JSON / YAML / TOML / CSV / INI value that resolves to a workspace path
)
IMPLICIT_EDGE_TYPES = (
    "version_chain",   # the same normalised stem in successive versions (v1 -> v2, draft -> final, dates)
    "derived_from",    # a file that repeats another's numbers or entities (a summary of a table)
    "same_entity",     # files about the same named entity
)
EDGE_TYPES = EXPLICIT_EDGE_TYPES + IMPLICIT_EDGE_TYPES
EDGE_KINDS = ("explicit", "implicit")
# How a reference found its target: relative to the referring file, by bare file name (the
# workspace holds exactly one file of that name), ambiguous (several), or not at all.
RESOLUTIONS = ("relative", "bare_name", "ambiguous", "unresolved")

TEXT_EXCERPT_CHARS = 4000

_STR = Value("string")

TASKS = Features({
    "task_id": _STR,                              # str(absolute_id)
    "absolute_id": Value("int64"),
    "persona": ClassLabel(names=list(PERSONAS)),
    "role": _STR,                                 # the runner's file_system (workspace role folder)
    "instruction": _STR,                          # the release's `task`
    "difficulty": ClassLabel(names=list(DIFFICULTIES)),
    "output_files": List(_STR),
    "tested_capabilities": List(_STR),
    "collaboration_type": List(_STR),
    "rubric_count": Value("int32"),
    "file_count": Value("int32"),
    "data_manifest": List({"filename": _STR, "stored_relpath": _STR, "target_path": _STR}),
    # the task's file_dep_graph, measured with networkx (task_edges holds the edges themselves)
    "graph_nodes": Value("int32"),
    "graph_edges": Value("int32"),
    "graph_depth": Value("int32"),                # longest path, in edges (-1 when the graph has a cycle)
    "graph_components": Value("int32"),           # weakly connected components
    "graph_cycles": Value("int32"),
    "isolated_manifest_files": Value("int32"),    # manifest files in no edge
    "manifest_bytes": Value("int64"),             # bytes of the task's data files (0 when the source has none)
    "lite_rule_selected": Value("bool"),          # chosen by our reproduction of the release's Lite rule
    "source_format": _STR,                        # "website" (tasks.json) or "runner" (tasks/<id>/metadata.json)
})

RUBRICS = Features({
    "rubric_id": _STR,                            # "<task_id>/<index>"
    "task_id": _STR,
    "index": Value("int32"),
    "rubric": _STR,
    "rubric_type": ClassLabel(names=list(RUBRIC_TYPES)),
    "rubric_type_original": _STR,
    "persona": ClassLabel(names=list(PERSONAS)),
    "difficulty": ClassLabel(names=list(DIFFICULTIES)),
})

FILES = Features({
    "file_id": _STR,                              # "<workspace>/<path>"
    "workspace": _STR,                            # e.g. "filesys/kaifa_raw", "tasks/12", or a scanned folder's name
    "path": _STR,                                 # relative to the workspace, '/'-separated
    # a symbolic link inside the workspace: the path of the file it points to (its bytes, hash and type
    # are that file's, so a link is not a second copy); null for a regular file
    "link_target": _STR,
    "task_id": _STR,                              # the task whose data folder holds the file; null for role workspaces
    "size": Value("int64"),
    "sha256": _STR,
    "magika_label": _STR,                         # magika's content type
    "magika_score": Value("float32"),
    "extension": _STR,                            # lower-case, without the dot; "" when none
    "file_type": _STR,                            # the type the extractors use: magika's, the extension breaking ties
    "file_type_source": _STR,                     # "magika" or "extension"
    "is_text": Value("bool"),
    "encoding": _STR,
    "line_count": Value("int64"),
    "word_count": Value("int64"),
    # the file's text as a reader sees it (Office / PDF / notebook text extracted), first TEXT_EXCERPT_CHARS
    # characters: what a retrieval baseline ranks and a reader checks an edge's evidence against
    "text_excerpt": _STR,
})

EDGES = Features({
    "edge_id": _STR,                              # stable hash of (workspace, src, reference, edge_type, evidence)
    "workspace": _STR,
    "src": _STR,                                  # path of the referring file (relative to the workspace)
    "dst": _STR,                                  # the resolved target's path; null when unresolved or ambiguous
    "reference": _STR,                            # the reference as written
    "edge_type": ClassLabel(names=list(EDGE_TYPES)),
    "kind": ClassLabel(names=list(EDGE_KINDS)),
    "rule": _STR,                                 # the extractor or implicit rule that found it
    "evidence": _STR,                             # the line, link, relationship or formula
    "confidence": Value("float32"),
    "resolution": ClassLabel(names=list(RESOLUTIONS)),
    "candidates": List(_STR),                     # every path the reference could name (ambiguous: several)
})

TASK_EDGES = Features({
    "task_edge_id": _STR,                         # "<task_id>/<index in file_dep_graph>"
    "task_id": _STR,
    "src": _STR,                                  # file names as the release writes them
    "dst": _STR,
    "src_kind": _STR,                             # "manifest" or "output"
    "dst_kind": _STR,
})

CONFIGS = {"tasks": TASKS, "rubrics": RUBRICS, "files": FILES, "edges": EDGES, "task_edges": TASK_EDGES}
ID_COLUMNS = {"tasks": "task_id", "rubrics": "rubric_id", "files": "file_id", "edges": "edge_id",
              "task_edges": "task_edge_id"}
