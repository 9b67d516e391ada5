"""Beam's pipeline graph built without re-deriving the same facts hundreds of times: a guarded patch.

Profiling a tiny build (tests/builds.py's, the cost most of the test suite pays again and again) showed
Beam 2.77.0 spending most of its graph construction on two introspections it repeats:

* ``PipelineOptions(flags)``, and so every ``options.view_as(SomeOptions)`` (616 per tiny WildBox build:
  ``Pipeline.apply``, type checks, the runner), builds a new argparse parser of that class's options and
  parses the same flags again: 1.4 s of a 7 s build.
* ``core.get_function_args_defaults``, through ``userstate.get_dofn_specs``, runs ``inspect.signature``
  on every method of a DoFn (about 30, mostly DoFn's own), each time a DoFn is checked for state
  (eight times per DoFn): 15,900 signatures per tiny WildBox build, 1.3 s.

``apply()`` replaces both with the same computation done once per distinct input, in this process:

* ``PipelineOptions.__init__`` parses each (options class, flags, ``BEAM_SERVICE_OVERRIDES``: the one
  default Beam reads from the environment) once; each instance gets a deep copy of the parsed values, so
  no two instances share a list (``add_experiment`` appends to one). Flags that are neither None, a list
  nor a tuple of strings (an iterator) are parsed as upstream does.
* ``get_function_args_defaults`` of a plain Python function, or a method bound to one, is computed once
  per function while its code and defaults are the same objects; a wrapped function, one with an
  explicit ``__signature__`` and every other callable are computed as upstream does. Each caller gets
  its own lists.

The patch is applied only to the Beam it was written against: ``BEAM_VERSION`` and the sha256 of each
replaced function's source (``UPSTREAM``); any other Beam is left as it is, with a log line saying so
(tests/test_beam_graph.py). docs/upstream/fixed-costs.md describes both costs for upstream.
"""
from __future__ import annotations

import copy
import hashlib
import inspect
import logging
import os
import sys
import types
import weakref

import apache_beam as beam
from apache_beam.options import pipeline_options
from apache_beam.transforms import core

log = logging.getLogger(__name__)

BEAM_VERSION = "2.77.0"  # the release whose graph construction this module was written against
# sha256 (first 16 hex digits) of the source of each function the patch replaces, in Beam 2.77.0
UPSTREAM = {
    "pipeline_options.PipelineOptions.__init__": "d51172d3bd0f03eb",
    "core.get_function_args_defaults": "5e41a60ff81fe8ca",
}
_MODULES = {"pipeline_options": pipeline_options, "core": core}
# what upstream computes: kept to call for what the caches leave to it, and for the tests
ORIGINAL = {"pipeline_options.PipelineOptions.__init__": pipeline_options.PipelineOptions.__init__,
            "core.get_function_args_defaults": core.get_function_args_defaults}

_applied = False


def _upstream(name: str):
    module, path = name.split(".", 1)
    target = _MODULES[module]
    for attr in path.split("."):
        target = getattr(target, attr)
    return target


def fingerprint(name: str, target=None) -> str:
    """The first 16 hex digits of the sha256 of ``name``'s source (``target``: another object's, to compare)."""
    source = inspect.getsource(target if target is not None else ORIGINAL[name])
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def refused(version: str | None = None, fingerprints: dict[str, str] | None = None) -> str | None:
    """Why the patch does not apply to the installed Beam (``version``, ``fingerprints``: what to judge
    instead, for the tests), or None when it does."""
    version = beam.__version__ if version is None else version
    if version != BEAM_VERSION:
        return f"Beam {version} is not {BEAM_VERSION}, which benchwright.beam_graph was written against"
    got = fingerprints if fingerprints is not None else {name: fingerprint(name) for name in UPSTREAM}
    changed = sorted(name for name, digest in UPSTREAM.items() if got.get(name) != digest)
    if changed:
        return f"Beam {version}'s {', '.join(changed)} differ from the source benchwright.beam_graph replaces"
    return None


