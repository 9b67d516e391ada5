"""What every reference extractor shares: the reference record, the error for a file that does not
parse, and the tests for "is this a URL" and "does this string look like a file path".

A reference is a dict ``{reference, edge_type, rule, evidence, confidence}`` plus optional lookup
hints that :func:`benchwright.workspace_bench.deps.resolve` reads and drops:

- ``variants``: the spellings to try, relative to the referring file's folder (default: the
  reference itself): ``chap1`` is also ``chap1.tex``, ``./util`` also ``./util.ts``;
- ``root_variants``: spellings to try from the workspace root (Python absolute and relative imports);
- ``bare``: whether the bare file name may be looked up anywhere in the workspace (default True);
- ``speculative``: a guess (a string value that looks like a path): kept only when it resolves;
- ``sha256``: the bytes of an embedded part, matched against the workspace's files when its name
  does not decide.
"""
from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit

from benchwright.errors import RecordError

URL_SCHEMES = ("http", "https", "ftp", "ftps", "mailto", "tel", "data", "javascript", "news", "irc", "ws",
               "wss", "ssh", "git", "s3", "gs", "sftp", "urn", "about", "chrome", "sms")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
# A task's data folder stores each file as data/<16 hex>_<name>.
STORED_PREFIX = re.compile(r"^[0-9a-f]{16}_")
# Extensions that are more often an internet domain than a file type when no folder is written.
_DOMAIN_TAILS = frozenset({"com", "net", "org", "edu", "gov", "io", "co", "uk", "de", "cn", "info"})


class Unparsable(RecordError):
    """The file does not parse as its type: it gives no references; ``reason`` says why. A pipeline
    may quarantine it or, since the file itself is kept, record it as filtered."""


def logical_name(name: str) -> str:
    """A stored task file's name without its ``<16 hex>_`` prefix (other names unchanged)."""
    return STORED_PREFIX.sub("", name, count=1)


def ref(reference: str, edge_type: str, rule: str, evidence: str, confidence: float, **hints) -> dict:
    return {"reference": reference, "edge_type": edge_type, "rule": rule, "evidence": evidence[:500],
            "confidence": float(confidence), **hints}


def is_url(text: str) -> bool:
    """An address outside the workspace: a scheme other than file: (a Windows drive is not a scheme),
    or a protocol-relative ``//host/...``."""
    text = text.strip()
    if text.startswith("//"):
        return True
    match = _SCHEME.match(text)
    return bool(match) and not _DRIVE.match(text) and match.group(1).lower() != "file" and (
        match.group(1).lower() in URL_SCHEMES or text[match.end():].startswith("//"))


def web_path(target: str) -> str | None:
    """A link target (Markdown, HTML, Office hyperlink, PDF URI) as a workspace path: None for a URL or
    a same-document anchor; otherwise percent-decoded, without query and fragment, ``file:`` URLs and
    Windows separators turned into a plain '/'-separated path."""
    target = target.strip()
    if not target or target.startswith("#") or is_url(target):
        return None
    if target.lower().startswith("file:"):
        parts = urlsplit(target)
        target = unquote(parts.path)
        if _DRIVE.match(target.lstrip("/")):
            target = target.lstrip("/")
    else:
        target = unquote(target.split("#", 1)[0].split("?", 1)[0])
    target = target.replace("\\", "/")
    return target or None


def looks_like_path(text: str, extensions) -> bool:
    """A short one-line string whose last component has a known file extension (``extensions``: a set
    of lower-case extensions), and that is not a URL; ``example.com`` without a folder is a domain."""
    text = text.strip()
    if not 1 <= len(text) <= 512 or "\n" in text or "\r" in text:
        return False
    name = posixpath.basename(text.replace("\\", "/"))
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or not ext or not ext.isalnum():
        return False
    ext = ext.lower()
    if "/" not in text and "\\" not in text and ext in _DOMAIN_TAILS:
        return False
    # the URL test last: most strings a scan meets (cells, words) have no known extension
    return ext in extensions and not is_url(text)


def line_containing(text: str, needle: str, default: str | None = None) -> str:
    """The first line of ``text`` containing ``needle`` (stripped), the evidence a reader can find."""
    at = text.find(needle) if needle else -1
    if at < 0:
        return default if default is not None else needle
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start:end if end >= 0 else len(text)].strip()
