"""LoCoMo-Plus: a stand-in of its data/ folder, fetched through a local HTTP server and stitched into LoCoMo as its
data/unified_input.py does (item i into conversation i % n; the cue time_gap before a query a week after the last
session, sorted by time)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.benchmark_server import BenchmarkServer
from helpers.graded import PLUS_ITEMS
from helpers.protocol_sources import served

from evals.benchmarks import BENCHMARKS
from evals.benchmarks.locomo_plus import COMMIT, REPOSITORY
from evals.benchmarks.locomo_plus.importer import CUE_SESSION, parse_time_gap
from evals.cli import cli
from evals.model.corpus import load_corpus

LOCOMO = (FIXTURES / "importers" / "locomo_small.json").read_bytes()  # sessions 8 and 20 May 2023
PREFIX = f"{REPOSITORY}/{COMMIT}/data"


@pytest.fixture
def corpus(tmp_path, monkeypatch) -> Iterator[Path]:
    """locomo_plus pinned to the stand-in data/ folder, served at OWNER/REPO/COMMIT/PATH, fetched; the corpus folder."""
    plus = json.dumps(PLUS_ITEMS).encode()
    bodies = {"locomo10.json": LOCOMO, "locomo_plus.json": plus}
    entry = BENCHMARKS["locomo_plus"]
    tree = tuple(
        replace(f, sha256=hashlib.sha256(body).hexdigest(), size=len(body))
        for f in entry.tree
        for body in [bodies[f.name.rsplit("/", 1)[1]]]
    )
    sources, served_sources = served("locomo_plus", entry.sources)  # what --protocol locomo_plus reads
    monkeypatch.setitem(BENCHMARKS, "locomo_plus", replace(entry, tree=tree, sources=sources))
    with BenchmarkServer() as server:
        server.files.update({f"{PREFIX}/{name}": body for name, body in bodies.items()} | served_sources)
        (tmp_path / "repo").mkdir()
        env = {"EVALS_MIRROR": server.mirror(), "EVALS_DOWNLOADS": str(tmp_path / "dl")}
        env["EVALS_BENCHMARKS_LOCK"] = str(tmp_path / "repo" / "lock")
        result = CliRunner().invoke(cli, ["fetch", "locomo_plus"], env=env)
        assert result.exit_code == 0, result.output
        assert all(r.startswith(f"/ok/{REPOSITORY}/{COMMIT}/") for r in server.requests)
    yield tmp_path / "dl" / "corpora" / "locomo_plus"


def point(corpus: Path, position: int):
    conversation = load_corpus(corpus).conversations[position]
    ((index, found),) = conversation.test_points()
    return conversation, index, found


def test_each_item_goes_into_conversation_i_mod_n(corpus):
    """Item 0 and item 2 go into LoCoMo's first conversation (Ann and Bob), item 1 into its second (Cy and Dee)."""
    assert [c.id for c in load_corpus(corpus).conversations] == ["000_plus-conv-1", "001_plus-locomo-1", "002_plus-conv-1"]


def test_the_cue_is_its_evidence_placed_by_its_time_gap(corpus):
    """Two weeks before a query a week after 20 May: 13 May, between the sessions of 8 and 20 May (3 turns in)."""
    conversation, _, found = point(corpus, 0)
    assert found.evidence_turns == [3, 4] and found.evidence_sessions == [CUE_SESSION]
    assert [conversation.turns[i].content for i in found.evidence_turns] == ["Ann: I learned to say no.", "Bob: Good for you."]
    assert conversation.turns[2].session == "session_1" and conversation.turns[5].session == "session_2"


def test_a_cue_before_every_session_comes_first(corpus):
    """One month before a query a week after 2 June: before the only session."""
    _, _, found = point(corpus, 1)
    assert found.evidence_turns == [0]


def test_an_unreadable_gap_puts_the_cue_last(corpus):
    """A time_gap build_conv.py cannot read is 0 days: the cue sits after every session, just before the query."""
    conversation, index, found = point(corpus, 2)
    assert found.evidence_turns == [index - 1] and conversation.turns[index - 1].content == "Bob: I plan to learn Greek."


def test_the_trigger_is_the_question_in_the_speakers_names(corpus):
    """A and B become speaker_a and speaker_b; the trigger query is the test point, never recorded."""
    conversation, index, found = point(corpus, 1)
    assert found.question == "Dee: Want to go running?" and not conversation.turns[index].record and found.category == "Cognitive"


def test_the_corpus_declares_locomo_plus(corpus):
    """benchmark.json names locomo_plus, so its own rule judges runs on it."""
    assert load_corpus(corpus).benchmark == "locomo_plus"


def test_time_gaps_are_read_as_build_conv_reads_them():
    """Weeks of 7 days, months of 30, years of 365, "a" as one; anything else 0."""
    assert [parse_time_gap(g) for g in ("two weeks later", "about a month later", "3 years later", "soon")] == [14, 30, 1095, 0]


def test_fetch_brings_the_judges_pinned_sources(corpus):
    """`evals fetch locomo_plus` puts the files --protocol locomo_plus reads at their repository paths, checked."""
    root = corpus.parent.parent / "sources" / REPOSITORY / COMMIT
    assert [s.path for s in BENCHMARKS["locomo_plus"].sources if not (root / s.path).is_file()] == []
    assert (root / "evaluation_framework" / "task_eval" / "prompt.py").read_text().count("PROMPT_TEMPLATES") == 1
