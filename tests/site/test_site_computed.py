"""The site from what is computed: a build computes each run's verdicts once and reads each run once.

The store is pair_site's (helpers.pairs: bm25 and recency at k=2, bm25 at k=3 and at an older commit, the two
ceilings), so every run is on pair pages, and two are on a compare section.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

from evals.site import build_site
from evals.site._build import build
from evals.site._computed import Computed
from evals.site._publisher import RunSource
from evals.store import Store


def _run_ids(store: Path) -> set[str]:
    with Store.open(store, read_only=True) as opened:
        return {s.run_id for s in opened.runs()}


def _same(a: Path, b: Path) -> bool:
    """Every file of the two sites byte for byte, the same paths in both."""
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return files_a == files_b and all(filecmp.cmp(a / p, b / p, shallow=False) for p in files_a)


def test_a_build_computes_each_runs_verdicts_once(pair_site: dict, tmp_path: Path):
    """A full build computes every run's verdicts exactly once, for all the pages that show them."""
    computed = Computed()
    build(pair_site["store"], tmp_path / "site", computed=computed, incremental=False)
    assert {run_id for run_id, _ in computed.made} == _run_ids(pair_site["store"])
    assert set(computed.made.values()) == {1}


def test_a_rebuild_computes_each_runs_verdicts_once(pair_site: dict, tmp_path: Path):
    """A rebuild that reuses every run's pages still computes each run's verdicts once, not once per pair page."""
    build_site(pair_site["store"], tmp_path / "site")
    computed = Computed()
    report = build(pair_site["store"], tmp_path / "site", computed=computed)
    assert report.rendered == 0
    assert set(computed.made.values()) == {1} and len(computed.made) == len(_run_ids(pair_site["store"]))


def test_each_build_computes_into_its_own_memo(pair_site: dict, tmp_path: Path):
    """Two builds given no memo share nothing, and one given a memo fills only that one."""
    first, second = Computed(), Computed()
    build(pair_site["store"], tmp_path / "one", computed=first, incremental=False)
    build(pair_site["store"], tmp_path / "two", computed=second, incremental=False)
    assert first.made == second.made and first.kept == second.kept
    build_site(pair_site["store"], tmp_path / "three", incremental=False)
    assert first.made == second.made


def test_the_site_is_the_same_whether_verdicts_come_from_run_pages_or_the_store(pair_site: dict, tmp_path: Path):
    """Rendered in worker processes (pair pages score the stored outcomes) or here (they reuse the run pages'
    verdicts), the site is byte for byte the one the fixture built."""
    build_site(pair_site["store"], tmp_path / "here", workers=1, incremental=False)
    build_site(pair_site["store"], tmp_path / "workers", workers=2, incremental=False)
    assert _same(tmp_path / "here", pair_site["site"])
    assert _same(tmp_path / "workers", pair_site["site"])


def parts_asked_twice(store: Path, **slicing) -> tuple[int, list, list]:
    """The first stored run as a build's RunSource, its parts asked for twice: how often the store was read, and
    the two lists of parts."""
    reads = []
    with Store.open(store, read_only=True) as opened:
        summary = opened.runs()[0]

        def parts():
            reads.append(summary.run_id)
            return opened.iter_run(summary.run_id, **slicing)

        run = RunSource(summary, [], parts)
        first, again = list(run.parts()), list(run.parts())
    return len(reads), first, again


def test_a_run_of_one_slice_is_read_once_per_unit(pair_site: dict):
    """A run that is one slice is read and assembled once, whichever publishers ask for its parts."""
    reads, first, again = parts_asked_twice(pair_site["store"])
    assert reads == 1 and len(first) == 1 and first[0] is again[0]


def test_a_run_of_several_slices_is_read_again_not_kept(pair_site: dict):
    """A run of several slices is not kept whole: each publisher that asks reads it again, a slice at a time."""
    reads, first, again = parts_asked_twice(pair_site["store"], batch_turns=1)  # a conversation a slice
    assert reads == 2 and len(first) == len(again) > 1


def test_a_full_build_reads_each_run_once(pair_site: dict, tmp_path: Path, monkeypatch):
    """A full build in one process reads each run once: the pages that span runs take the outcomes of the runs
    the run pages read (evals.store.outcomes_of), and the site is the fixture's, byte for byte."""
    reads: list[str] = []
    for name in ("get_run", "get_run_outcomes", "iter_run"):
        method = getattr(Store, name)

        def counting(self, run_id, *args, _method=method, **kwargs):
            reads.append(run_id)
            return _method(self, run_id, *args, **kwargs)

        monkeypatch.setattr(Store, name, counting)
    build_site(pair_site["store"], tmp_path / "site", workers=1, incremental=False)
    assert sorted(reads) == sorted(_run_ids(pair_site["store"]))
    assert _same(tmp_path / "site", pair_site["site"])


def test_pages_show_every_character_as_visible_does():
    """The template finalizer's fast path for printable text shows every code point as visible() does."""
    from evals.model.formatting import visible
    from evals.site._render import shown

    for code in range(0x110000):
        text = f"a{chr(code)}b"
        assert shown(text) == visible(text), hex(code)
