"""YAML as sources are read: ``yaml.safe_load`` without aliases, without repeated keys, and no deeper than
``MAX_DEPTH`` levels.

- An alias is a reference, so nine nested lists of nine aliases (a few hundred bytes, the YAML "billion
  laughs") load into a small graph that anything walking it (a schema validator, ``copy.deepcopy``, a
  JSON dump) sees as 9^9 items and never finishes; a source file has no need for them.
- A key given twice in one mapping: PyYAML keeps the last value without a word (a property registry
  whose ``Font.Bold`` is given twice would publish the second entry's meaning), as ``json`` does.
- 100,000 nested brackets: the composer recurses once per level (``RecursionError``).

Every refusal is a ``yaml.YAMLError`` naming the line, like any YAML error."""
from __future__ import annotations

import io

import yaml

MAX_DEPTH = 100

# libyaml's parser when PyYAML has it (the wheels do): about 6x faster than the pure-Python one on the WordEval
# catalogue. Its composer is C, so the alias and depth refusals run first over its flat event stream. Whatever
# it refuses is read again by the pure-Python loader, which decides: the same values and the same messages as
# before (libyaml also refuses some text PyYAML reads, e.g. an escaped lone surrogate, which a source may hold).
_C = getattr(yaml, "CSafeLoader", None)


class _DuplicateKeys:
    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.setdefault(key, key_node)
                except TypeError:  # an unhashable key: the constructor names it
                    continue
                if first is not key_node:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicate key {key!r} (first at line {first.start_mark.line + 1})", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


class _StrictLoader(_DuplicateKeys, yaml.SafeLoader):
    """The pure-Python loader, refusing aliases and deep nesting as it composes."""
    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise _refusal(self.peek_event())
        if self._depth >= MAX_DEPTH:
            raise _refusal(self.peek_event())
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _refusal(event) -> yaml.YAMLError:
    if isinstance(event, yaml.AliasEvent):
        return yaml.composer.ComposerError(None, None, f"alias *{event.anchor} is not allowed (anchors and "
                                           "aliases are refused: a YAML alias bomb never finishes)", event.start_mark)
    return yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep", event.start_mark)


if _C is not None:
    class _StrictCLoader(_DuplicateKeys, _C):
        """libyaml's loader; ``_refuse`` has checked its events first."""


class _NamedText(io.StringIO):
    """Text read from a file, keeping the file's name for the messages (``in "<name>", line 3``)."""

    def __init__(self, text: str, name: str):
        super().__init__(text)
        self.name = name


def _readings(stream):
    """``stream`` (a str, bytes or a file) as a function giving a fresh stream to read each time."""
    if not hasattr(stream, "read"):
        return lambda: stream
    text, name = stream.read(), getattr(stream, "name", "<file>")
    return (lambda: text) if isinstance(text, bytes) else (lambda: _NamedText(text, name))


def _refuse(stream) -> None:
    """Raise the refusal of the first alias or node nested ``MAX_DEPTH`` deep in libyaml's event stream."""
    depth = 0
    for event in yaml.parse(stream, Loader=_C):
        if isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent, yaml.AliasEvent)):
            if isinstance(event, yaml.AliasEvent) or depth >= MAX_DEPTH:
                raise _refusal(event)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def load(stream):
    """``yaml.safe_load`` refusing aliases, repeated keys and deep nesting (``yaml.YAMLError`` with the line)."""
    reading = _readings(stream)
    if _C is not None:
        try:
            _refuse(reading())
            return yaml.load(reading(), Loader=_StrictCLoader)  # noqa: S506 - a CSafeLoader subclass
        except yaml.YAMLError:
            pass  # the pure-Python loader reads it or says why not
    return yaml.load(reading(), Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass

