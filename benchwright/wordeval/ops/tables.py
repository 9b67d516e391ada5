"""Operations of the tables units (``catalogue/units/05_tables.yaml``)."""
from __future__ import annotations

import copy
import re

from docx.shared import Twips

from benchwright.formats.ooxml.elements import border_el, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import PreconditionError, WordDoc, make_run, set_paragraph_text
from benchwright.wordeval.ops.common import cells_for, operation, paragraphs_for, scope_objects


def cell_set_text(tc, text: str) -> None:
    paras = tc.findall(qn("w:p"))
    if not paras:
        p = w_el("w:p")
        tc.append(p)
        paras = [p]
    set_paragraph_text(paras[0], text)
    for extra in paras[1:]:
        tc.remove(extra)


@operation("add_table")
def add_table(wd: WordDoc, target: dict, params: dict) -> None:
    rows = params["cells"]
    n_cols = max(len(r) for r in rows)
    table = wd.doc.add_table(rows=len(rows), cols=n_cols)
    if params.get("style"):
        table.style = wd.style(params["style"], "table")
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            cell_set_text(table.cell(r, c)._tc, text)
    p = paragraphs_for(wd, target)[-1]
    p.addnext(table._tbl)


def _fit_values(wd: WordDoc, values: list, n: int, what: str) -> list:
    """The unit's cell values for ``n`` new cells: missing values leave cells empty; values beyond
    the ``n`` cells must be empty (the declared precondition: the table is big enough)."""
    values = list(values or [])
    if any(str(v) for v in values[n:]):
        raise PreconditionError(wd.locator, f"the new {what} has {n} cells but the unit gives {len(values)} values")
    return values[:n]


@operation("add_row")
def add_row(wd: WordDoc, target: dict, params: dict) -> None:
    """Rows.Add: a row with one cell per grid column (any table width); the unit's values fill
    its cells from the left."""
    tbl = wd.table(target["table"])
    proxy = wd.table_proxy(tbl)
    n_rows = len(tbl.findall(qn("w:tr")))
    before = params.get("before")
    if before and not 1 <= before <= n_rows:
        raise PreconditionError(wd.locator, f"the table has {n_rows} rows, no row {before} to insert before")
    row = proxy.add_row()
    cells = list(T.row_cells(row._tr))
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "row")):
        cell_set_text(tc, text)
    if before:
        tbl.findall(qn("w:tr"))[before - 1].addprevious(row._tr)


@operation("add_column")
def add_column(wd: WordDoc, target: dict, params: dict) -> None:
    """Columns.Add: one new cell at the end of every row (any number of rows); the unit's values
    fill them from the top."""
    tbl = wd.table(target["table"])
    proxy = wd.table_proxy(tbl)
    proxy.add_column(Twips(params.get("width", 1440)))
    cells = [list(T.row_cells(tr))[-1] for tr in tbl.findall(qn("w:tr"))]
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "column")):
        cell_set_text(tc, text)


