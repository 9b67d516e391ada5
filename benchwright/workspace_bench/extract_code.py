"""References written in code: Python (``ast``), notebooks (code cells through IPython's own input
transformer, then ``ast``; Markdown cells as Markdown), JavaScript / TypeScript imports, shell
``source``, SQL includes, LaTeX inputs, graphics and bibliographies, CSS imports and ``url()``.

Nothing is executed: Python is only parsed. JavaScript, shell, SQL, LaTeX and CSS have no parser in
the environment; their reference forms are lexical (a statement keyword and a quoted string, a
command and its argument), matched after comments are blanked out, line by line where the language
is line-oriented.
"""
from __future__ import annotations

import ast
import posixpath
import re
import shlex
import sys

from benchwright.errors import RecordError
from benchwright.workspace_bench.extract_common import (Unparsable, is_url, line_containing, looks_like_path, ref,
                                                        web_path)

# Calls whose path argument names a file read or written: builtins, pathlib, pandas, numpy, imaging,
# Office and PDF libraries. Any constant they are given is a path.
_PATH_CALLS = frozenset({
    "open", "Path", "PurePath", "PosixPath", "WindowsPath", "read_csv", "read_table", "read_excel", "read_json",
    "read_parquet", "read_feather", "read_pickle", "read_html", "read_xml", "read_fwf", "read_hdf", "read_orc",
    "read_stata", "read_sas", "read_spss", "ExcelFile", "ExcelWriter", "HDFStore", "to_csv", "to_excel",
    "to_json", "to_parquet", "to_feather", "to_pickle", "to_html", "to_xml", "to_markdown", "to_latex",
    "to_hdf", "to_stata", "loadtxt", "genfromtxt", "fromfile", "savez", "savez_compressed", "savetxt", "memmap",
    "imread", "imwrite", "imsave", "savefig", "load_workbook", "Document", "Presentation", "PdfReader",
    "ZipFile", "read_text", "read_bytes", "write_text", "write_bytes", "copyfile", "copy2", "copytree"})
# Common method names that take a path among other things (str.replace, json.load, sqlite3.connect,
# np.save, shutil.move): their constant is a path only when it looks like one.
_MAYBE_PATH_CALLS = frozenset({
    "load", "save", "connect", "copy", "move", "rename", "replace", "exists", "isfile", "remove", "unlink",
    "listdir", "glob", "parse", "read", "read_file", "read_sql", "load_dataset", "from_file", "Workbook",
    "PdfWriter", "TarFile", "isdir", "makedirs", "mkdir", "getsize", "stat"})
_TWO_PATH_CALLS = frozenset({"copy", "copy2", "copyfile", "copytree", "move", "rename", "replace"})
_PATH_KEYWORDS = frozenset({"path", "filepath", "filepath_or_buffer", "path_or_buf", "path_or_buffer", "fname",
                            "filename", "file", "io", "excel_writer", "fp", "src", "dst", "database", "stream",
                            "data_files", "data_dir", "f"})
_JS_EXTENSIONS = (".js", ".ts", ".tsx", ".jsx", ".mjs", ".cjs", ".json", ".vue", ".svelte")
_JS_INDEXES = ("/index.js", "/index.ts", "/index.tsx", "/index.jsx", "/index.mjs")
_JS_STRINGS_AND_COMMENTS = re.compile(
    r"""("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`)|(//[^\n]*|/\*.*?\*/)""", re.S)
_JS_IMPORTS = (
    re.compile(r"""\bimport\s+(?:type\s+)?(?:[\w$*{}\s,]+?\s+from\s+)?(["'])([^"'\n]+)\1"""),
    re.compile(r"""\bexport\s+(?:type\s+)?[\w$*{}\s,]+?\s+from\s+(["'])([^"'\n]+)\1"""),
    re.compile(r"""\brequire\s*\(\s*(["'])([^"'\n]+)\1\s*\)"""),
    re.compile(r"""\bimport\s*\(\s*(["'])([^"'\n]+)\1\s*\)"""),
)
_SHELL_SOURCE = frozenset({"source", "."})
_SHELL_RUNNERS = frozenset({"bash", "sh", "zsh", "ksh", "dash", "python", "python3", "Rscript", "node", "perl",
                            "ruby", "php", "pwsh", "deno", "bun", "tsx", "ts-node"})