def apply() -> bool:
    """Installs the cached introspections into the installed Beam when it is the one they were written
    for (once per process); returns whether they are installed. Otherwise Beam is left as it is and the
    reason is logged once."""
    global _applied
    if _applied:
        return True
    reason = refused()
    if reason is not None:
        if not getattr(apply, "_told", False):
            log.info("%s: its pipeline graph is built as upstream builds it (slower, the same pipeline)", reason)
            apply._told = True
        return False
    pipeline_options.PipelineOptions.__init__ = _options_init
    core.get_function_args_defaults = cached_args_defaults
    _applied = True
    return True


def applied() -> bool:
    return _applied


# ---------------------------------------------------------------------------------------------
# PipelineOptions: each class's flags parsed once

_PARSED: dict[tuple, object] = {}


def _options_init(self, flags=None, **kwargs) -> None:
    """``PipelineOptions.__init__`` of Beam 2.77.0, its parse taken from ``parsed_options``."""
    logging.basicConfig()  # as upstream: logging configured for a user who did not
    if isinstance(flags, str):
        raise ValueError("Flags must be an iterable of of strings, not a single string.")
    self._flags = flags
    self._visible_options = parsed_options(type(self), flags)
    self._all_options = kwargs
    for option_name in self._visible_option_list():
        if option_name not in self._all_options:  # options given in kwargs are not overwritten
            self._all_options[option_name] = getattr(self._visible_options, option_name)


def _parse(cls, flags):
    """Upstream's parse: a parser of the options ``cls`` and its bases up to PipelineOptions define."""
    parser = pipeline_options._BeamArgumentParser(allow_abbrev=False)
    for base in cls.mro():
        if base == pipeline_options.PipelineOptions:
            break
        if "_add_argparse_args" in base.__dict__:
            base._add_argparse_args(parser)
    return parser.parse_known_args(flags)[0]


def parsed_options(cls, flags):
    """The argparse namespace of ``cls``'s options parsed from ``flags`` (None: the command line), a copy of
    the one parsed the first time (a failed parse raises each time, as upstream)."""
    if flags is None:
        given = tuple(sys.argv[1:])
    elif isinstance(flags, (list, tuple)) and all(isinstance(f, str) for f in flags):
        given = tuple(flags)
    else:  # an iterator is consumed by the parse: nothing to key it by
        return _parse(cls, flags)
    key = (cls, given, os.environ.get("BEAM_SERVICE_OVERRIDES"))
    if key not in _PARSED:
        _PARSED[key] = _parse(cls, flags)
    return copy.deepcopy(_PARSED[key])


# ---------------------------------------------------------------------------------------------
# get_function_args_defaults: each function's once

_ARGSPECS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # function -> {bound: (code, defaults, ...)}
_ORIGINAL_ARGS_DEFAULTS = ORIGINAL["core.get_function_args_defaults"]
# attributes of a function that inspect.signature reads besides its code and defaults
_READ_MORE = ("__wrapped__", "__signature__", "_partialmethod")


def cached_args_defaults(f):
    """``core.get_function_args_defaults(f)``: (positional argument names, their defaults), without
    ``self`` for a bound method. A plain function's (or a method's function's) is kept while its code and
    defaults are the objects they were; anything ``inspect.signature`` would read more of is left to
    upstream (``__wrapped__``, ``__signature__``, a partialmethod, builtins, partials, callable objects)."""
    bound = type(f) is types.MethodType
    func = f.__func__ if bound else f
    if type(func) is not types.FunctionType or (func.__dict__ and any(name in func.__dict__ for name in _READ_MORE)):
        return _ORIGINAL_ARGS_DEFAULTS(f)
    kept = _ARGSPECS.get(func)
    if kept is None:
        kept = _ARGSPECS[func] = {}
    entry = kept.get(bound)
    if (entry is None or entry[0] is not func.__code__ or entry[1] is not func.__defaults__
            or entry[2] is not func.__kwdefaults__):
        entry = kept[bound] = (func.__code__, func.__defaults__, func.__kwdefaults__, *_ORIGINAL_ARGS_DEFAULTS(f))
    return list(entry[3]), list(entry[4])
