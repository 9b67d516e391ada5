"""WordprocessingML comments: the comments part (``w:comments/w:comment``), a comment's marks in the
stories (``w:commentRangeStart`` / ``w:commentRangeEnd`` / ``w:commentReference``), and Word 2013's
commentsExtended part ([MS-DOCX] 2.6.x: ``w15:commentEx`` keyed by the ``w14:paraId`` of the comment's
last paragraph) that links a reply to its parent and records a comment as done. python-docx adds a
comment (``Document.add_comment``); WordEval's other comment operations use these, and the XML stays
here, as python-docx keeps its own in ``docx.oxml.comments``."""
from __future__ import annotations

import copy

from lxml import etree

from benchwright.formats.ooxml.elements import detach
from benchwright.formats.ooxml.ns import NS, qn

COMMENTS_EX_RT = "http://schemas.microsoft.com/office/2011/relationships/commentsExtended"
COMMENTS_EX_CT = "application/vnd.openxmlformats-officedocument.wordprocessingml.commentsExtended+xml"
_MARKS = (qn("w:commentRangeStart"), qn("w:commentRangeEnd"), qn("w:commentReference"))


def comments(root) -> list:
    """The comments (``w:comment``) of the comments part's root, in order."""
    return root.findall(qn("w:comment"))


def comment_id(comment) -> str:
    """A comment's ``w:id``."""
    return comment.get(qn("w:id"))


def remove_marks(story_roots, cid: str) -> None:
    """Every mark of comment ``cid`` in the stories goes (a reference's run too when it holds nothing else)."""
    for root in story_roots:
        for el in list(root.iter(*_MARKS)):
            if el.get(qn("w:id")) != cid:
                continue
            parent = el.getparent()
            parent.remove(el)
            if parent.tag == qn("w:r") and not [c for c in parent if c.tag != qn("w:rPr")]:
                parent.getparent().remove(parent)


def delete(story_roots, comment) -> None:
    """Comment.Delete: the comment and its marks."""
    remove_marks(story_roots, comment_id(comment))
    detach(comment)


def _replace_text(comment, run) -> None:
    """The comment's first paragraph keeps its annotation reference and holds ``run``; its other paragraphs go."""
    paras = comment.findall(qn("w:p"))
    p = paras[0]
    for r in list(p.findall(qn("w:r"))):
        if r.find(qn("w:annotationRef")) is None:
            p.remove(r)
    p.append(run)
    for extra in paras[1:]:
        comment.remove(extra)


def set_text(comment, run) -> None:
    """Comment.Range.Text: the comment's text becomes ``run``'s."""
    _replace_text(comment, run)


def set_attribute(comment, attribute: str, value: str) -> None:
    """A comment attribute (``w:author``, ``w:initials``, ``w:date``)."""
    comment.set(qn("w:" + attribute), value)


def root_with_w14(comments_part):
    """The comments part's root, declaring w14 and listing it in mc:Ignorable (paraIds are an
    extension a strict consumer skips); a root without the declarations is rebuilt with them."""
    root = comments_part.element
    if root.nsmap.get("w14") != NS["w14"] or root.nsmap.get("mc") != NS["mc"]:
        new = etree.Element(root.tag, nsmap={**root.nsmap, "w14": NS["w14"], "mc": NS["mc"]})
        for k, v in root.attrib.items():
            new.set(k, v)
        for child in list(root):
            new.append(child)
        comments_part._element = new
        root = new
    ignorable = (root.get(qn("mc:Ignorable")) or "").split()
    if "w14" not in ignorable:
        root.set(qn("mc:Ignorable"), " ".join(ignorable + ["w14"]))
    return root


def para_id(comments_part, comment) -> str:
    """w14:paraId of the comment's last paragraph, assigned (deterministically, from the comment
    id) when absent."""
    root_with_w14(comments_part)
    p = comment.findall(qn("w:p"))[-1]
    pid = p.get(qn("w14:paraId"))
    if not pid:
        pid = f"{0x3C000000 + int(comment.get(qn('w:id'))):08X}"
        p.set(qn("w14:paraId"), pid)
    return pid


def _reparse(rel):
    """A commentsExtended part python-docx loaded as a plain Part (bytes): replace it by an XmlPart."""
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml
    old = rel.target_part
    part = XmlPart(old.partname, old.content_type, parse_xml(old.blob), old.package)
    rel._target = part
    return part.element


def comments_ex_root(document_part):
    """The commentsExtended part's root, created (with its relationship and content type) if absent."""
    from docx.opc.packuri import PackURI
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml
    for rel in document_part.rels.values():
        if rel.reltype == COMMENTS_EX_RT and not rel.is_external:
            return rel.target_part.element if hasattr(rel.target_part, "element") else _reparse(rel)
    xml = f'<w15:commentsEx xmlns:w15="{NS["w15"]}" xmlns:mc="{NS["mc"]}" mc:Ignorable="w15"/>'
    part = XmlPart(PackURI("/word/commentsExtended.xml"), COMMENTS_EX_CT, parse_xml(xml.encode()),
                   document_part.package)
    document_part.relate_to(part, COMMENTS_EX_RT)
    return part.element


def comment_ex(document_part, comment):
    """The comment's ``w15:commentEx`` (created, not done, when absent)."""
    ex_root = comments_ex_root(document_part)
    pid = para_id(document_part._comments_part, comment)
    for ex in ex_root.findall(qn("w15:commentEx")):
        if ex.get(qn("w15:paraId")) == pid:
            return ex
    ex = ex_root.makeelement(qn("w15:commentEx"), nsmap=None)
    ex.set(qn("w15:paraId"), pid)
    ex.set(qn("w15:done"), "0")
    ex_root.append(ex)
    return ex


def set_done(document_part, comment, done: bool) -> None:
    """Comment.Done: the comment (thread) is marked resolved, or reopened."""
    comment_ex(document_part, comment).set(qn("w15:done"), "1" if done else "0")


def _copy_marks(story_roots, cid: str, new_id: str) -> None:
    """Next to each mark of comment ``cid``, the same mark of comment ``new_id`` (a reference in a copy of its run)."""
    for root_el in story_roots:
        for el in list(root_el.iter(*_MARKS)):
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


def add_reply(document_part, story_roots, parent, run, author: str, initials: str) -> None:
    """Comment.Replies.Add: a new comment holding ``run`` on the parent's range (its marks next to the
    parent's), linked to the parent in commentsExtended (w15:paraIdParent). ``story_roots()``: the
    roots of the document's stories, read once the comments part's root is final (w14 declared)."""
    comments_part = document_part._comments_part
    pid_parent = para_id(comments_part, parent)
    root = comments_part.element
    new_id = str(max(int(c.get(qn("w:id"))) for c in root.findall(qn("w:comment"))) + 1)
    reply = copy.deepcopy(parent)
    reply.set(qn("w:id"), new_id)
    reply.set(qn("w:author"), author)
    reply.set(qn("w:initials"), initials)
    _replace_text(reply, run)
    p = reply.findall(qn("w:p"))[0]
    if p.get(qn("w14:paraId")) is not None:
        del p.attrib[qn("w14:paraId")]
    parent.addnext(reply)
    _copy_marks(story_roots(), comment_id(parent), new_id)
    comment_ex(document_part, reply).set(qn("w15:paraIdParent"), pid_parent)


__all__ = ["COMMENTS_EX_RT", "COMMENTS_EX_CT", "comments", "comment_id", "remove_marks", "delete", "set_text",
           "set_attribute", "root_with_w14", "para_id", "comments_ex_root", "comment_ex", "set_done", "add_reply"]
