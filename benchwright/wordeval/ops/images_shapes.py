"""Operations of the images shapes units (``catalogue/units/13_images_shapes.yaml``). Drawn shapes
and text boxes are Word 2010+'s WordprocessingShapes (:mod:`benchwright.formats.ooxml.drawing`)."""
from __future__ import annotations

from pathlib import Path

from docx.shared import Emu

from benchwright.formats.ooxml import drawing as oxml
from benchwright.formats.ooxml.elements import detach
from benchwright.formats.ooxml.run import append_runs, insert_after
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import AnchorError, PreconditionError, WordDoc
from benchwright.wordeval.ops.common import operation, paragraphs_for


ASSETS = Path(__file__).parent.with_name("assets")


def _box_text(box) -> str:
    return "".join(T.paragraph_read_text(p) for p in T.iter_block_paragraphs(box))


def _picture_runs(wd: WordDoc, target: dict) -> list:
    if "image" in target:
        spec = target["image"]
        found = oxml.find_runs(wd.body, spec.get("descr"), spec.get("text"), _box_text)
        if found:
            return found
        raise AnchorError(wd.locator, f"no picture with {spec!r}")
    runs = []
    for p in paragraphs_for(wd, target):
        runs += oxml.drawing_runs(p)
    if not runs:
        raise AnchorError(wd.locator, "no picture in target paragraph")
    return runs


@operation("add_picture")
def add_picture(wd: WordDoc, target: dict, params: dict) -> None:
    anchor_p = paragraphs_for(wd, target)[-1]
    # python-docx numbers the drawing from the ids of the main document part only; drawing ids
    # are unique across every story (headers, footnotes, endnotes, comments) for Word
    docpr_id = wd.next_docpr_id()
    new = wd.doc.add_paragraph()
    insert_after(anchor_p, new._p)
    run = new.add_run()
    shape = run.add_picture(str(ASSETS / params["image"]), width=Emu(params["width"]))
    oxml.set_doc_properties(shape._inline, docpr_id, params.get("descr"))
    if params.get("floating"):
        oxml.to_floating(run._r, params)


@operation("resize_picture")
def resize_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        if "width" in params:
            oxml.resize(r, params["width"], None, params.get("lock_aspect", True))
        else:
            oxml.resize(r, None, params["height"], params.get("lock_aspect", True))


@operation("set_picture_attr")
def set_picture_attr(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        oxml.set_doc_property(r, params["attribute"], params["value"])


@operation("delete_picture")
def delete_picture(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        detach(r)


@operation("convert_to_floating")
def convert_to_floating(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        oxml.to_floating(r, params)


@operation("set_wrap")
def set_wrap(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        oxml.set_wrap(r, params["wrap"])


@operation("set_shape_position")
def set_shape_position(wd: WordDoc, target: dict, params: dict) -> None:
    for r in _picture_runs(wd, target):
        oxml.set_position(r, {k: params[k] for k in ("left", "top") if k in params})


# ------------------------------------------------------------------ drawn shapes and text boxes


@operation("add_shape")
def add_shape(wd: WordDoc, target: dict, params: dict) -> None:
    """Shapes.AddShape / Shapes.AddTextbox: a floating shape anchored to the target paragraph
    (square wrapping, offset from the column and the paragraph), with the preset geometry, fill,
    outline and, for a text box, its text."""
    p = paragraphs_for(wd, target)[-1]
    append_runs(p, [oxml.shape_run(wd.next_docpr_id(), params)])


def _shapes(wd: WordDoc, target: dict) -> list:
    """The wps:wsp elements of the target shapes (found by their alternative text)."""
    found = oxml.shapes(_picture_runs(wd, target))
    if not found:
        raise AnchorError(wd.locator, f"no drawn shape or text box at {target!r}")
    return found


@operation("set_shape_fill")
def set_shape_fill(wd: WordDoc, target: dict, params: dict) -> None:
    """Shape.Fill.ForeColor.RGB (solid fill) or Shape.Fill.Visible = False (no fill)."""
    for wsp in _shapes(wd, target):
        oxml.set_fill(wsp, params.get("color"))


@operation("set_shape_line")
def set_shape_line(wd: WordDoc, target: dict, params: dict) -> None:
    """Shape.Line: Weight (a:ln@w, EMU), ForeColor (a:ln/a:solidFill) and DashStyle (a:prstDash)."""
    for wsp in _shapes(wd, target):
        oxml.set_line(wsp, params.get("weight"), params.get("color"), params.get("dash"))


@operation("set_shape_effect")
def set_shape_effect(wd: WordDoc, target: dict, params: dict) -> None:
    """One effect of the shape's a:effectLst (in schema order), added or replaced; ``remove`` deletes it."""
    for wsp in _shapes(wd, target):
        oxml.set_effect(wsp, params["effect"], params, bool(params.get("remove")))


@operation("set_text_frame")
def set_text_frame(wd: WordDoc, target: dict, params: dict) -> None:
    """TextFrame: internal margins (wps:bodyPr l/t/r/bIns, EMU), vertical anchor, AutoSize
    (a:spAutoFit = resize the shape to fit its text)."""
    for wsp in _shapes(wd, target):
        if not oxml.has_text_frame(wsp):
            raise PreconditionError(wd.locator, "the shape has no text frame")
        oxml.set_text_frame(wsp, params, params.get("anchor"),
                            bool(params["autosize"]) if "autosize" in params else None)


@operation("set_text_box_text")
def set_text_box_text(wd: WordDoc, target: dict, params: dict) -> None:
    """TextFrame.TextRange.Text: the text box keeps its first paragraph (and that paragraph's
    first run formatting) with the new text; further paragraphs are removed."""
    for wsp in _shapes(wd, target):
        oxml.set_text_box_text(wsp, params["text"])
