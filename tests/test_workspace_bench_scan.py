"""Workspace-Bench scanner: listing a workspace safely (links, loops, unreadable and undecodable
names, special files, size bound), describing files from their bytes (magika with the extension
breaking ties, text as a reader sees it), and refusing zip bombs from the central directory."""
from __future__ import annotations

import hashlib
import io
import os
import zipfile

import docx
import nbformat
import openpyxl
import pptx
import pytest
from fpdf import FPDF

from benchwright.errors import RecordError
from benchwright.schemas.workspace_bench import FILES, TEXT_EXCERPT_CHARS
from benchwright.workspace_bench import scan
from benchwright.workspace_bench.extract_archive import Limits, check_archive


def _write(path, data: bytes | str = b"x\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def _reasons(problems) -> dict[str, str]:
    return {p["path"]: p["reason"] for p in problems}


@pytest.fixture
def hostile(tmp_path):
    """A workspace with every kind of entry the walk must refuse, beside ordinary files."""
    ws = tmp_path / "ws"
    outside = _write(tmp_path / "secret.txt", "outside the workspace\n")
    _write(ws / "a.txt", "alpha\n")
    _write(ws / "sub" / "b.md", "# b\n")
    _write(ws / "big.bin", b"\0" * 5000)
    os.symlink("sub/b.md", ws / "link_to_b")                  # inside: listed at the link's path
    os.symlink(outside, ws / "escape")                        # outside: refused
    os.symlink("../../secret.txt", ws / "sub" / "escape_rel")
    os.symlink("loop_b", ws / "loop_a")
    os.symlink("loop_a", ws / "loop_b")
    os.symlink("..", ws / "sub" / "up")                       # a folder loop
    os.symlink("sub", ws / "sub_alias")                       # a folder inside: not followed
    os.symlink("missing.txt", ws / "dangling")
    os.mkfifo(ws / "pipe")
    with open(os.path.join(os.fsencode(ws), b"bad\xffname.txt"), "wb") as fh:
        fh.write(b"undecodable name\n")
    _write(ws / "locked.txt", "no reading\n")
    _write(ws / "closed" / "inner.txt", "behind a locked folder\n")
    return ws


def test_list_workspace_refuses_every_hostile_entry_and_lists_the_rest(hostile, monkeypatch):
    locked, closed = os.fsencode(hostile / "locked.txt"), os.fsencode(hostile / "closed")
    if os.geteuid() == 0:
        # root reads a chmod-000 file anyway: make the operating system's refusal happen where
        # the walk asks for it (opening the file, listing the folder)
        real_check, real_scandir = scan._check_readable, os.scandir

        def check(path):
            if path == locked:
                raise PermissionError(13, "Permission denied")
            return real_check(path)

        def scandir(path):
            if path == closed:
                raise PermissionError(13, "Permission denied")
            return real_scandir(path)

        monkeypatch.setattr(scan, "_check_readable", check)
        monkeypatch.setattr(scan.os, "scandir", scandir)
    else:
        os.chmod(locked, 0)
        os.chmod(closed, 0)
    try:
        entries, problems = scan.list_workspace(str(hostile), Limits(max_file_bytes=1000))
    finally:
        os.chmod(locked, 0o644)
        os.chmod(closed, 0o755)

    assert [e["path"] for e in entries] == ["a.txt", "link_to_b", "sub/b.md"]
    link = next(e for e in entries if e["path"] == "link_to_b")
    assert link["link_target"] == "sub/b.md" and link["url"].endswith(os.path.join("sub", "b.md"))
    assert scan.read_entry(link) == b"# b\n"
    reasons = _reasons(problems)
    assert set(reasons) == {"big.bin", "escape", "sub/escape_rel", "loop_a", "loop_b", "sub/up", "sub_alias",
                            "dangling", "pipe", "bad\\xffname.txt", "locked.txt", "closed"}
    assert "over the 1000-byte bound" in reasons["big.bin"]
    assert "outside the workspace" in reasons["escape"] and "outside the workspace" in reasons["sub/escape_rel"]
    assert "symlink loop" in reasons["loop_a"] and "symlink loop" in reasons["loop_b"]
    assert "symlink loop" in reasons["sub/up"]
    assert "not followed" in reasons["sub_alias"]
    assert "dangling" in reasons["dangling"]
    assert "fifo" in reasons["pipe"]
    assert "UTF-8" in reasons["bad\\xffname.txt"]
    assert "unreadable file" in reasons["locked.txt"]
    assert "unreadable directory" in reasons["closed"]
    assert [p["path"] for p in problems] == sorted(reasons)


def test_list_workspace_bounds_depth_and_reads_object_storage_alike(tmp_path):
    deep = tmp_path / "ws" / "a" / "b" / "c"
    _write(deep / "leaf.txt", "deep\n")
    _write(tmp_path / "ws" / "top.txt", "top\n")
    entries, problems = scan.list_workspace(str(tmp_path / "ws"), Limits(max_path_depth=2))
    assert [e["path"] for e in entries] == ["top.txt"]
    assert _reasons(problems) == {"a/b/c": "path is deeper than 2 folders (not descended)"}

    import fsspec
    fs = fsspec.filesystem("memory")
    fs.pipe({"/wb/ws/x/one.csv": b"a,b\n1,2\n", "/wb/ws/two.md": b"# two\n", "/wb/ws/huge.bin": b"0" * 50})
    entries, problems = scan.list_workspace("memory://wb/ws", Limits(max_file_bytes=20))
    assert [e["path"] for e in entries] == ["two.md", "x/one.csv"]
    assert scan.read_entry(entries[1]) == b"a,b\n1,2\n"
    assert list(_reasons(problems)) == ["huge.bin"]


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, date_time=(2024, 1, 1, 0, 0, 0)), data,
                        compress_type=zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def test_zip_bombs_are_refused_from_the_central_directory_before_any_inflation(tmp_path, monkeypatch):
    zeros = b"\0" * (1 << 20)
    ratio_bomb = _zip({f"part{i:03d}.bin": zeros for i in range(40)})      # 40 MiB from about 40 KiB
    many = _zip({f"m{i:05d}.txt": b"" for i in range(2100)})
    spread = _zip({f"p{i}.txt": os.urandom(4096) for i in range(8)})       # incompressible, 32 KiB
    _write(tmp_path / "ws" / "bomb.zip", ratio_bomb)
    _write(tmp_path / "ws" / "bomb.docx", ratio_bomb)
    _write(tmp_path / "ws" / "notes.txt", "the rest is scanned\n")

    def refuse(*args, **kwargs):
        raise AssertionError("a member was opened")

    monkeypatch.setattr(zipfile.ZipFile, "open", refuse)
    with pytest.raises(RecordError, match="zip bomb: member 'part000.bin' expands"):
        check_archive(ratio_bomb, "bomb.zip")
    with pytest.raises(RecordError, match="2100 members"):
        check_archive(many, "many.zip", Limits(max_archive_members=2000))
    with pytest.raises(RecordError, match="expand to 32768 bytes"):
        check_archive(spread, "spread.zip", Limits(max_archive_expanded_bytes=30_000))
    check_archive(spread, "spread.zip").close()

    entries, problems = scan.list_workspace(str(tmp_path / "ws"))
    assert problems == []
    rows, refused = [], {}
    for entry in entries:
        try:
            rows.append(scan.scan_file(scan.read_entry(entry), entry["path"]))
        except RecordError as err:
            refused[err.locator] = err.reason
    assert set(refused) == {"bomb.zip", "bomb.docx"} and all("zip bomb" in r for r in refused.values())
    assert [r["path"] for r in rows] == ["notes.txt"] and rows[0]["text_excerpt"] == "the rest is scanned\n"


