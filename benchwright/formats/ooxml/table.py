"""WordprocessingML table markup (``w:tbl``, ``w:tblPr``, ``w:tblGrid``, ``w:tr``, ``w:tc``) for what
python-docx's ``Table`` / ``_Cell`` proxies do not do: rows and cells as Word counts them (inside
content controls too), grid columns, spans, measures, borders, margins, the look flags, a cell split.
WordEval's table operations use python-docx's proxies and these, and the XML stays here, as
python-docx keeps its own in ``docx.oxml.table`` (``CT_Tbl``, ``CT_Tc``)."""
from __future__ import annotations

import copy
import re

from benchwright.formats.ooxml.elements import border_el, w_el
from benchwright.formats.ooxml.ns import qn
from benchwright.formats.ooxml.run import set_paragraph_text
from benchwright.formats.ooxml.schema_order import get_or_add, insert_child

_W_TC, _W_SDT, _W_SDTCONTENT, _W_CUSTOMXML = qn("w:tc"), qn("w:sdt"), qn("w:sdtContent"), qn("w:customXml")


def row_cells(tr):
    """The cells of row ``tr`` in order, those inside a row-level content control or custom XML included."""
    for c in tr:
        if c.tag == _W_TC:
            yield c
        elif c.tag in (_W_SDT, _W_CUSTOMXML):
            content = c.find(_W_SDTCONTENT) if c.tag == _W_SDT else c
            if content is not None:
                yield from (x for x in content if x.tag == _W_TC)


def rows(tbl) -> list:
    """The table's rows (``w:tr``), top to bottom."""
    return tbl.findall(qn("w:tr"))


def cell_paragraphs(tc) -> list:
    """Every paragraph of cell ``tc``, those of nested tables included."""
    return list(tc.iter(qn("w:p")))


def set_cell_text(tc, text: str) -> None:
    """Cell.Range.Text: the cell's first paragraph holds ``text`` (keeping its first run's formatting);
    its other paragraphs go."""
    paras = tc.findall(qn("w:p"))
    if not paras:
        p = w_el("w:p")
        tc.append(p)
        paras = [p]
    set_paragraph_text(paras[0], text)
    for extra in paras[1:]:
        tc.remove(extra)


def move_row_before(tbl, tr, index: int) -> None:
    """Move row ``tr`` before the table's row ``index`` (1-based)."""
    rows(tbl)[index - 1].addprevious(tr)


def delete_row(tbl, index: int) -> None:
    """Rows(index).Delete (1-based)."""
    tbl.remove(rows(tbl)[index - 1])


def grid_columns(tbl) -> list:
    """The table's grid columns (``w:tblGrid/w:gridCol``); none when it has no grid."""
    grid = tbl.find(qn("w:tblGrid"))
    return grid.findall(qn("w:gridCol")) if grid is not None else []


def span(tc) -> int:
    """How many grid columns cell ``tc`` spans (``w:gridSpan``)."""
    gs = tc.find(qn("w:tcPr") + "/" + qn("w:gridSpan"))
    return int(gs.get(qn("w:val"))) if gs is not None else 1


def grid_start(tc) -> int:
    """Index of the first grid column ``tc`` covers (sum of the spans of the cells before it)."""
    start = 0
    for sib in row_cells(tc.getparent()):
        if sib is tc:
            return start
        start += span(sib)
    raise ValueError("cell not in its row")


def set_span(tc, n: int) -> None:
    """Cell ``tc`` spans ``n`` grid columns (no ``w:gridSpan`` for one)."""
    tcpr = get_or_add(tc, "w:tcPr")
    gs = tcpr.find(qn("w:gridSpan"))
    if n == 1:
        if gs is not None:
            tcpr.remove(gs)
        return
    get_or_add(tcpr, "w:gridSpan").set(qn("w:val"), str(n))


def in_vertical_merge(tc) -> bool:
    """Whether cell ``tc`` is part of a vertical merge (``w:vMerge``)."""
    tcpr = tc.find(qn("w:tcPr"))
    return tcpr is not None and tcpr.find(qn("w:vMerge")) is not None


def delete_column(tbl, row_cell_lists: list, c: int) -> None:
    """Columns(c + 1).Delete on a table with one cell per grid column in every row: each row's cell
    ``c`` and grid column ``c`` go."""
    for cells in row_cell_lists:
        cells[c].getparent().remove(cells[c])
    grid = tbl.find(qn("w:tblGrid"))
    grid.remove(grid.findall(qn("w:gridCol"))[c])


def _set_twips(el, value) -> None:
    """A table measure (tblW, tblInd, tcW, cell margin) in twentieths of a point (w:type dxa)."""
    el.set(qn("w:w"), str(value))
    el.set(qn("w:type"), "dxa")


