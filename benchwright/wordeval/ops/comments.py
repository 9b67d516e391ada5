"""Operations of the comments units (``catalogue/units/10_comments.yaml``)."""
from __future__ import annotations

import copy

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


# ------------------------------------------------------------------ replies and resolved comments
# Word 2013+ links a reply to its parent, and records a comment as done, in the commentsExtended
# part ([MS-DOCX] 2.6.x, w15:commentEx keyed by the w14:paraId of the comment's last paragraph).

COMMENTS_EX_RT = "http://schemas.microsoft.com/office/2011/relationships/commentsExtended"
COMMENTS_EX_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml"


def _comments_root_with_w14(wd: WordDoc):
    """The comments part's root, declaring w14 and listing it in mc:Ignorable (paraIds are an
    extension a strict consumer skips); a root without the declarations is rebuilt with them."""
    from lxml import etree

    from benchwright.formats.ooxml.ns import NS
    part = wd.part._comments_part
    root = part.element
    if root.nsmap.get("w14") != NS["w14"] or root.nsmap.get("mc") != NS["mc"]:
        new = etree.Element(root.tag, nsmap={**root.nsmap, "w14": NS["w14"], "mc": NS["mc"]})
        for k, v in root.attrib.items():
            new.set(k, v)
        for child in list(root):
            new.append(child)
        part._element = new
        root = new
    ignorable = (root.get(qn("mc:Ignorable")) or "").split()
    if "w14" not in ignorable:
        root.set(qn("mc:Ignorable"), " ".join(ignorable + ["w14"]))
    return root


def _para_id(wd: WordDoc, comment) -> str:
    """w14:paraId of the comment's last paragraph, assigned (deterministically, from the comment
    id) when absent."""
    _comments_root_with_w14(wd)
    p = comment.findall(qn("w:p"))[-1]
    pid = p.get(qn("w14:paraId"))
    if not pid:
        pid = f"{0x3C000000 + int(comment.get(qn('w:id'))):08X}"
        p.set(qn("w14:paraId"), pid)
    return pid


def _comments_ex(wd: WordDoc):
    """The commentsExtended part's root, created (with its relationship and content type) if absent."""
    from docx.opc.packuri import PackURI
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml

    from benchwright.formats.ooxml.ns import NS
    for rel in wd.part.rels.values():
        if rel.reltype == COMMENTS_EX_RT and not rel.is_external:
            return rel.target_part.element if hasattr(rel.target_part, "element") else _reparse(rel)
    xml = f'<w15:commentsEx xmlns:w15="{NS["w15"]}" xmlns:mc="{NS["mc"]}" mc:Ignorable="w15"/>'
    part = XmlPart(PackURI("/word/commentsExtended.xml"), COMMENTS_EX_CT, parse_xml(xml.encode()), wd.part.package)
    wd.part.relate_to(part, COMMENTS_EX_RT)
    return part.element


def _reparse(rel):
    """A commentsExtended part python-docx loaded as a plain Part (bytes): replace it by an XmlPart."""
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml
    old = rel.target_part
    part = XmlPart(old.partname, old.content_type, parse_xml(old.blob), old.package)
    rel._target = part
    return part.element


def _comment_ex(wd: WordDoc, comment, create: bool = True):
    ex_root = _comments_ex(wd)
    pid = _para_id(wd, comment)
    for ex in ex_root.findall(qn("w15:commentEx")):
        if ex.get(qn("w15:paraId")) == pid:
            return ex
    ex = ex_root.makeelement(qn("w15:commentEx"), nsmap=None)
    ex.set(qn("w15:paraId"), pid)
    ex.set(qn("w15:done"), "0")
    ex_root.append(ex)
    return ex


@operation("reply_to_comment")
def reply_to_comment(wd: WordDoc, target: dict, params: dict) -> None:
    """Comment.Replies.Add: a new comment on the parent's range (its marks next to the parent's),
    linked to the parent in commentsExtended (w15:paraIdParent)."""
    parent = wd.comment(target["comment"])
    pid_parent = _para_id(wd, parent)
    root = wd.comments_el()
    new_id = str(max(int(c.get(qn("w:id"))) for c in root.findall(qn("w:comment"))) + 1)
    reply = copy.deepcopy(parent)
    reply.set(qn("w:id"), new_id)
    reply.set(qn("w:author"), params.get("author", AUTHOR))
    reply.set(qn("w:initials"), params.get("initials", AUTHOR_INITIALS))
    paras = reply.findall(qn("w:p"))
    for extra in paras[1:]:
        reply.remove(extra)
    p = paras[0]
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn("w:annotationRef")) is None:
            p.remove(r)
    p.append(make_run(params["text"]))
    if p.get(qn("w14:paraId")) is not None:
        del p.attrib[qn("w14:paraId")]
    parent.addnext(reply)
    cid = parent.get(qn("w:id"))
    for root_el in wd._all_story_roots():
        for el in list(root_el.iter(qn("w:commentRangeStart"), qn("w:commentRangeEnd"), qn("w:commentReference"))):
            if el.get(qn("w:id")) != cid:
                continue
            mark = copy.deepcopy(el)
            mark.set(qn("w:id"), new_id)
            if el.tag == qn("w:commentReference"):
                run = el.getparent()
                new_run = copy.deepcopy(run)
                for c in new_run:
                    if c.tag == qn("w:commentReference"):
                        c.set(qn("w:id"), new_id)
                run.addnext(new_run)
            else:
                el.addnext(mark)
    ex = _comment_ex(wd, reply)
    ex.set(qn("w15:paraIdParent"), pid_parent)


@operation("set_comment_done")
def set_comment_done(wd: WordDoc, target: dict, params: dict) -> None:
    """Comment.Done: the comment (thread) is marked resolved, or reopened."""
    ex = _comment_ex(wd, wd.comment(target["comment"]))
    ex.set(qn("w15:done"), "1" if params.get("done", True) else "0")
