"""Operations of the comments units (``catalogue/units/10_comments.yaml``)."""
from __future__ import annotations

from benchwright.formats.ooxml.ns import qn
from benchwright.wordeval.docmodel import AUTHOR, AUTHOR_INITIALS, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, runs_for


@operation("add_comment")
def add_comment(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.text.run import Run
    runs = runs_for(wd, target)
    proxies = [Run(r, wd.proxy(r.getparent())) for r in runs]
    wd.doc.add_comment(proxies, text=params["text"], author=params.get("author", AUTHOR),
                       initials=params.get("initials", AUTHOR_INITIALS))


def _remove_comment_marks(wd: WordDoc, cid: str) -> None:
    for root in wd._all_story_roots():
        for el in list(root.iter(qn("w:commentRangeStart"), qn("w:commentRangeEnd"), qn("w:commentReference"))):
            if el.get(qn("w:id")) != cid:
                continue
            parent = el.getparent()
            parent.remove(el)
            if parent.tag == qn("w:r") and not [c for c in parent if c.tag != qn("w:rPr")]:
                parent.getparent().remove(parent)


@operation("delete_comment")
def delete_comment(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    _remove_comment_marks(wd, c.get(qn("w:id")))
    c.getparent().remove(c)


@operation("delete_all_comments")
def delete_all_comments(wd: WordDoc, target: dict, params: dict) -> None:
    for c in list(wd.comments_el().findall(qn("w:comment"))):
        _remove_comment_marks(wd, c.get(qn("w:id")))
        c.getparent().remove(c)


@operation("edit_comment")
def edit_comment(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    paras = c.findall(qn("w:p"))
    p = paras[0]
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn("w:annotationRef")) is None:
            p.remove(r)
    p.append(make_run(params["text"]))
    for extra in paras[1:]:
        c.remove(extra)


@operation("set_comment_attr")
def set_comment_attr(wd: WordDoc, target: dict, params: dict) -> None:
    c = wd.comment(target["comment"])
    c.set(qn("w:" + params["attribute"]), params["value"])
