"""The formats of `evals import-corpus`: each importable unit's importer, found by its name.

::

    report = import_corpus("locomo", Path("locomo10.json"), Path("corpora/locomo"))
    print(report.summary())

Each benchmark unit (``evals/benchmarks/NAME/``) holds its own importer; :func:`import_corpus` finds it
by the unit's name. What every importer shares (reading the input a conversation at a time, checking it,
writing the corpus) is the kit's (:mod:`evals.benchmarks.kit.importing`).
"""

from __future__ import annotations

import os
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
    return checked_import(fmt, found[fmt], Path(file), Path(out))


def checked_import(fmt: str, importer: Any, file: Path, out: Path) -> ImportReport:
    """``importer(file, out)``, whose faults are the unit's: whatever it raises, or a result that is no
    :class:`ImportReport`, is one line naming the format, never holding the API key (a message that echoes
    ``$OPENAI_API_KEY`` has it masked). A KeyboardInterrupt stays one."""
    from evals.errors import EvalsError
    from evals.io.endpoints import scrubber
    from evals.strategies.registry import PLUGIN_FAULTS, fault_text, kind_of

    scrub = scrubber(os.environ.get("OPENAI_API_KEY"))
    try:
        report = importer(file, out)
    except EvalsError as exc:  # the kit's own errors say what is wrong with the file
        said = " ".join(str(exc).split())
        if scrub(said) == said and "\n" not in str(exc):
            raise
        raise ImportFormatError(scrub(said)) from None
    except PLUGIN_FAULTS as exc:  # fault_text raises a KeyboardInterrupt again
        raise ImportFormatError(f"import {fmt}: its importer failed: {scrub(fault_text(exc))}") from None
    if not isinstance(report, ImportReport):
        raise ImportFormatError(f"import {fmt}: its importer returned {kind_of(report)}, not an ImportReport")
    return report
