"""The benchmarks the site shows: which corpora each holds, and what the registry says of it.

A corpus is shown under its benchmark (:func:`evals.views.site_paths.benchmark_key`): a corpus fetched by
name under the registry's entry (:mod:`evals.benchmarks`), one imported by hand under the benchmark its
``benchmark.json`` declares, anything else under its own name (or digest). The registry gives the
license (a non-commercial one is said beside the benchmark wherever it is listed), where the file is
published, and how it is pinned: by a published digest, or by trust on first use, the size and digest
the first download recorded in the lock file (:mod:`evals.benchmarks._lock`).
"""

from __future__ import annotations

from evals.benchmarks import BENCHMARKS, Benchmark, LockEntry, units
from evals.model.formatting import number
from evals.site._pages import BenchmarkInfo
from evals.site._publisher import Site
from evals.store import RunSummary

__all__ = ["benchmark_infos", "registry_entry"]


def registry_entry(key: str) -> Benchmark | None:
    return BENCHMARKS.get(key)


def _by_importer(declared: str) -> list[Benchmark]:
    return [b for b in BENCHMARKS.values() if b.importer == declared]


def _pin(entry: Benchmark, lock: dict[str, LockEntry]) -> tuple[str, bool]:
    """How the benchmark's data file is pinned, in words, and whether by trust on first use."""
    data = entry.data
    if entry.tree:
        whole = sum(1 for f in entry.tree if f.sha256 is not None)
        locked = [lock[f.url] for f in entry.tree if f.sha256 is None and f.url in lock]
        rest = len(entry.tree) - whole
        text = f"pinned: {number(len(entry.tree))} files at {entry.version}, {number(whole)} by size and SHA-256"
        if rest:
            text += (
                f", {number(rest)} by their git blob id (the repository's own digest), whose size and SHA-256 the first "
                f"download records in the lock file ({number(len(locked))} recorded in this build's)"
            )
        return text + "; every fetch is checked against them", bool(rest)
    if data is None:
        return "", False
    if data.sha256 is not None:
        size = f"{number(data.size)} bytes, " if data.size is not None else ""
        return f"pinned: {size}SHA-256 {data.sha256}, published with the harness; every fetch is checked against it", False
    recorded = lock.get(data.url)
    if recorded is not None:
        return (
            f"trust on first use: its host publishes no digest, so the first download ({recorded.recorded[:10]}) recorded "
            f"{number(recorded.size)} bytes, SHA-256 {recorded.sha256} in the lock file, and every later fetch must match them",
            True,
        )
    return (
        "trust on first use: its host publishes no digest, so the first download records its size and SHA-256 in the "
        "lock file (benchmarks.lock) and every later fetch must match them; this build was given no lock entry for it",
        True,
    )


def benchmark_infos(site: Site) -> dict[str, BenchmarkInfo]:
    """Every benchmark with a run in the store, by key: the one with the newest run first."""
    paths = site.paths
    groups: dict[str, list[RunSummary]] = {}
    for s in site.summaries:  # newest first
        groups.setdefault(paths.benchmark(s.corpus_digest), []).append(s)
    infos = {}
    for key, runs in groups.items():
        corpora: dict[str, str] = {}
        for s in runs:
            corpora.setdefault(s.corpus_digest, s.corpus_name)
        declared = {s.benchmark for s in runs}
        # The registry's facts and pin only for its own release, fetched (or its bytes imported): never by a name.
        entry = registry_entry(key) if any(s.corpus_release == key for s in runs) else None
        note = ""
        license, non_commercial = "", False
        if entry is not None:
            title, license, non_commercial = entry.title, entry.license, entry.non_commercial
            pin, trust = _pin(entry, site.lock)
        else:
            pin, trust = "", False
            title = key
            if len(declared) == 1 and None not in declared:
                name = next(iter(declared))
                declared_unit = units().get(name)
                title = declared_unit.title if declared_unit is not None else name
                family = _by_importer(name)
                licenses = {(b.license, b.non_commercial) for b in family}
                if len(licenses) == 1:  # every release the registry knows has the same license
                    license, non_commercial = next(iter(licenses))
                files = sorted({s.corpus_file for s in runs if s.corpus_file})
                source = f"from {', '.join(files)}" if files else "(its source file was not recorded)"
                note = (
                    f"Imported by hand {source} (its benchmark.json declares {name}): its bytes match no pinned release, "
                    f"so no release or pin is shown; the published figures beside it (the paper's rows, the claims) are "
                    f"of a release, not of this file; `evals fetch` "
                    f"names and checks one ({', '.join(b.name for b in family)})."
                )
            else:
                note = "A corpus of its own (no benchmark.json): it is shown under its name, or its digest when it has none."
        suspects = [site.suspects[d] for d in corpora if d in site.suspects]
        latest = [s for s in site.latest if s.corpus_digest in corpora]
        infos[key] = BenchmarkInfo(
            key=key,
            title=title,
            href=paths.leaderboard(key),
            known=entry is not None,
            license=license,
            non_commercial=non_commercial,
            homepage=entry.homepage if entry is not None else "",
            source=entry.source if entry is not None and entry.data is not None else "",
            version=entry.version if entry is not None else "",
            pin=pin,
            trust_on_first_use=trust,
            evidence=entry.evidence if entry is not None else "",
            note=note,
            corpora=[(name, digest[:10], f"corpus-{digest[:10]}") for digest, name in corpora.items()],
            suspects=sum(len(found.suspects) for found in suspects),
            checked=sum(found.checked for found in suspects),
            suspects_href=paths.suspects(key),
            runs=len(runs),
            configurations=len(latest),
        )
    return infos
