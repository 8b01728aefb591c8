"""Importers: published memory benchmarks -> schema-"1" corpora.

::

    report = import_corpus("locomo", Path("locomo10.json"), Path("corpora/locomo"))
    print(report.summary())

Each benchmark unit (``evals/benchmarks/NAME/``) holds its own importer; :func:`import_corpus` finds it
by the unit's name. This package holds what every importer shares (:mod:`._common`): reading the
input a conversation at a time, checking it (a problem is one :class:`ImportFormatError` naming the
file and JSON path), and writing one JSON file per conversation into a new or empty folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.benchmarks.importers._common import ImportFormatError, ImportReport, answer_keywords, answer_text

__all__ = ["ImportFormatError", "ImportReport", "answer_keywords", "answer_text", "formats", "import_corpus"]


def formats() -> dict[str, Any]:
    """Each importable unit's name -> its importer ``(file, out) -> ImportReport``, as registered now."""
    from evals.benchmarks._registry import units

    return {name: u.importer for name, u in units().items() if u.importer is not None}


def import_corpus(fmt: str, file: Path, out: Path) -> ImportReport:
    """Import ``file`` (in format ``fmt``, an importable unit's name: :func:`formats`) as a corpus in ``out``."""
    found = formats()
    if fmt not in found:
        raise ImportFormatError(f"no importer called {fmt!r}; the importable benchmarks are {', '.join(found)}")
    return found[fmt](Path(file), Path(out))


# The importers by their names before the units held them (tests and scripts import them from here).
_MOVED = {
    "import_locomo": ("evals.benchmarks.locomo.importer", "import_locomo"),
    "import_longmemeval": ("evals.benchmarks.longmemeval.importer", "import_longmemeval"),
    "locomo": ("evals.benchmarks.locomo.importer", None),
    "longmemeval": ("evals.benchmarks.longmemeval.importer", None),
}


def __getattr__(name: str) -> Any:
    if name not in _MOVED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module, attribute = _MOVED[name]
    loaded = importlib.import_module(module)
    return loaded if attribute is None else getattr(loaded, attribute)
