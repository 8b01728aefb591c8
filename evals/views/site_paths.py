"""Every file name of the published site, decided once so that links and files agree.

The site's pages use it to write files and link between them; reports that
link into a published site (``evals gate --site-url``) use it to name the same
pages, which is why it sits below :mod:`evals.site` rather than inside it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from evals.benchmarks import BENCHMARKS
from evals.model.corpus import benchmark_names
from evals.store import RunSummary, Store, StoredRun

__all__ = [
    "Paths",
    "benchmark_key",
    "config_id",
    "corpus_dir",
    "passage",
    "passage_turn_text",
    "suspects_json",
    "relative",
    "root_of",
    "slug",
    "POINTS_PER_PAGE",
    "page_of",
    "test_point_anchor",
    "unique_slugs",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug(name: str) -> str:
    """A file-name-safe form of ``name``; changed names get a short hash so they stay distinct."""
    cleaned = _UNSAFE.sub("_", name).strip("._") or "x"
    if cleaned == name and len(name) <= 80:
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
    return f"{cleaned[:60]}-{digest}"


def unique_slugs(names: list[str]) -> dict[str, str]:
    """Slugs for ``names`` that differ even on case-insensitive file systems."""
    out: dict[str, str] = {}
    taken: set[str] = set()
    for name in sorted(set(names)):
        candidate = slug(name)
        if candidate.lower() in taken:
            candidate = f"{candidate}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:8]}"
        taken.add(candidate.lower())
        out[name] = candidate
    return out


def benchmark_key(corpus_name: str, benchmark: str | None, digest: str, release: str | None = None) -> str:
    """Which benchmark a corpus is on the site (one leaderboard page each): the registry's release whose pinned
    bytes the corpus was imported from (``release``: ``evals fetch``, or a hand import of those bytes), else the
    benchmark its ``benchmark.json`` declares (``locomo``, ``longmemeval``), else the corpus's name, else its
    digest. A folder's name is no provenance: an undeclared corpus that bears a benchmark's name gets its digest
    beside the name, so it never lands on that benchmark's page."""
    known = BENCHMARKS.get(release) if release is not None else None
    if known is not None and known.importer is not None and known.importer == benchmark:
        return release  # type: ignore[return-value]
    if benchmark:
        return benchmark
    if not corpus_name:
        return digest[:16]
    if corpus_name in BENCHMARKS or corpus_name in benchmark_names():
        return f"{corpus_name} ({digest[:10]})"
    return corpus_name


def config_id(summary: RunSummary) -> tuple[str, str]:
    """What the site follows through history: one configuration on one corpus."""
    return summary.corpus_digest, summary.config_key


def root_of(path: str) -> str:
    """The relative way back to the site root from the page at ``path``: "", "../", "../../"."""
    return "../" * path.count("/")


def relative(from_page: str, to: str) -> str:
    """``to`` (site-root relative) as a link from the page at ``from_page``."""
    return root_of(from_page) + to


# A conversation's drill-down holds at most this many test points a page; the rest follow on pages 2, 3…
# (a LoCoMo conversation has up to 260: on one page that was over a megabyte).
POINTS_PER_PAGE = 100


def page_of(position: int) -> int:
    """The drill-down page (0-based) of a conversation's test point at ``position`` (0-based, in turn order)."""
    return position // POINTS_PER_PAGE


def test_point_anchor(turn_index: int) -> str:
    """The id of a test point's section on its drill-down page."""
    return f"tp-{turn_index}"


def corpus_dir(digest: str) -> str:
    """The folder of a corpus's transcripts: written once per corpus, whatever runs use it."""
    return f"transcripts/{digest[:16]}"


def suspects_json(digest: str) -> str:
    """A corpus's label suspects (the label audit's flags), made with its transcripts and reused with them."""
    return f"{corpus_dir(digest)}/label-suspects.json"


def passage(digest: str, passage_id: str) -> str:
    """The page of a passage: turns that recur, in order, in several conversations of a corpus."""
    return f"{corpus_dir(digest)}/p/{passage_id}.html"


def passage_turn_text(digest: str, passage_id: str, offset: int) -> str:
    """A long turn of a passage, whole, as plain text."""
    return f"{corpus_dir(digest)}/p/{passage_id}/turn-{offset}.txt"


