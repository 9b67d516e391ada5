"""Errors that name the file and record at fault.

Every parser and check raises ``RecordError`` for bad input; the pipeline turns it
into a quarantine row (stage, locator, reason) instead of crashing the build.
"""
import re


class BenchwrightError(Exception):
    """Base class for errors benchwright reports to the user."""


class RecordError(BenchwrightError):
    """One input record is bad. ``locator`` names the file (and the record inside it)."""

    def __init__(self, locator: str, reason: str):
        super().__init__(f"{locator}: {reason}")
        self.locator = locator
        self.reason = reason

    def __reduce__(self):  # pickled with both arguments (the default passes only the message)
        return type(self), (self.locator, self.reason), self.__dict__


class BuildError(BenchwrightError):
    """The build as a whole cannot be published (counts do not reconcile, too many bad records, ...)."""


class SourceError(BenchwrightError):
    """The source cannot be read at all (missing, empty, entirely unreadable)."""


# --------------------------------------------------------------------------- reasons in words

MAX_REASON_BYTES = 1024  # a quarantine row's reason (and locator) at most; a 1 MB value quoted in one is cut

# What an exception type means for the record that raised it. A reason names what is wrong with the
# input in words; an exception's type name is how Python spells it, not what a dataset maintainer reads.
EXCEPTION_WORDS = {
    "KeyError": "missing key", "IndexError": "missing item", "TypeError": "wrong type",
    "ValueError": "invalid value", "OverflowError": "number out of range", "RecursionError": "nested too deeply",
    "MemoryError": "too large to hold in memory", "ZeroDivisionError": "division by zero",
    "AttributeError": "wrong type", "AssertionError": "failed a consistency check",
    "UnicodeDecodeError": "text not valid in its encoding", "UnicodeEncodeError": "text that cannot be encoded",
    "UnicodeError": "text not valid in its encoding", "EOFError": "ends too early", "StopIteration": "ends too early",
    "FileNotFoundError": "file not found", "IsADirectoryError": "a folder where a file is expected",
    "NotADirectoryError": "a file where a folder is expected", "PermissionError": "permission denied",
    "FileExistsError": "file exists already", "TimeoutError": "timed out", "OSError": "cannot read",
    "IOError": "cannot read", "NotImplementedError": "not supported", "RuntimeError": "failed",
    "JSONDecodeError": "malformed JSON", "BadZipFile": "not a zip archive", "ArrowInvalid": "a value does not fit its column",
    "ArrowTypeError": "a value of the wrong type for its column", "ArrowNotImplementedError": "not supported",
    "DecompressionBombError": "decompression bomb", "UnidentifiedImageError": "not an image",
}
# An exception's type name where a message puts one: at the start, or after ": ", "; " or "(", and
# followed by ":", ")" or the end (``f"{type(err).__name__}: {err}"``); a dotted module path is part of it.
_TYPE_NAME = re.compile(r"(^|: |; |\()((?:[a-z_][a-z0-9_]*\.)*([A-Z][A-Za-z0-9]*"
                        r"(?:Error|Exception|Warning|Invalid|ZipFile|Iteration|Interrupt|Exit)))(?=:|\)|$)")


def exception_words(name: str) -> str:
    """Words for an exception type's name: ``EXCEPTION_WORDS``, else its CamelCase split (``PdfReadError``
    is "pdf read error")."""
    if name in EXCEPTION_WORDS:
        return EXCEPTION_WORDS[name]
    return " ".join(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)) or name


def describe_exception(err: BaseException) -> str:
    """An unexpected exception as a reason: what it means in words, then its message."""
    words, message = exception_words(type(err).__name__), str(err)
    if not message:
        return words
    return f"{words} {message}" if isinstance(err, KeyError) else f"{words}: {message}"


def reason_in_words(text: str, limit: int = MAX_REASON_BYTES) -> str:
    """``text`` as a quarantine row holds it: every exception type name spelt in words
    (``exception_words``), and at most ``limit`` bytes of UTF-8 (cut on a character, saying how much
    was cut)."""
    if not isinstance(text, str):
        text = str(text)
    if "Error" in text or "Exception" in text or "Invalid" in text or "Warning" in text or "Zip" in text \
            or "Iteration" in text or "Exit" in text or "Interrupt" in text:
        text = _TYPE_NAME.sub(lambda m: m.group(1) + exception_words(m.group(3)), text)
    return clipped(text, limit)


def clipped(text: str, limit: int = MAX_REASON_BYTES) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8, on a character, ending with how many bytes were cut."""
    if len(text) * 4 <= limit:
        return text
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    suffix_room = 40
    head = data[:limit - suffix_room].decode("utf-8", "ignore")
    cut = len(data) - len(head.encode("utf-8", "surrogatepass"))
    return f"{head}... ({cut:,} more bytes)"
