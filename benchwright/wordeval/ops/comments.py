"""Operations of the comments units (``catalogue/units/10_comments.yaml``). Replies and resolved comments
live in Word 2013's commentsExtended part (:mod:`benchwright.formats.ooxml.comments`)."""
from __future__ import annotations

from benchwright.formats.ooxml import comments as oxml
from benchwright.wordeval.docmodel import AUTHOR, AUTHOR_INITIALS, WordDoc, make_run
from benchwright.wordeval.ops.common import operation, runs_for


@operation("add_comment")
def add_comment(wd: WordDoc, target: dict, params: dict) -> None:
    runs = runs_for(wd, target)
    proxies = [wd.run_proxy(r) for r in runs]
    wd.doc.add_comment(proxies, text=params["text"], author=params.get("author", AUTHOR),
                       initials=params.get("initials", AUTHOR_INITIALS))


@operation("delete_comment")
def delete_comment(wd: WordDoc, target: dict, params: dict) -> None:
    comment = wd.comment(target["comment"])
    oxml.delete(wd._all_story_roots(), comment)


@operation("delete_all_comments")
def delete_all_comments(wd: WordDoc, target: dict, params: dict) -> None:
    for c in list(oxml.comments(wd.comments_el())):
        oxml.delete(wd._all_story_roots(), c)


@operation("edit_comment")
def edit_comment(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_text(wd.comment(target["comment"]), make_run(params["text"]))


@operation("set_comment_attr")
def set_comment_attr(wd: WordDoc, target: dict, params: dict) -> None:
    """Comment.Author / Initials through python-docx's ``Comment``; another attribute (its date) as OOXML names it."""
    c = wd.comment(target["comment"])
    if params["attribute"] in ("author", "initials"):
        setattr(wd.doc.comments.get(int(oxml.comment_id(c))), params["attribute"], params["value"])
    else:
        oxml.set_attribute(c, params["attribute"], params["value"])


@operation("reply_to_comment")
def reply_to_comment(wd: WordDoc, target: dict, params: dict) -> None:
    """Comment.Replies.Add: a new comment on the parent's range (its marks next to the parent's),
    linked to the parent in commentsExtended (w15:paraIdParent)."""
    parent = wd.comment(target["comment"])
    oxml.add_reply(wd.part, wd._all_story_roots, parent, make_run(params["text"]),
                   params.get("author", AUTHOR), params.get("initials", AUTHOR_INITIALS))


@operation("set_comment_done")
def set_comment_done(wd: WordDoc, target: dict, params: dict) -> None:
    """Comment.Done: the comment (thread) is marked resolved, or reopened."""
    oxml.set_done(wd.part, wd.comment(target["comment"]), params.get("done", True))