def test_scan_file_reads_each_format_as_a_reader_sees_it():
    document = docx.Document()
    document.add_paragraph("Quarterly report for Cobalt Foods")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text, table.cell(1, 1).text = "region", "4,512"
    buf = io.BytesIO()
    document.save(buf)
    row = scan.scan_file(buf.getvalue(), "reports/q3.docx")
    assert (row["file_type"], row["magika_label"], row["is_text"], row["encoding"]) == ("docx", "docx", False, None)
    assert row["text_excerpt"] == "Quarterly report for Cobalt Foods\nregion\t\n\t4,512"
    assert "4512" in row["numbers"] and "Cobalt Foods" in row["entities"]

    book = openpyxl.Workbook()
    book.active.append(["sku", "qty"])
    book.active.append(["A-1", 12])
    book.active["C2"] = "=B2*2"
    buf = io.BytesIO()
    book.save(buf)
    row = scan.scan_file(buf.getvalue(), "stock.xlsx")
    assert row["file_type"] == "xlsx" and row["text_excerpt"] == "Sheet\nsku\tqty\nA-1\t12\t=B2*2"

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Launch plan"
    slide.placeholders[1].text = "Owner: Dana"
    buf = io.BytesIO()
    deck.save(buf)
    row = scan.scan_file(buf.getvalue(), "deck.pptx")
    assert row["file_type"] == "pptx" and row["text_excerpt"] == "Launch plan\nOwner: Dana"

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Invoice total 7,890")
    row = scan.scan_file(bytes(pdf.output()), "invoice.pdf")
    assert row["file_type"] == "pdf" and row["text_excerpt"] == "Invoice total 7,890"

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                         nbformat.v4.new_code_cell("x = 1")])
    row = scan.scan_file(nbformat.writes(nb).encode(), "n.ipynb")
    assert (row["file_type"], row["is_text"], row["text_excerpt"]) == ("ipynb", True, "# Title\n\nx = 1")

    html = b"<html><head><style>p{}</style><script>var hidden = 1;</script></head><body><p>Hello <b>world</b></p></body></html>"
    assert scan.scan_file(html, "page.html")["text_excerpt"] == "Hello world"

    text = "caf\u00e9 ol\u00e9\nsecond line here"
    row = scan.scan_file(text.encode("utf-16"), "notes.txt")
    assert (row["encoding"], row["text_excerpt"], row["line_count"], row["word_count"]) == ("utf-16", text, 2, 5)
    long = ("word " * 2000).encode()
    row = scan.scan_file(long, "long.txt")
    assert len(row["text_excerpt"]) == TEXT_EXCERPT_CHARS and row["word_count"] == 2000 and row["size"] == len(long)


