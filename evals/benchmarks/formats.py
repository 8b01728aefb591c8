"""The formats of `evals import-corpus`: each importable unit's importer, found by its name.

::

    report = import_corpus("locomo", Path("locomo10.json"), Path("corpora/locomo"))
    print(report.summary())

Each benchmark unit (``evals/benchmarks/NAME/``) holds its own importer; :func:`import_corpus` finds it
by the unit's name. What every importer shares (reading the input a conversation at a time, checking it,
writing the corpus) is the kit's (:mod:`evals.benchmarks.kit.importing`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evals.benchmarks.kit.importing import ImportFormatError, ImportReport, answer_keywords, answer_text

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
