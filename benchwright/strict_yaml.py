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

import yaml

MAX_DEPTH = 100


class _StrictLoader(yaml.SafeLoader):
    _depth = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"alias *{event.anchor} is not allowed (anchors and "
                                              "aliases are refused: a YAML alias bomb never finishes)",
                                              event.start_mark)
        if self._depth >= MAX_DEPTH:
            raise yaml.composer.ComposerError(None, None, f"nested more than {MAX_DEPTH} levels deep",
                                              self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

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


def load(stream):
    """``yaml.safe_load`` refusing aliases, repeated keys and deep nesting (``yaml.YAMLError`` with the line)."""
    return yaml.load(stream, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass


def load_all(stream):
    """``yaml.safe_load_all`` with :func:`load`'s refusals: every document of the stream."""
    return yaml.load_all(stream, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