def test_scan_file_row_fits_the_files_features_and_is_deterministic():
    data = b"import os\n\nprint(os.getcwd())\n" * 20
    first, second = scan.scan_file(data, "tool/run.py"), scan.scan_file(data, "tool/run.py")
    assert first == second
    assert set(FILES) - set(first) == {"file_id", "workspace", "task_id", "link_target"}  # the listing's and the pipeline's
    assert first["sha256"] == hashlib.sha256(data).hexdigest()
    assert (first["file_type"], first["line_count"], first["word_count"]) == ("python", 60, 60)


def test_file_type_rule_magika_first_extension_breaks_ties():
    # magika's label wins when it is specific
    assert scan.decide_file_type("pdf", False, "txt") == ("pdf", "magika")
    # generic or low-confidence label: the extension's type, when it is text as the bytes are
    assert scan.decide_file_type("txt", False, "md") == ("markdown", "extension")
    assert scan.decide_file_type("txt", False, "csv") == ("csv", "extension")
    assert scan.decide_file_type("javascript", True, "py") == ("python", "extension")
    assert scan.decide_file_type("unknown", False, "py") == ("unknown", "magika")
    # the container's label hides the specific format
    assert scan.decide_file_type("zip", False, "xlsx") == ("xlsx", "extension")
    assert scan.decide_file_type("json", False, "ipynb") == ("ipynb", "extension")
    assert scan.decide_file_type("javascript", False, "ts") == ("typescript", "extension")
    # no known extension: magika
    assert scan.decide_file_type("python", False, "") == ("python", "magika")
    # sibling text formats: an unsure text label loses to the declared text extension, a sure one wins
    assert scan.decide_file_type("toml", False, "ini", 0.53) == ("ini", "extension")
    assert scan.decide_file_type("toml", False, "ini", 0.97) == ("toml", "magika")
    assert scan.decide_file_type("python", False, "pdf", 0.5) == ("python", "magika")  # pdf is not text
    # on real bytes: an empty Markdown file, a PDF named .txt, a short Markdown note magika calls txt
    assert scan.scan_file(b"", "empty.md")["file_type"] == "markdown"
    pdf = FPDF()
    pdf.add_page()
    assert scan.scan_file(bytes(pdf.output()), "really_a.txt")["file_type"] == "pdf"


def test_real_docx_files_scan_to_the_text_python_docx_reads(fixtures_dir):
    folder = fixtures_dir / "docx" / "python-docx"
    entries, problems = scan.list_workspace(str(folder))
    assert problems == [] and len(entries) == len(list(folder.iterdir()))
    checked = 0
    for entry in entries:
        data = scan.read_entry(entry)
        row = scan.scan_file(data, entry["path"])
        assert row["text_error"] is None, row
        if entry["path"].endswith(".docx"):
            assert row["file_type"] == "docx"
            document = docx.Document(io.BytesIO(data))
            for paragraph in document.paragraphs:
                assert paragraph.text in row["text_excerpt"] or len(row["text_excerpt"]) == TEXT_EXCERPT_CHARS
                checked += bool(paragraph.text)
            for table in document.tables:
                for table_row in table.rows:
                    for cell in table_row.cells:
                        for paragraph in cell.paragraphs:
                            assert paragraph.text in row["text_excerpt"]
        elif entry["path"].endswith((".jpg", ".jpeg", ".png", ".gif", ".bmp", ".tif")):
            assert not row["is_text"] and row["text_excerpt"] == "" and row["file_type"] != "unknown"
    assert checked > 75   # non-empty paragraphs compared
