"""A story's block content (a header's or footer's ``w:hdr`` / ``w:ftr`` root): its paragraphs outside
tables, those in block content controls included (a real footer may hold all its text in one, as Apache
POI's Bug54849.docx does; python-docx's ``paragraphs`` sees only the direct ones), and what replacing or
clearing that content does to them. WordEval's header and footer operations use python-docx's
``_Header`` / ``_Footer`` proxies and these; the XML stays here."""
from __future__ import annotations

import copy

from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.run import remove_content

_W_P, _W_SDT, _W_SDTCONTENT, _W_CUSTOMXML = qn("w:p"), qn("w:sdt"), qn("w:sdtContent"), qn("w:customXml")


def story_paragraphs(root) -> list:
    """The paragraphs of a story outside tables, in order: its own and those in block content controls
    and custom XML."""
    out = []
    for c in root:
        if c.tag == _W_P:
            out.append(c)
        elif c.tag in (_W_SDT, _W_CUSTOMXML):
            content = c.find(_W_SDTCONTENT) if c.tag == _W_SDT else c
            if content is not None:
                out.extend(story_paragraphs(content))
    return out


def remove_paragraph(p) -> None:
    """Take paragraph ``p`` out of its story, and the content control holding it when it is left empty."""
    parent = p.getparent()
    parent.remove(p)
    if parent.tag == _W_SDTCONTENT and not len(parent):
        sdt = parent.getparent()
        sdt.getparent().remove(sdt)


def copied_paragraphs(root) -> list:
    """Copies of every paragraph of the story (those in tables included), in order."""
    return [copy.deepcopy(p) for p in root.iter(qn("w:p"))]


def replace_content(root, paragraphs: list) -> None:
    """The story holds ``paragraphs`` and nothing else."""
    for c in list(root):
        root.remove(c)
    for p in paragraphs:
        root.append(p)


def clear_to(root, first) -> None:
    """The story keeps only paragraph ``first`` (moved up to the story when it was in a content control),
    emptied of its content but its properties."""
    for c in list(root):
        if c is not first:
            root.remove(c)
    if first.getparent() is not root:       # it was in a content control, now removed: the story keeps it
        root.append(first)
    remove_content(first)


__all__ = ["story_paragraphs", "remove_paragraph", "copied_paragraphs", "replace_content", "clear_to"]
