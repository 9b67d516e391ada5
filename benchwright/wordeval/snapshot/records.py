"""What a snapshot records: paragraphs and the document's stories, tables, sections and parts."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# --------------------------------------------------------------------------------------------
# snapshot records


@dataclass
class Para:
    text: str
    style: str | None
    para: dict
    chars: dict
    num: dict
    loc: str | None = None
    drawings: list = field(default_factory=list)
    el: Any = None          # the w:p element (not serialised)
    read: str = ""          # read view (field results, no control characters): anchors match this
    start: int = 0          # offset of this paragraph in its story text


@dataclass
class Snapshot:
    stories: dict[str, list[Para]] = field(default_factory=dict)
    tables: list[dict] = field(default_factory=list)
    sections: list[dict] = field(default_factory=list)
    fields: dict[str, list[dict]] = field(default_factory=dict)
    notes: dict[str, list[dict]] = field(default_factory=dict)     # "footnote"/"endnote" -> [{story, ref}]
    comments: list[dict] = field(default_factory=list)
    revisions: dict[str, list[dict]] = field(default_factory=dict)
    bookmarks: dict[str, dict] = field(default_factory=dict)
    styles: dict[str, dict] = field(default_factory=dict)
    sdts: list[dict] = field(default_factory=list)
    props: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
