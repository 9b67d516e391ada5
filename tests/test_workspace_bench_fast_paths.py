"""The scan's faster per-file code paths give exactly what the plain definitions give (issue 27: the
published rows stay byte-identical): the path test asks the cheap questions first, and the implicit rules'
patterns begin with a character the regex engine can skip to (the references below are the previous code)."""
from __future__ import annotations

import re

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


# the implicit rules' patterns as they were first written (a leading look-behind or word boundary)
_NUMBER_REFERENCE = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w])")
_ENTITY_REFERENCE = re.compile(r"\b[A-Z][a-z]+(?:[ \t]+[A-Z][a-z]+){1,3}\b")
_PROSE = st.lists(st.sampled_from(["1", "23", "4567", "12,345", "1,2", ",", ".", "-", "--", "-7", " ", "\t", "\n", "_",
                                   "a", "x", "Ana", "Moss", "Cobalt Foods", "A", "Bé", "Éva", "\u0663", "ß", "3.5.1",
                                   "(", ";"]), max_size=60).map("".join)


@settings(max_examples=500, deadline=None)
@given(_PROSE)
@example("a-123 -45 x-6,789.5 .5 5. 1,23 12,345,678 --9 -\u0663\u0664")
@example("Ana Moss and Cobalt Foods Ltd; xAna Moss, éAna Moss, Ana  Moss\tLee, _Ana Moss")
def test_the_implicit_rules_patterns_begin_with_a_character_and_match_as_before(text):
    from benchwright.workspace_bench import implicit

    assert [(m.start(), m.group(0)) for m in implicit._NUMBER.finditer(text)] == \
        [(m.start(), m.group(0)) for m in _NUMBER_REFERENCE.finditer(text)]
    assert [(m.start(), m.group(0)) for m in implicit._ENTITY.finditer(text)] == \
        [(m.start(), m.group(0)) for m in _ENTITY_REFERENCE.finditer(text)]
