"""Plug-ins, found one way for every kind: the entry points of a group, and ``package.module:ATTR`` references.

Strategies (``mneme_evals.strategies``), benchmark units (``mneme_evals.benchmarks``) and claims files
(``mneme_evals.claims``) are each an entry-point group; the harness's built-ins are entry points of this
package's own distribution, so the door a third party uses is always exercised. A reference
``package.module:ATTR`` names one that is not installed (on ``sys.path``). What a loaded value must be is its
kind's business; this module only finds and imports it, and says where it came from.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from evals.errors import EvalsError

__all__ = [
    "BENCHMARK_GROUP",
    "BUILT_IN_DISTRIBUTION",
    "CLAIMS_GROUP",
    "STRATEGY_GROUP",
    "PluginError",
    "group",
    "is_built_in",
    "is_reference",
    "load_reference",
    "source_of",
]

STRATEGY_GROUP = "mneme_evals.strategies"
BENCHMARK_GROUP = "mneme_evals.benchmarks"
CLAIMS_GROUP = "mneme_evals.claims"
BUILT_IN_DISTRIBUTION = "mneme-evals"

# package.module:attr, each part a Python name (so a reference never holds a newline or a path).
_REFERENCE = re.compile(r"[^\W\d]\w*(\.[^\W\d]\w*)*:[^\W\d]\w*(\.[^\W\d]\w*)*")


class PluginError(EvalsError):
    """A reference that names no importable module or no attribute of it."""


# Per group: the sys.path it was read under and its entry points. Reading every installed distribution's
# metadata takes tens of milliseconds, and pages ask per run; a change of sys.path reads it again.
_read: dict[str, tuple[tuple[str, ...], tuple[EntryPoint, ...]]] = {}


def group(name: str) -> tuple[EntryPoint, ...]:
    """The entry points of group ``name``, read again only when ``sys.path`` changes."""
    key = tuple(sys.path)
    found = _read.get(name)
    if found is None or found[0] != key:
        found = _read[name] = (key, tuple(entry_points(group=name)))
    return found[1]


def is_built_in(point: EntryPoint) -> bool:
    """Whether ``point`` is one of this package's own entry points."""
    return point.dist is not None and _dist_name(point.dist) == BUILT_IN_DISTRIBUTION


@functools.lru_cache(maxsize=None)
def _dist_name(dist: Any) -> str:
    """A distribution's name, read once: importlib.metadata parses its metadata file at every ``.name``."""
    return dist.name


def source_of(point: EntryPoint) -> str:
    """Where ``point`` comes from, in words: ``built-in``, its distribution and version, or its value."""
    if is_built_in(point):
        return "built-in"
    if point.dist is None:
        return point.value
    return f"{point.dist.name} {point.dist.version}"


def is_reference(text: str) -> bool:
    """Whether ``text`` is a well-formed ``package.module:ATTR`` reference."""
    return bool(_REFERENCE.fullmatch(text))


def load_reference(ref: str, what: str) -> tuple[Any, str]:
    """The value ``package.module:ATTR`` names, and its module's name. ``what`` starts each error (``--runner X``).

    A module that is not on the path, or has no such attribute, is a :class:`PluginError`; whatever the
    module itself raises on import is raised as it is (its caller says whose fault it is)."""
    if not is_reference(ref):
        raise PluginError(f"{what}: not a reference package.module:ATTR")
    module_name, _, attr = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            raise PluginError(
                f"{what}: no module named {exc.name!r} on the Python path; the `evals` command does not "
                "look in the current directory: run it with PYTHONPATH=. (or the folder holding the module), "
                "or pip install -e the plug-in's package"
            ) from None
        raise
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise PluginError(f"{what}: {module_name} has no {attr!r}")
        value = getattr(value, part)
    return value, module_name
