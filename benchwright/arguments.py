"""The parser every ``benchwright`` command line uses: options are matched whole, and a mistyped one is an
error that suggests the option meant.

argparse by default takes any unambiguous prefix of an option for the option (``--verbos`` for
``--verbose``), so a typo can silently mean something; here only whole names match. A dataset's
command (``evaluate``, ``baseline``, ``run``) builds its parser in a function it names with ``parser_of``,
so ``benchwright evaluate --help`` can print every dataset's options without running anything.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from typing import Callable, Iterable


class ArgumentParser(argparse.ArgumentParser):
    """argparse's parser without prefix matching, whose "unrecognized arguments" error names the closest
    known option (``--ouut``: did you mean ``--out``?) and comes before a "required" error (a mistyped
    required option is reported as the typo it is). ``strict=False``: arguments it does not know are
    left to the caller (``parse_known_args``), for a command that passes them on."""

    def __init__(self, *args, allow_abbrev: bool = False, strict: bool = True, **kwargs):
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)
        self.strict = strict

    def parse_known_args(self, args=None, namespace=None):
        if self.strict:
            extras = self._unknown(args)
            if extras:
                self.error(unrecognized(extras, option_strings(self)))
        return super().parse_known_args(args, namespace)

    def _unknown(self, args) -> list[str]:
        """The arguments no option or positional takes, found with no argument required (help is left
        to the real parse, whose usage shows what is required)."""
        if any(a in ("-h", "--help") for a in (args if args is not None else sys.argv[1:])):
            return []
        required = [(action, action.required) for action in self._actions]
        try:
            for action, _ in required:
                action.required = False
            return super().parse_known_args(args, None)[1]
        finally:
            for action, was in required:
                action.required = was


def option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every ``--option`` ``parser`` takes (help included)."""
    return [s for action in parser._actions for s in action.option_strings if s.startswith("--")]


def closest(option: str, *known: Iterable[str]) -> str | None:
    """The option ``option`` most likely misspells (``--name=value`` is matched by its name), from the
    first of the ``known`` lists that has one close enough; None when none has."""
    for options in known:
        found = difflib.get_close_matches(option.split("=", 1)[0], list(options), n=1, cutoff=0.6)
        if found:
            return found[0]
    return None


def unrecognized(extras: list[str], *known: Iterable[str]) -> str:
    """argparse's message for arguments no option takes, with a "did you mean" per mistyped option
    (looked up in the ``known`` lists in turn: ``closest``)."""
    known = tuple(list(k) for k in known)
    hints = [f"{o.split('=', 1)[0]}: did you mean {c}?" for o in extras
             if o.startswith("--") and (c := closest(o, *known))]
    return f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(hints)})" if hints else "")


def parser_of(make_parser: Callable[[], argparse.ArgumentParser]):
    """Decorator: marks a dataset command's ``run_cli(argv)`` with the function that builds its parser
    (``run_cli.parser``), for the help of ``benchwright evaluate|baseline|run``."""
    def mark(run):
        run.parser = make_parser
        return run
    return mark
