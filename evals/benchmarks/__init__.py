"""Benchmarks by name: a registry of the published memory benchmarks, pinned downloads, and import.

::

    fetched = fetch("locomo", downloads=default_downloads(), lock_path=DEFAULT_LOCK)
    print(fetched.corpus)   # ~/.cache/mneme-evals/corpora/locomo

:mod:`._registry` holds the units (one per benchmark: ``evals/benchmarks/NAME/``) and their releases'
facts (where, which version, license, pins), :mod:`._download` one
checked download, :mod:`._lock` the trust-on-first-use digests of files published without one, and
:mod:`._fetch` puts them together with the importers. docs/benchmarks.md tells the whole story.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evals.benchmarks._download import MIRROR_ENV, DownloadError, Pin, default_deadline
    from evals.benchmarks._fetch import (
        DOWNLOADS_ENV,
        FETCHED_NOTE,
        Fetched,
        Status,
        corpus_folder,
        default_downloads,
        fetch,
        status,
    )
    from evals.benchmarks._lock import DEFAULT_LOCK, Lock, LockEntry, LockError
    from evals.benchmarks._registry import (
        BENCHMARKS,
        HARNESS,
        HARNESS_JUDGE,
        Audit,
        Benchmark,
        ErrataFormat,
        ProtocolName,
        ProtocolSpec,
        RemoteFile,
        SourceFile,
        Unit,
        UnknownBenchmark,
        benchmark,
        category_names,
        category_notes,
        errata_formats,
        known_protocol,
        metric_description,
        no_judge_refusal,
        protocol_class,
        protocol_judges,
        protocol_lexical,
        protocol_names,
        protocol_sources,
        protocol_specs,
        published_claims,
        redistributable,
        rule_of,
        text_withheld,
        unit,
        units,
    )

# Each name is imported from its module on first use: a run that only reads a benchmark's rule must not
# load the downloader, the lock and every importer with it.
_HOMES = {
    "_download": ("MIRROR_ENV", "DownloadError", "Pin", "default_deadline"),
    "_fetch": ("DOWNLOADS_ENV", "FETCHED_NOTE", "Fetched", "Status", "corpus_folder", "default_downloads", "fetch", "status"),
    "_lock": ("DEFAULT_LOCK", "Lock", "LockEntry", "LockError"),
    "_registry": (
        "BENCHMARKS",
        "Audit",
        "Benchmark",
        "RemoteFile",
        "SourceFile",
        "Unit",
        "UnknownBenchmark",
        "benchmark",
        "category_names",
        "category_notes",
        "ErrataFormat",
        "errata_formats",
        "metric_description",
        "HARNESS",
        "HARNESS_JUDGE",
        "ProtocolName",
        "ProtocolSpec",
        "known_protocol",
        "no_judge_refusal",
        "protocol_class",
        "protocol_judges",
        "protocol_lexical",
        "protocol_names",
        "protocol_sources",
        "protocol_specs",
        "published_claims",
        "redistributable",
        "redistributable",
    "rule_of",
    "text_withheld",
        "text_withheld",
        "unit",
        "units",
    ),
}  # fmt: skip
_HOME = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "Audit",
    "BENCHMARKS",
    "Benchmark",
    "DEFAULT_LOCK",
    "DOWNLOADS_ENV",
    "DownloadError",
    "ErrataFormat",
    "FETCHED_NOTE",
    "Fetched",
    "HARNESS",
    "HARNESS_JUDGE",
    "Lock",
    "LockEntry",
    "LockError",
    "MIRROR_ENV",
    "Pin",
    "ProtocolName",
    "ProtocolSpec",
    "RemoteFile",
    "SourceFile",
    "Status",
    "Unit",
    "UnknownBenchmark",
    "benchmark",
    "category_names",
    "category_notes",
    "corpus_folder",
    "default_deadline",
    "default_downloads",
    "errata_formats",
    "fetch",
    "known_protocol",
    "metric_description",
    "no_judge_refusal",
    "protocol_class",
    "protocol_judges",
    "protocol_lexical",
    "protocol_names",
    "protocol_sources",
    "protocol_specs",
    "published_claims",
    "redistributable",
    "rule_of",
    "text_withheld",
    "status",
    "unit",
    "units",
]
