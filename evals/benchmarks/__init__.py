"""Benchmarks by name: a registry of the published memory benchmarks, pinned downloads, and import.

::

    fetched = fetch("locomo", downloads=default_downloads(), lock_path=DEFAULT_LOCK)
    print(fetched.corpus)   # ~/.cache/mneme-evals/corpora/locomo

:mod:`._registry` holds the units (one per benchmark: ``evals/benchmarks/NAME/``) and their releases' facts (where, which version, license, pins), :mod:`._download` one
checked download, :mod:`._lock` the trust-on-first-use digests of files published without one, and
:mod:`._fetch` puts them together with the importers. docs/benchmarks.md tells the whole story.
"""

from evals.benchmarks._download import MIRROR_ENV, DownloadError, Pin
from evals.benchmarks._fetch import DOWNLOADS_ENV, FETCHED_NOTE, Fetched, Status, corpus_folder, default_downloads, fetch, status
from evals.benchmarks._lock import DEFAULT_LOCK, Lock, LockEntry, LockError
from evals.benchmarks._registry import (
    BENCHMARKS,
    Benchmark,
    RemoteFile,
    SourceFile,
    Unit,
    UnknownBenchmark,
    benchmark,
    protocol_sources,
    rule_of,
    unit,
    units,
)

__all__ = [
    "BENCHMARKS",
    "DEFAULT_LOCK",
    "DOWNLOADS_ENV",
    "FETCHED_NOTE",
    "MIRROR_ENV",
    "Benchmark",
    "DownloadError",
    "Fetched",
    "Lock",
    "LockEntry",
    "LockError",
    "Pin",
    "RemoteFile",
    "SourceFile",
    "Status",
    "Unit",
    "UnknownBenchmark",
    "benchmark",
    "corpus_folder",
    "default_downloads",
    "fetch",
    "protocol_sources",
    "rule_of",
    "status",
    "unit",
    "units",
]