class Paths:
    """The site-relative path of every run, drill-down, transcript and history page."""

    def __init__(self, summaries: list[RunSummary]) -> None:
        self.run_slug = unique_slugs([s.run_id for s in summaries])
        configs = sorted({config_id(s) for s in summaries})
        self.config_slug = unique_slugs([f"{key}--{digest[:10]}" for digest, key in configs])
        self._config_name = {(digest, key): f"{key}--{digest[:10]}" for digest, key in configs}
        self._conversation_slugs: dict[str, dict[str, str]] = {}
        self._corpus_slugs: dict[str, dict[str, str]] = {}
        # (run id, conversation id) -> test point turn -> the drill-down page it is on (0: the first)
        self._point_pages: dict[tuple[str, str], dict[int, int]] = {}
        # Each corpus's benchmark, from its oldest run (a later run under another folder name moves nothing).
        self._benchmark: dict[str, str] = {}
        for s in reversed(summaries):
            self._benchmark.setdefault(
                s.corpus_digest, benchmark_key(s.corpus_name, s.benchmark, s.corpus_digest, s.corpus_release)
            )
        self.benchmark_slug = unique_slugs(list(self._benchmark.values()))

    def benchmark(self, digest: str) -> str:
        """The benchmark (:func:`benchmark_key`) a corpus is shown under."""
        return self._benchmark[digest]

    def leaderboard(self, benchmark: str) -> str:
        """A benchmark's own leaderboard; ``index.html`` is the front page listing every benchmark."""
        return f"leaderboard-{self.benchmark_slug[benchmark]}.html"

    def suspects(self, benchmark: str) -> str:
        """The test points of a benchmark whose evidence labels the label audit flags."""
        return f"suspects-{self.benchmark_slug[benchmark]}.html"

    def compare_section(self, digest: str, key: str) -> str:
        """A configuration's section of the compare page."""
        return f"compare.html#cmp-{self.config_slug[self._config_name[(digest, key)]]}"

    def run(self, run_id: str) -> str:
        return f"runs/{self.run_slug[run_id]}.html"

    def run_json(self, run_id: str) -> str:
        """The run's document in the original harness's shape, gzipped."""
        return f"runs/{self.run_slug[run_id]}.json.gz"

    def set_corpus(self, digest: str, conversation_ids: list[str]) -> None:
        """Name the transcript pages of a corpus's conversations."""
        self._corpus_slugs[digest] = unique_slugs(conversation_ids)

    def transcript(self, digest: str, conversation_id: str) -> str:
        """A conversation's transcript, once per corpus."""
        return f"{corpus_dir(digest)}/c/{self._corpus_slugs[digest][conversation_id]}.html"

    def transcript_turn_text(self, digest: str, conversation_id: str, turn: int) -> str:
        """A long turn, whole, as plain text."""
        return f"{corpus_dir(digest)}/c/{self._corpus_slugs[digest][conversation_id]}/turn-{turn}.txt"

    def set_conversations(self, run_id: str, conversation_ids: list[str]) -> None:
        """Name the drill-downs of a run; known only once the run itself is read."""
        self._conversation_slugs[run_id] = unique_slugs(conversation_ids)

    def conversations(self, run_id: str) -> list[str]:
        """Every drill-down of a run, by conversation id order."""
        return [self.conversation(run_id, cid) for cid in sorted(self._conversation_slugs[run_id])]

    def conversation(self, run_id: str, conversation_id: str, page: int = 0) -> str:
        """A conversation's drill-down: its first page, or page ``page`` (0-based) of a long one."""
        suffix = f"~{page + 1}" if page else ""  # "~" is in no slug, so no conversation's page is another's
        return f"runs/{self.run_slug[run_id]}/{self._conversation_slugs[run_id][conversation_id]}{suffix}.html"

    def set_test_points(self, run_id: str, conversation_id: str, turns: list[int]) -> None:
        """Place a conversation's test points (their turns, in order) on drill-down pages."""
        self._point_pages[(run_id, conversation_id)] = {turn: page_of(position) for position, turn in enumerate(turns)}

    def place_run(self, run_id: str, conversations: Iterable[Any]) -> None:
        """Place every test point of a run's conversations (each with ``conversation_id`` and ``test_points``)."""
        for conversation in conversations:
            self.set_test_points(run_id, conversation.conversation_id, [p.turn_index for p in conversation.test_points])

    def test_point(self, run_id: str, conversation_id: str, turn_index: int) -> str:
        """A test point's section on its drill-down page (set_test_points says which page; else the first)."""
        page = self._point_pages.get((run_id, conversation_id), {}).get(turn_index, 0)
        return f"{self.conversation(run_id, conversation_id, page)}#{test_point_anchor(turn_index)}"

    def history(self, digest: str, key: str) -> str:
        return f"history/{self.config_slug[self._config_name[(digest, key)]]}.html"


def links_to_test_points(store: Store, site_url: str) -> Callable[[StoredRun, str, int], str]:
    """A function giving a test point's drill-down address under ``site_url`` (the published site's
    root), placed as the site places a stored run's pages; the gate links each flipped point with it."""
    paths = Paths(store.runs())

    def link(stored: StoredRun, conversation_id: str, turn_index: int) -> str:
        run_id = stored.summary.run_id
        paths.set_conversations(run_id, [c.conversation_id for c in stored.run.conversations])
        paths.place_run(run_id, stored.run.conversations)
        return f"{site_url.rstrip('/')}/{paths.test_point(run_id, conversation_id, turn_index)}"

    return link