def set_table_measure(tbl, tag: str, value) -> None:
    """``w:tblPr``'s ``tag`` (``w:tblW`` the width, ``w:tblInd`` the indent) in twips."""
    _set_twips(get_or_add(get_or_add(tbl, "w:tblPr"), tag), value)


def set_column_width(tbl, c: int, width) -> None:
    """Columns(c + 1).Width: grid column ``c`` and the width of each row's cell ``c``, in twips."""
    gc = tbl.find(qn("w:tblGrid")).findall(qn("w:gridCol"))[c]
    gc.set(qn("w:w"), str(width))
    for tr in tbl.findall(qn("w:tr")):
        tc = list(row_cells(tr))[c]
        _set_twips(get_or_add(get_or_add(tc, "w:tcPr"), "w:tcW"), width)


def set_borders(tbl, style: str, size: int, color: str) -> None:
    """Table.Borders: ``w:tblBorders`` becomes the six edges (outside and inside) with this line."""
    borders = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblBorders")
    for c in list(borders):
        borders.remove(c)
    for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
        insert_child(borders, border_el("w:" + side, style, size, color, 0))


def set_cell_margins(tbl, sides, margin) -> None:
    """The table's default cell margins (``w:tblCellMar``) on ``sides``, in twips."""
    mar = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblCellMar")
    for side in sides:
        _set_twips(get_or_add(mar, "w:" + side), margin)


LOOK_BITS = {"firstRow": 0x20, "lastRow": 0x40, "firstColumn": 0x80, "lastColumn": 0x100, "noHBand": 0x200,
             "noVBand": 0x400}


def set_look(tbl, flags: dict) -> None:
    """``w:tblLook``: the conditional-formatting flags (first row, banding ...) changed by ``flags``, written
    both as the attributes and as the hexadecimal ``w:val`` older readers use."""
    look = get_or_add(get_or_add(tbl, "w:tblPr"), "w:tblLook")
    cur = {}
    v = look.get(qn("w:val"))
    n = int(v, 16) if v and re.fullmatch(r"[0-9A-Fa-f]{4}", v) else 0x04A0
    for k, b in LOOK_BITS.items():
        a = look.get(qn("w:" + k))
        cur[k] = (a in ("1", "true")) if a is not None else bool(n & b)
    cur.update(flags)
    n = sum(b for k, b in LOOK_BITS.items() if cur[k])
    look.set(qn("w:val"), f"{n:04X}")
    for k in LOOK_BITS:
        look.set(qn("w:" + k), "1" if cur[k] else "0")


def replace_by_paragraphs(tbl, paragraph_runs: list) -> None:
    """The table is replaced, in place, by one paragraph per entry of ``paragraph_runs`` holding that run."""
    anchor = tbl
    for run in paragraph_runs:
        p = w_el("w:p")
        p.append(run)
        anchor.addnext(p)
        anchor = p
    tbl.getparent().remove(tbl)


def split_cell(tbl, tc, n: int) -> None:
    """Cell.Split(NumRows:=1, NumColumns:=n) on a cell spanning one grid column, outside a vertical merge:
    its grid column becomes n columns of equal width; the cell becomes n cells (the first keeps the
    content, the others get an empty paragraph with the same paragraph properties); every other row's
    cell over that column spans the n new columns, so the rest of the table keeps its layout."""
    tcpr = tc.find(qn("w:tcPr"))
    col = grid_start(tc)
    cols = tbl.find(qn("w:tblGrid")).findall(qn("w:gridCol"))
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
        for other in row_cells(tr):
            other_span = span(other)
            if pos <= col < pos + other_span:
                set_span(other, other_span + n - 1)
                break
            pos += other_span
    tcw = tc.find(qn("w:tcPr") + "/" + qn("w:tcW")) if tcpr is not None else None
    if tcw is not None and (tcw.get(qn("w:type")) or "dxa") == "dxa":
        tcw.set(qn("w:w"), str(parts[0]))
    _add_split_cells(tc, tcpr, parts[1:])


def _add_split_cells(tc, tcpr, widths: list) -> None:
    """After ``tc``, one new cell per width (right to left): a copy of its properties with that width,
    an empty paragraph with its first paragraph's properties."""
    first_p = tc.find(qn("w:p"))
    for w in reversed(widths):
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


__all__ = ["row_cells", "rows", "cell_paragraphs", "set_cell_text", "move_row_before", "delete_row", "grid_columns",
           "span", "grid_start", "set_span", "in_vertical_merge", "delete_column", "set_table_measure",
           "set_column_width", "set_borders", "set_cell_margins", "LOOK_BITS", "set_look", "replace_by_paragraphs",
           "split_cell"]