@operation("delete_row")
def delete_row(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    rows = tbl.findall(qn("w:tr"))
    if not 1 <= target["row"] <= len(rows):
        raise PreconditionError(wd.locator, f"the table has {len(rows)} rows, no row {target['row']}")
    tbl.remove(rows[target["row"] - 1])


@operation("delete_column")
def delete_column(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    c = target["column"] - 1
    grid = tbl.find(qn("w:tblGrid"))
    cols = grid.findall(qn("w:gridCol")) if grid is not None else []
    rows = [list(T.row_cells(tr)) for tr in tbl.findall(qn("w:tr"))]
    if not 0 <= c < len(cols):
        raise PreconditionError(wd.locator, f"the table has {len(cols)} grid columns, no column {c + 1}")
    # Word refuses Columns(n) on a table whose rows do not each have one cell per grid column
    # ("mixed cell widths": merged or skipped grid columns)
    ragged = [i + 1 for i, cells in enumerate(rows) if len(cells) != len(cols) or any(_span(tc) > 1 for tc in cells)]
    if ragged:
        raise PreconditionError(wd.locator, f"row {ragged[0]} of the table does not have one cell per grid column "
                                            "(mixed cell widths): its columns cannot be deleted one by one")
    for cells in rows:
        cells[c].getparent().remove(cells[c])
    grid.remove(cols[c])


@operation("merge_cells")
def merge_cells(wd: WordDoc, target: dict, params: dict) -> None:
    proxy = wd.table_proxy(wd.table(target["table"]))
    (r1, c1), (r2, c2) = params["from"], params["to"]
    for r, c in ((r1, c1), (r2, c2)):
        cells_for(wd, {**target, "cell": [r, c]})   # a precondition error when the table is smaller
    proxy.cell(r1 - 1, c1 - 1).merge(proxy.cell(r2 - 1, c2 - 1))


@operation("set_cell_text")
def set_cell_text(wd: WordDoc, target: dict, params: dict) -> None:
    for tc in cells_for(wd, target):
        cell_set_text(tc, params["text"])


def _set_twips(el, value) -> None:
    """A table measure (tblW, tblInd, tcW, cell margin) in twentieths of a point (w:type dxa)."""
    el.set(qn("w:w"), str(value))
    el.set(qn("w:type"), "dxa")


@operation("set_table_width")
def set_table_width(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    _set_twips(get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblW"), params["width"])


@operation("set_table_indent")
def set_table_indent(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    _set_twips(get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblInd"), params["indent"])


@operation("set_column_width")
def set_column_width(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    c = target["column"] - 1
    gc = tbl.find(qn("w:tblGrid")).findall(qn("w:gridCol"))[c]
    gc.set(qn("w:w"), str(params["width"]))
    for tr in tbl.findall(qn("w:tr")):
        tc = list(T.row_cells(tr))[c]
        _set_twips(get_or_add(get_or_add(tc, "w:tcPr"), "w:tcW"), params["width"])


@operation("set_row_height")
def set_row_height(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.table import WD_ROW_HEIGHT_RULE
    for _, row in scope_objects(wd, "row", target):
        row.height = Twips(params["height"])
        row.height_rule = getattr(WD_ROW_HEIGHT_RULE, params.get("rule", "AT_LEAST"))


@operation("set_table_borders")
def set_table_borders(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    borders = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblBorders")
    for c in list(borders):
        borders.remove(c)
    for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
        insert_child(borders, border_el("w:" + side, params.get("style", "single"), params.get("size", 4),
                                      params.get("color", "auto"), 0))


@operation("set_cell_margins")
def set_cell_margins(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    mar = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblCellMar")
    for side in params.get("sides", ["left", "right"]):
        _set_twips(get_or_add(mar, "w:" + side), params["margin"])


@operation("set_table_look")
def set_table_look(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    look = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblLook")
    bits = {"firstRow": 0x20, "lastRow": 0x40, "firstColumn": 0x80, "lastColumn": 0x100, "noHBand": 0x200,
            "noVBand": 0x400}
    cur = {}
    v = look.get(qn("w:val"))
    n = int(v, 16) if v and re.fullmatch(r"[0-9A-Fa-f]{4}", v) else 0x04A0
    for k, b in bits.items():
        a = look.get(qn("w:" + k))
        cur[k] = (a in ("1", "true")) if a is not None else bool(n & b)
    cur.update(params["flags"])
    n = sum(b for k, b in bits.items() if cur[k])
    look.set(qn("w:val"), f"{n:04X}")
    for k in bits:
        look.set(qn("w:" + k), "1" if cur[k] else "0")


@operation("delete_table")
def delete_table(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    tbl.getparent().remove(tbl)


@operation("convert_table_to_text")
def convert_table_to_text(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    sep = params.get("separator", "\t")
    anchor = tbl
    for tr in tbl.findall(qn("w:tr")):
        texts = [" ".join(T.paragraph_read_text(p) for p in tc.iter(qn("w:p"))) for tc in T.row_cells(tr)]
        p = w_el("w:p")
        p.append(make_run(sep.join(texts)))
        anchor.addnext(p)
        anchor = p
    tbl.getparent().remove(tbl)


def _grid_start(tc) -> int:
    """Index of the first grid column ``tc`` covers (sum of the spans of the cells before it)."""
    start = 0
    for sib in T.row_cells(tc.getparent()):
        if sib is tc:
            return start
        start += _span(sib)
    raise ValueError("cell not in its row")


def _span(tc) -> int:
    gs = tc.find(qn("w:tcPr") + "/" + qn("w:gridSpan"))
    return int(gs.get(qn("w:val"))) if gs is not None else 1


def _set_span(wd: WordDoc, tc, n: int) -> None:
    tcpr = get_or_add(tc, "w:tcPr")
    gs = tcpr.find(qn("w:gridSpan"))
    if n == 1:
        if gs is not None:
            tcpr.remove(gs)
        return
    get_or_add(tcpr, "w:gridSpan").set(qn("w:val"), str(n))


def _split_one(wd: WordDoc, tbl, tc, n: int) -> None:
    """Cell.Split(NumRows:=1, NumColumns:=n) on one cell: its grid column becomes n columns of
    equal width; the cell becomes n cells (the first keeps the content, the others get an empty
    paragraph with the same paragraph properties); every other row's cell over that column spans
    the n new columns, so the rest of the table keeps its layout."""
    if _span(tc) != 1:
        raise PreconditionError(wd.locator, "the cell spans several grid columns (split the merged cell instead)")
    tcpr = tc.find(qn("w:tcPr"))
    if tcpr is not None and tcpr.find(qn("w:vMerge")) is not None:
        raise PreconditionError(wd.locator, "the cell is part of a vertical merge")
    col = _grid_start(tc)
    grid = tbl.find(qn("w:tblGrid"))
    cols = grid.findall(qn("w:gridCol"))
    width = int(cols[col].get(qn("w:w")) or 0)
    parts = [width // n + (1 if i < width % n else 0) for i in range(n)]
    cols[col].set(qn("w:w"), str(parts[0]))
    for w in reversed(parts[1:]):
        new_col = copy.deepcopy(cols[col])
        new_col.set(qn("w:w"), str(w))
        cols[col].addnext(new_col)
    for tr in tbl.findall(qn("w:tr")):
        if tr is tc.getparent():
            continue
        pos = 0
        for other in T.row_cells(tr):
            span = _span(other)
            if pos <= col < pos + span:
                _set_span(wd, other, span + n - 1)
                break
            pos += span
    tcw = tc.find(qn("w:tcPr") + "/" + qn("w:tcW")) if tcpr is not None else None
    if tcw is not None and (tcw.get(qn("w:type")) or "dxa") == "dxa":
        tcw.set(qn("w:w"), str(parts[0]))
    first_p = tc.find(qn("w:p"))
    for w in reversed(parts[1:]):
        new_tc = w_el("w:tc")
        if tcpr is not None:
            new_pr = copy.deepcopy(tcpr)
            new_tc.append(new_pr)
            nw = new_pr.find(qn("w:tcW"))
            if nw is not None and (nw.get(qn("w:type")) or "dxa") == "dxa":
                nw.set(qn("w:w"), str(w))
        p = w_el("w:p")
        ppr = first_p.find(qn("w:pPr")) if first_p is not None else None
        if ppr is not None:
            p.append(copy.deepcopy(ppr))
        new_tc.append(p)
        tc.addnext(new_tc)


@operation("split_cells")
def split_cells(wd: WordDoc, target: dict, params: dict) -> None:
    """Cell.Split / Cells.Split into ``columns`` columns (one row), right to left so the grid
    positions of the cells still to split do not move."""
    tbl = wd.table(target["table"])
    n = int(params["columns"])
    cells = cells_for(wd, target)
    for tc in sorted(cells, key=_grid_start, reverse=True):
        _split_one(wd, tbl, tc, n)
