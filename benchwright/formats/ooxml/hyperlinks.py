"""WordprocessingML hyperlinks (``w:hyperlink``: a relationship id to a URL, or an anchor naming a
bookmark) and bookmarks (``w:bookmarkStart`` / ``w:bookmarkEnd``). WordEval's hyperlink and bookmark
operations use these for what python-docx's proxies do not do (python-docx reads hyperlinks, never
writes them), and the XML stays here, as python-docx keeps its own in ``docx.oxml.text.hyperlink``."""
from __future__ import annotations

from benchwright.formats.ooxml.accessors import set_locus
from benchwright.formats.ooxml.elements import unwrap, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.run import make_run
from benchwright.formats.ooxml.schema_order import get_or_add


def wrap_runs(runs: list, rid: str | None, anchor: str | None, tooltip: str | None, style_id: str) -> None:
    """Hyperlinks.Add: ``runs`` (siblings) go into a new ``w:hyperlink`` in their place, to the relationship
    ``rid`` (a URL) or the bookmark ``anchor``, each run in the character style ``style_id``."""
    h = w_el("w:hyperlink")
    if rid:
        h.set(qn("r:id"), rid)
    if anchor:
        h.set(qn("w:anchor"), anchor)
    if tooltip:
        h.set(qn("w:tooltip"), tooltip)
    h.set(qn("w:history"), "1")
    runs[0].addprevious(h)
    for r in runs:
        rpr = get_or_add(r, "w:rPr")
        set_locus(rpr, "w:rStyle@w:val", "attr", style_id)
        h.append(r)


def hyperlinks(container) -> list:
    """Every hyperlink in a story container, in document order."""
    return list(container.iter(qn("w:hyperlink")))


def hyperlink_runs(h) -> list:
    """The runs of hyperlink ``h`` (nested ones included)."""
    return list(h.iter(qn("w:r")))


def remove_link(h, hyperlink_style_id) -> None:
    """Hyperlink.Delete: the link goes, its runs stay, without the hyperlink character style
    (``hyperlink_style_id()``, asked only when a run has a character style)."""
    for r in h.iter(qn("w:r")):
        rpr = r.find(qn("w:rPr"))
        rs = rpr.find(qn("w:rStyle")) if rpr is not None else None
        if rs is not None and rs.get(qn("w:val")) == hyperlink_style_id():
            rpr.remove(rs)
            if not len(rpr):
                r.remove(rpr)
    unwrap(h)


def set_relationship(h, rid: str) -> None:
    """Hyperlink.Address: the link goes to relationship ``rid`` (no longer to a bookmark)."""
    h.set(qn("r:id"), rid)
    h.attrib.pop(qn("w:anchor"), None)


def set_tooltip(h, tooltip: str) -> None:
    """Hyperlink.ScreenTip."""
    h.set(qn("w:tooltip"), tooltip)


def set_text(h, text: str) -> None:
    """Hyperlink.TextToDisplay: one run with ``text``, formatted as the link's first run was."""
    runs = h.findall(qn("w:r"))
    rpr = runs[0].find(qn("w:rPr")) if runs else None
    for r in runs:
        h.remove(r)
    h.append(make_run(text, rpr))


def add_bookmark(runs: list, bid: int, name: str) -> None:
    """Bookmarks.Add: bookmark ``name`` (id ``bid``) around ``runs``."""
    runs[0].addprevious(w_el("w:bookmarkStart", id=bid, name=name))
    runs[-1].addnext(w_el("w:bookmarkEnd", id=bid))


def delete_bookmark(start) -> None:
    """Bookmark.Delete: the bookmark's start and its end (anywhere in the story); the text stays."""
    bid = start.get(qn("w:id"))
    root = start.getroottree().getroot()
    for end in list(root.iter(qn("w:bookmarkEnd"))):
        if end.get(qn("w:id")) == bid:
            end.getparent().remove(end)
    start.getparent().remove(start)


__all__ = ["wrap_runs", "hyperlinks", "hyperlink_runs", "remove_link", "set_relationship", "set_tooltip", "set_text",
           "add_bookmark", "delete_bookmark"]