# tokens after which the next word is a command
_SHELL_SEPARATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "{", "}", "then", "do", "else", "elif",
                               "if", "while", "until", "!", "time", "exec", "sudo", "nohup", "xargs", "env"})
_SHELL_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SQL_INCLUDES = (
    re.compile(r"^\s*\\(?:i|ir|include|include_relative)\s+('[^']+'|\S+)"),   # psql
    re.compile(r"^\s*source\s+('[^']+'|[^\s;]+)\s*;?\s*$", re.I),              # mysql
    re.compile(r"^\s*@@?\s*([^\s;]+)"),                                        # sqlplus
    re.compile(r"^\s*\.read\s+('[^']+'|\S+)"),                                 # sqlite3 shell
)
_SQL_STRING = re.compile(r"'((?:[^'\n]|'')+)'")
_TEX_COMMENT = re.compile(r"(?<!\\)%.*")
_TEX_OPT = r"(?:\s*\[[^\]]*\])*"
_TEX_GRAPHICS_EXTS = ("", ".pdf", ".png", ".jpg", ".jpeg", ".eps", ".svg", ".tif", ".tiff", ".gif")
_TEX_COMMANDS = (
    # command, pattern, edge type, variant suffixes
    ("input", re.compile(r"\\(input|include|subfile|subfileinclude)\s*\{([^}]+)\}"), "include", ("", ".tex")),
    ("includegraphics", re.compile(r"\\(includegraphics)\*?" + _TEX_OPT + r"\s*\{([^}]+)\}"), "image",
     _TEX_GRAPHICS_EXTS),
    ("includepdf", re.compile(r"\\(includepdf|lstinputlisting|verbatiminput|inputminted)" + _TEX_OPT
                              + r"(?:\s*\{[^}]*\})??\s*\{([^}]+)\}"), "include", ("",)),
    ("bibliography", re.compile(r"\\(bibliography|addbibresource|addglobalbib)" + _TEX_OPT + r"\s*\{([^}]+)\}"),
     "bibliography", ("", ".bib")),
    ("href", re.compile(r"\\(href)\s*\{([^}]+)\}"), "link", ("",)),
)
_TEX_IMPORT = re.compile(r"\\(?:sub)?(?:import|inputfrom|includefrom)\s*\{([^}]*)\}\s*\{([^}]+)\}")
_CSS_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\(\s*)?(["']?)([^"')\s;]+)\1""", re.I)
_CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')]+?)\1\s*\)""", re.I)


# --------------------------------------------------------------------------- Python

def _call_name(func) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _is_file_dunder(node) -> bool:
    if isinstance(node, ast.Name) and node.id == "__file__":
        return True
    # Path(__file__), Path(__file__).resolve(), os.path.abspath(__file__), os.path.realpath(__file__)
    if isinstance(node, ast.Call) and _call_name(node.func) in ("Path", "abspath", "realpath", "resolve", "absolute"):
        inner = node.args[0] if node.args else getattr(node.func, "value", None)
        return inner is not None and _is_file_dunder(inner)
    return False


class _Paths:
    """Constant path expressions: string literals, names bound once to one, os.path.join and pathlib
    joins of them, and the script's own folder (``Path(__file__).parent``, ``os.path.dirname(__file__)``)
    as '.'."""

    def __init__(self, nodes: list[ast.AST]):
        values: dict[str, set[str]] = {}
        self.names: dict[str, str] = {}
        for node in nodes:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            else:
                continue
            text = self.value(value)
            if text is not None:
                values.setdefault(target, set()).add(text)
        self.names = {name: next(iter(v)) for name, v in values.items() if len(v) == 1}

    def value(self, node) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and node.attr == "parent" and _is_file_dunder(node.value):
            return "."
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            left, right = self.value(node.left), self.value(node.right)
            return posixpath.join(left, right) if left is not None and right is not None else None
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name == "dirname" and len(node.args) == 1 and _is_file_dunder(node.args[0]):
                return "."
            if name in ("join", "Path", "PurePath", "joinpath") and node.args and not node.keywords:
                parts = [self.value(a) for a in node.args]
                if name == "joinpath":
                    parts.insert(0, self.value(node.func.value) if isinstance(node.func, ast.Attribute) else None)
                if all(p is not None for p in parts):
                    return posixpath.normpath(posixpath.join(*parts))
        return None


def _module_spellings(components: list[str]) -> list[str]:
    if not components:
        return ["__init__.py"]
    return ["/".join(components) + ".py", "/".join(components + ["__init__.py"])]


def _module_ref(module: str | None, level: int, name: str | None, src: str, evidence: str) -> dict:
    """``import a.b`` / ``from a import b`` / ``from ..a import b``: ``a/b.py`` or ``a/b/__init__.py``
    first (b may be a module), then ``a.py`` / ``a/__init__.py`` (b is a name inside a).

    An absolute import is looked up only where Python would find it: under the workspace's import
    roots (``deps.WorkspaceIndex.import_roots``), never by a bare file name anywhere (``from abc
    import ABC`` is not ``rich/abc.py``). A module of the standard library (``sys.stdlib_module_names``)
    is marked ``stdlib``: it is a workspace file only inside the workspace's own copy of that package
    (``email/mime/text.py`` importing ``email.mime.base``), never for a script beside a same-named file."""
    parts = module.split(".") if module else []
    full = parts + ([name] if name and name != "*" else [])
    spellings = list(dict.fromkeys(_module_spellings(full) + (_module_spellings(parts) if name else [])))
    reference = "." * level + ".".join(full)
    if level == 0:
        stdlib = bool(full) and full[0] in sys.stdlib_module_names
        return ref(reference, "import", "python.import", evidence, 1.0, variants=spellings, bare=False,
                   module="stdlib" if stdlib else "absolute")
    base = posixpath.dirname(src)
    for _ in range(level - 1):
        base = posixpath.dirname(base) if base else ".."
    return ref(reference, "import", "python.import", evidence, 1.0, variants=[],
               root_variants=[posixpath.normpath(posixpath.join(base, s)) for s in spellings], bare=False)


def python_references(source: str, path: str, extensions, rule_prefix: str = "") -> list[dict]:
    """Imports of modules (resolved later against the workspace), and path literals passed to a call
    that reads or writes a file; other string literals that look like paths are kept as speculative
    references (only when they resolve)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise Unparsable(f"{path}:{getattr(exc, 'lineno', None) or 0}", f"python does not parse: {exc}") from None
    except (RecursionError, MemoryError) as exc:  # nesting deeper than the parser's stack
        raise Unparsable(path, f"python does not parse: {type(exc).__name__}") from None
    lines = source.splitlines()

    def line(node) -> str:
        n = getattr(node, "lineno", 0)
        return lines[n - 1].strip() if 0 < n <= len(lines) else ""

    nodes = list(ast.walk(tree))   # walked once: the passes below reuse the list
    paths = _Paths(nodes)
    found: list[tuple[int, int, dict]] = []
    consumed: set[str] = set()   # path texts a call already gave: not repeated as string constants
    docstrings = {id(n.body[0].value) for n in nodes
                  if isinstance(n, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.body
                  and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    for node in nodes:
        at = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((*at, _module_ref(alias.name, 0, None, path, line(node))))
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                found.append((*at, _module_ref(node.module, node.level, alias.name, path, line(node))))
        elif isinstance(node, ast.Call) and _call_name(node.func) in _PATH_CALLS | _MAYBE_PATH_CALLS:
            name = _call_name(node.func)
            certain = name in _PATH_CALLS
            args = list(node.args[:2] if name in _TWO_PATH_CALLS else node.args[:1])
            args += [kw.value for kw in node.keywords if kw.arg in _PATH_KEYWORDS]
            for arg in args:
                text = paths.value(arg)
                if text is None or text in (".", "") or is_url(text) or "\n" in text or len(text) > 1024:
                    continue
                path_like = looks_like_path(text, extensions)
                if not (certain or path_like):
                    continue
                consumed.add(text)
                # a certain call's argument without a file extension (a folder, a Makefile) is kept
                # only when it names a workspace file
                found.append((*at, ref(text, "path_literal", f"python.call:{name}", line(node),
                                       0.95 if certain else 0.8, **({} if path_like else {"speculative": True}))))
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value not in consumed \
                and id(node) not in docstrings and looks_like_path(node.value, extensions):
            found.append((node.lineno, node.col_offset,
                          ref(node.value, "path_literal", "python.string_constant", line(node), 0.6, speculative=True)))
    found.sort(key=lambda t: (t[0], t[1]))
    out = [r for _, _, r in found]
    if rule_prefix:
        for r in out:
            r["rule"] = rule_prefix + r["rule"]
    return out


# --------------------------------------------------------------------------- notebooks

def notebook_references(text: str, path: str, extensions) -> list[dict]:
    """Code cells: IPython's input transformer turns magics and shell escapes into plain calls (nothing
    runs), then ``ast``; a cell that still does not parse is skipped. Markdown cells: their links."""
    from IPython.core.inputtransformer2 import TransformerManager

    from benchwright.workspace_bench.extract_markup import markdown_references
    from benchwright.workspace_bench.extract_text import notebook_cells

    try:
        cells = notebook_cells(text, path)
    except RecordError as exc:
        raise Unparsable(exc.locator, exc.reason) from None
    transformer = TransformerManager()
    out = []
    for kind, source in cells:
        if kind == "code":
            try:
                out += python_references(transformer.transform_cell(source), path, extensions, "ipynb:")
            except (Unparsable, SyntaxError, ValueError):
                continue
        elif kind == "markdown":
            for r in markdown_references(source, path):
                r["rule"] = "ipynb:" + r["rule"]
                out.append(r)
    return out


# --------------------------------------------------------------------------- JavaScript / TypeScript

def _blank_comments(text: str) -> str:
    """Comments replaced by spaces (newlines kept, so lines keep their numbers); strings untouched."""
    return _JS_STRINGS_AND_COMMENTS.sub(
        lambda m: m.group(1) or re.sub(r"[^\n]", " ", m.group(2)), text)


def js_references(text: str, path: str) -> list[dict]:
    """``import ... from 'x'``, ``export ... from 'x'``, ``require('x')``, ``import('x')``. A relative
    specifier is tried as written, with each module extension and as a folder's index; a package name
    (``react``) is kept, unresolved."""
    code = _blank_comments(text)
    found = []
    for pattern in _JS_IMPORTS:
        for m in pattern.finditer(code):
            spec = m.group(2)
            evidence = line_containing(text, m.group(0).split("\n")[0], m.group(0))
            if spec.startswith((".", "/")):
                variants = [spec] + [spec + e for e in _JS_EXTENSIONS] + [spec.rstrip("/") + i for i in _JS_INDEXES]
                found.append((m.start(), ref(spec, "import", "js.import", evidence, 1.0, variants=variants)))
            elif not is_url(spec):
                found.append((m.start(), ref(spec, "import", "js.import", evidence, 1.0, bare=False)))
    return [r for _, r in sorted(found, key=lambda t: t[0])]


# --------------------------------------------------------------------------- shell, SQL

def shell_references(text: str, path: str, extensions) -> list[dict]:
    """``source f`` / ``. f`` (include), a script run by an interpreter (``bash f``, ``python f``) or
    by its path (``./f.sh``) (include), and other arguments that look like paths (speculative)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
            lexer.whitespace_split = True
            tokens = list(lexer)
        except ValueError:  # an unbalanced quote: the line is not a complete command
            continue
        command, arguments = None, 0
        for token in tokens:
            if token in _SHELL_SEPARATORS or set(token) <= set(";&|()"):
                command, arguments = None, 0
                continue
            if command is None:
                if _SHELL_ASSIGNMENT.match(token):
                    continue
                command = token
                if token.startswith(("./", "../")) and len(token) > 2:
                    out.append(ref(token, "include", "shell.run", line, 0.9))
                continue
            if "$" in token or "`" in token or token.startswith("-"):
                continue
            arguments += 1
            if command in _SHELL_SOURCE and arguments == 1:
                out.append(ref(token, "include", "shell.source", line, 1.0))
            elif command in _SHELL_RUNNERS and arguments == 1:
                out.append(ref(token, "include", "shell.run", line, 0.9))
            elif looks_like_path(token, extensions):
                out.append(ref(token, "path_literal", "shell.argument", line, 0.6, speculative=True))
    return out


def sql_references(text: str, path: str, extensions) -> list[dict]:
    """Client includes (psql ``\\i``, mysql ``source``, sqlplus ``@``, sqlite ``.read``) and quoted
    strings that look like paths (``COPY ... FROM 'x.csv'``, ``read_csv('x.csv')``; speculative)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        matched = False
        for pattern in _SQL_INCLUDES:
            m = pattern.match(raw)
            if m:
                out.append(ref(m.group(1).strip("'"), "include", "sql.include", line, 1.0))
                matched = True
                break
        if matched or line.startswith("--"):
            continue
        for m in _SQL_STRING.finditer(raw.split("--", 1)[0]):
            value = m.group(1).replace("''", "'")
            if looks_like_path(value, extensions):
                out.append(ref(value, "path_literal", "sql.string", line, 0.6, speculative=True))
    return out


# --------------------------------------------------------------------------- LaTeX, CSS

def latex_references(text: str, path: str) -> list[dict]:
    """``\\input`` / ``\\include`` / ``\\subfile`` (+.tex), ``\\import{dir}{file}``, ``\\includegraphics``
    (+ each graphics extension), ``\\includepdf`` / ``\\lstinputlisting``, ``\\bibliography{a,b}`` (+.bib),
    ``\\addbibresource``, ``\\href`` to a file; comments are ignored."""
    out = []
    for raw in text.splitlines():
        line = _TEX_COMMENT.sub("", raw)
        if "\\" not in line:
            continue
        found = []
        for _, pattern, edge_type, suffixes in _TEX_COMMANDS:
            for m in pattern.finditer(line):
                command, argument = m.group(1), m.group(2)
                names = argument.split(",") if command in ("bibliography",) else [argument]
                for name in (n.strip() for n in names):
                    target = web_path(name) if edge_type == "link" else name
                    if not target:
                        continue
                    found.append((m.start(), ref(target, edge_type, f"latex.{command}", raw.strip(), 1.0,
                                                 variants=[target + s for s in suffixes])))
        for m in _TEX_IMPORT.finditer(line):
            target = posixpath.join(m.group(1).strip(), m.group(2).strip())
            found.append((m.start(), ref(target, "include", "latex.import", raw.strip(), 1.0,
                                         variants=[target, target + ".tex"])))
        out += [r for _, r in sorted(found, key=lambda t: t[0])]
    return out


def css_references(text: str, path: str) -> list[dict]:
    """``@import`` (include) and ``url(...)`` (image) outside comments."""
    code = _CSS_COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    found = []
    imported = set()
    for m in _CSS_IMPORT.finditer(code):
        target = web_path(m.group(2))
        imported.add(m.start(2))
        if target:
            found.append((m.start(), ref(target, "include", "css.import", line_containing(text, m.group(0)), 1.0)))
    for m in _CSS_URL.finditer(code):
        target = web_path(m.group(2))
        if target and m.start(2) not in imported:
            found.append((m.start(), ref(target, "image", "css.url", line_containing(text, m.group(0)), 0.9)))
    return [r for _, r in sorted(found, key=lambda t: t[0])]
