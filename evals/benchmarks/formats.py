"""The formats of `evals import-corpus`: each importable unit's importer, found by its name.

::

    report = import_corpus("locomo", Path("locomo10.json"), Path("corpora/locomo"))
    print(report.summary())

Each benchmark unit (``evals/benchmarks/NAME/``) holds its own importer; :func:`import_corpus` finds it
by the unit's name. What every importer shares (reading the input a conversation at a time, checking it,
writing the corpus) is the kit's (:mod:`evals.benchmarks.kit.importing`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from evals.benchmarks.kit.importing import ImportFormatError, ImportReport, answer_keywords, answer_text
from evals.model.corpus import BENCHMARK_FILE

__all__ = [
    "ImportFormatError",
    "ImportReport",
    "answer_keywords",
    "answer_text",
    "formats",
    "import_corpus",
    "pinned_release",
]


def formats() -> dict[str, Any]:
    """Each importable unit's name -> its importer ``(file, out) -> ImportReport``, as registered now."""
    from evals.benchmarks._registry import units

    return {name: u.importer for name, u in units().items() if u.importer is not None}


def import_corpus(fmt: str, file: Path, out: Path, release: str | None = None) -> ImportReport:
    """Import ``file`` (in format ``fmt``, an importable unit's name: :func:`formats`) as a corpus in ``out``.

    Its ``benchmark.json`` (where the importer writes one) records where it came from: ``release``, the registry
    entry whose pinned bytes ``evals fetch`` checked, or, for a file imported by hand, the entry whose published
    SHA-256 the file's bytes match; else the file's name, and the corpus is shown as imported by hand from it,
    never under a release's name and pin."""
    found = formats()
    if fmt not in found:
        raise ImportFormatError(f"no importer called {fmt!r}; the importable benchmarks are {', '.join(found)}")
    report = checked_import(fmt, found[fmt], Path(file), Path(out))
    _record_source(fmt, Path(file), Path(out), release)
    return report


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


def _record_source(fmt: str, file: Path, out: Path, release: str | None) -> None:
    declaration = out / BENCHMARK_FILE
    if not declaration.is_file():
        return
    data = json.loads(declaration.read_text(encoding="utf-8"))
    release = release if release is not None else pinned_release(fmt, file)
    data |= {"release": release} if release is not None else {"imported_from": file.name}
    declaration.write_text(json.dumps(data) + "\n", encoding="utf-8")



def pinned_release(fmt: str, file: Path) -> str | None:
    """The registry entry read by ``fmt`` whose data file is pinned by a published SHA-256 that ``file``'s bytes
    match; None for anything else (a folder, another file, a release pinned only by trust on first use)."""
    from evals.benchmarks._download import file_digest
    from evals.benchmarks._registry import BENCHMARKS

    pinned = [b for b in BENCHMARKS.values() if b.importer == fmt and b.data is not None and b.data.sha256 is not None]
    if not pinned or not file.is_file():
        return None
    size, sha256 = file_digest(file)
    return next((b.name for b in pinned if b.data.sha256 == sha256 and b.data.size in (None, size)), None)
