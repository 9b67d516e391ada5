"""YAML as sources are read: ``yaml.safe_load`` without aliases. An alias is a reference, so nine
nested lists of nine aliases (a few hundred bytes, the YAML "billion laughs") load into a small
graph that anything walking it (a schema validator, ``copy.deepcopy``, a JSON dump) sees as 9^9
items and never finishes; a source file has no need for them."""
from __future__ import annotations

import yaml


class _NoAliasLoader(yaml.SafeLoader):
    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, f"alias *{event.anchor} is not allowed (anchors and "
                                              "aliases are refused: a YAML alias bomb never finishes)",
                                              event.start_mark)
        return super().compose_node(parent, index)


def load(stream):
    """``yaml.safe_load`` refusing aliases (``yaml.YAMLError`` with the line, like any YAML error)."""
    return yaml.load(stream, Loader=_NoAliasLoader)  # noqa: S506 - a SafeLoader subclass
