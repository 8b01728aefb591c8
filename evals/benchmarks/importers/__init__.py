"""Importers: published memory benchmarks -> schema-"1" corpora.

::

    report = import_corpus("locomo", Path("locomo10.json"), Path("corpora/locomo"))
    print(report.summary())

Each importer reads the whole input, checks it (a problem is one
:class:`ImportFormatError` naming the file and JSON path), and only then writes
one JSON file per conversation into a new or empty folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evals.benchmarks.importers._common import ImportFormatError, ImportReport, answer_keywords, answer_text
from evals.benchmarks.importers.locomo import import_locomo
from evals.benchmarks.importers.longmemeval import import_longmemeval

__all__ = ["FORMATS", "ImportFormatError", "ImportReport", "answer_keywords", "answer_text", "import_corpus"]

FORMATS: dict[str, Callable[[Path, Path], ImportReport]] = {
    "locomo": import_locomo,
    "longmemeval": import_longmemeval,
}


def import_corpus(fmt: str, file: Path, out: Path) -> ImportReport:
    """Import ``file`` (in format ``fmt``: see :data:`FORMATS`) as a corpus in ``out``."""
    return FORMATS[fmt](Path(file), Path(out))
