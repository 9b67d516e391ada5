"""The scan's faster per-file code paths give exactly what the plain definitions give (issue 27: the
published rows stay byte-identical): the path test asks the cheap questions first (the reference below
is the previous code)."""
from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchwright.workspace_bench.extract_common import is_url, looks_like_path


def looks_like_path_reference(text: str, extensions) -> bool:
    text = text.strip()
    if not 1 <= len(text) <= 512 or "\n" in text or "\r" in text or is_url(text):
        return False
    return looks_like_path(text, extensions)


# strings made of what the test reacts to: URLs, file names, domains, separators, numbers, words
_PIECES = st.sampled_from(["1", "23", "456", "7890", "12,345", "1,234,567", "3.50", "-42", "2024", "0.125", ",", ";",
                           "\t", "|", "\n", " ", "  ", ".", "a", "x1", "Cobalt", "Foods", "Ltd", "Ana Moss", "\u0663\u0664\u0665",
                           "data/q3.csv", "http://example.com/a.csv", "//host/x.png", "report.pdf", "C:/x/y.txt",
                           "example.com", "file:///tmp/a.md"])
_TEXT = st.lists(_PIECES, max_size=80).map("".join)


@settings(max_examples=300, deadline=None)
@given(_TEXT)
@example("http://example.com/a.csv")
@example("  //host/x.png ")
@example("file:///tmp/a.md")
def test_looks_like_path_asks_the_url_question_last_with_the_same_answer(text):
    extensions = frozenset({"csv", "png", "pdf", "txt", "md", "com"})
    assert looks_like_path(text, extensions) == looks_like_path_reference(text, extensions)
