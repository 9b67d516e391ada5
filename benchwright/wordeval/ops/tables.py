"""Operations of the tables units (``catalogue/units/05_tables.yaml``)."""
from __future__ import annotations

from docx.shared import Twips

from benchwright.formats.ooxml import table as oxml
from benchwright.formats.ooxml.elements import detach
from benchwright.formats.ooxml.run import insert_after
from benchwright.formats.ooxml.table import set_cell_text as cell_set_text
from benchwright.wordeval import text as T
from benchwright.wordeval.docmodel import PreconditionError, WordDoc, make_run
from benchwright.wordeval.ops.common import cells_for, operation, paragraphs_for, scope_objects


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
    insert_after(paragraphs_for(wd, target)[-1], table._tbl)


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
    n_rows = len(oxml.rows(tbl))
    before = params.get("before")
    if before and not 1 <= before <= n_rows:
        raise PreconditionError(wd.locator, f"the table has {n_rows} rows, no row {before} to insert before")
    row = proxy.add_row()
    cells = list(T.row_cells(row._tr))
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "row")):
        cell_set_text(tc, text)
    if before:
        oxml.move_row_before(tbl, row._tr, before)


@operation("add_column")
def add_column(wd: WordDoc, target: dict, params: dict) -> None:
    """Columns.Add: one new cell at the end of every row (any number of rows); the unit's values
    fill them from the top."""
    tbl = wd.table(target["table"])
    proxy = wd.table_proxy(tbl)
    proxy.add_column(Twips(params.get("width", 1440)))
    cells = [list(T.row_cells(tr))[-1] for tr in oxml.rows(tbl)]
    for tc, text in zip(cells, _fit_values(wd, params.get("cells"), len(cells), "column")):
        cell_set_text(tc, text)


@operation("delete_row")
def delete_row(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    n_rows = len(oxml.rows(tbl))
    if not 1 <= target["row"] <= n_rows:
        raise PreconditionError(wd.locator, f"the table has {n_rows} rows, no row {target['row']}")
    oxml.delete_row(tbl, target["row"])


@operation("delete_column")
def delete_column(wd: WordDoc, target: dict, params: dict) -> None:
    tbl = wd.table(target["table"])
    c = target["column"] - 1
    cols = oxml.grid_columns(tbl)
    rows = [list(T.row_cells(tr)) for tr in oxml.rows(tbl)]
    if not 0 <= c < len(cols):
        raise PreconditionError(wd.locator, f"the table has {len(cols)} grid columns, no column {c + 1}")
    # Word refuses Columns(n) on a table whose rows do not each have one cell per grid column
    # ("mixed cell widths": merged or skipped grid columns)
    ragged = [i + 1 for i, cells in enumerate(rows) if len(cells) != len(cols) or any(oxml.span(tc) > 1 for tc in cells)]
    if ragged:
        raise PreconditionError(wd.locator, f"row {ragged[0]} of the table does not have one cell per grid column "
                                            "(mixed cell widths): its columns cannot be deleted one by one")
    oxml.delete_column(tbl, rows, c)


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


@operation("set_table_width")
def set_table_width(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_table_measure(wd.table(target["table"]), "w:tblW", params["width"])


@operation("set_table_indent")
def set_table_indent(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_table_measure(wd.table(target["table"]), "w:tblInd", params["indent"])


@operation("set_column_width")
def set_column_width(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_column_width(wd.table(target["table"]), target["column"] - 1, params["width"])


@operation("set_row_height")
def set_row_height(wd: WordDoc, target: dict, params: dict) -> None:
    from docx.enum.table import WD_ROW_HEIGHT_RULE
    for _, row in scope_objects(wd, "row", target):
        row.height = Twips(params["height"])
        row.height_rule = getattr(WD_ROW_HEIGHT_RULE, params.get("rule", "AT_LEAST"))


@operation("set_table_borders")
def set_table_borders(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_borders(wd.table(target["table"]), params.get("style", "single"), params.get("size", 4),
                     params.get("color", "auto"))


@operation("set_cell_margins")
def set_cell_margins(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_cell_margins(wd.table(target["table"]), params.get("sides", ["left", "right"]), params["margin"])


@operation("set_table_look")
def set_table_look(wd: WordDoc, target: dict, params: dict) -> None:
    oxml.set_look(wd.table(target["table"]), params["flags"])


@operation("delete_table")
def delete_table(wd: WordDoc, target: dict, params: dict) -> None:
    detach(wd.table(target["table"]))


@operation("convert_table_to_text")
def convert_table_to_text(wd: WordDoc, target: dict, params: dict) -> None:
    """Table.ConvertToText: one paragraph per row, its cells' text joined by the separator."""
    tbl = wd.table(target["table"])
    sep = params.get("separator", "\t")
    lines = [sep.join(" ".join(T.paragraph_read_text(p) for p in oxml.cell_paragraphs(tc)) for tc in T.row_cells(tr))
             for tr in oxml.rows(tbl)]
    oxml.replace_by_paragraphs(tbl, [make_run(line) for line in lines])


def _split_one(wd: WordDoc, tbl, tc, n: int) -> None:
    """Cell.Split(NumRows:=1, NumColumns:=n) on one cell (:func:`benchwright.formats.ooxml.table.split_cell`)."""
    if oxml.span(tc) != 1:
        raise PreconditionError(wd.locator, "the cell spans several grid columns (split the merged cell instead)")
    if oxml.in_vertical_merge(tc):
        raise PreconditionError(wd.locator, "the cell is part of a vertical merge")
    oxml.split_cell(tbl, tc, n)


@operation("split_cells")
def split_cells(wd: WordDoc, target: dict, params: dict) -> None:
    """Cell.Split / Cells.Split into ``columns`` columns (one row), right to left so the grid
    positions of the cells still to split do not move."""
    tbl = wd.table(target["table"])
    n = int(params["columns"])
    cells = cells_for(wd, target)
    for tc in sorted(cells, key=oxml.grid_start, reverse=True):
        _split_one(wd, tbl, tc, n)
