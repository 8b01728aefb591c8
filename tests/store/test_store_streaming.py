"""The store's rows at scale: each conversation stored with its digest, a run's rows written in batches
bounded by text, summaries stored as references to the turns they fold; older stores upgraded to match."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from helpers.corpora import generated_longmemeval
from helpers.results import as_stored

from evals.judge.scoring import Evaluation, score_run
from evals.model.corpus import Conversation, Corpus, corpus_digest, load_corpus
from evals.model.provenance import Provenance
from evals.model.results import ConversationResult, RunResult, TestPointResult
from evals.model.tokens import TokenCounter
from evals.run.playthrough import play_corpus
from evals.store import MIGRATIONS, Store, StoreError, _records
from evals.store._records import CORPUS_BATCH, compact_text, content_digest, expand_text
from evals.strategies import FullHistory, SummaryBuffer

PROVENANCE = Provenance(commit="a" * 40, dirty=False, package_version="0.1.0", mneme_version=None, python_version="3")
SHARED = "a session turn that several conversations share, as LongMemEval's haystacks do"


def test_stored_conversations_keep_their_digest_and_a_store_from_before_compares_texts(tmp_path):
    """Each stored conversation keeps its content digest, which a later run on the corpus compares;
    rows stored before (no digest) are compared text by text, and a difference is still found."""
    corpus = load_corpus(generated_longmemeval(tmp_path))
    run = play_corpus(corpus, FullHistory(), ignores_k=True)
    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    store = tmp_path / "new.duckdb"
    with Store.open(store) as opened:
        opened.append(evaluation, PROVENANCE)
        opened.append(evaluation, PROVENANCE)
        rows = opened._con.execute("SELECT content_digest FROM conversations ORDER BY position").fetchall()
    assert [digest for (digest,) in rows] == [content_digest(c) for c in corpus.conversations]

    old = tmp_path / "old.duckdb"
    # The store as it was before conversation digests (migrations added since come after it).
    before = next(i for i, m in enumerate(MIGRATIONS) if m.name == "conversation_digests_compact_summaries")
    with Store.open(old, migrations=MIGRATIONS[:before]) as opened:
        opened.append(evaluation, PROVENANCE)
    with Store.open(old) as opened:  # upgraded: the rows stored before have no digest
        assert opened._con.execute("SELECT count(*) FROM conversations WHERE content_digest IS NULL").fetchone() == (3,)
        opened.append(evaluation, PROVENANCE)
        opened._con.execute("UPDATE conversation_turns SET content = 'an edited turn' WHERE position = 2 AND turn_index = 0")
        with pytest.raises(StoreError, match=r"\(conversation '002_q00002', turn 0\); refusing to mix them"):
            opened.append(evaluation, PROVENANCE)


def test_run_rows_go_in_batches_bounded_by_text(tmp_path, monkeypatch):
    """A run's rows are written in batches of at most RUN_BATCH_CHARS of retrieved text (one conversation
    when a single one has more), and read back the same as when written in one batch."""
    corpus = load_corpus(generated_longmemeval(tmp_path))
    run = play_corpus(corpus, SummaryBuffer())
    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    assert list(_records.run_batches(run)) == [(0, 3)]
    monkeypatch.setattr(_records, "RUN_BATCH_CHARS", 1)
    assert list(_records.run_batches(run)) == [(0, 1), (1, 2), (2, 3)]
    stored = []
    for name, chars in (("one.duckdb", 64 * 1024**2), ("three.duckdb", 1)):
        monkeypatch.setattr(_records, "RUN_BATCH_CHARS", chars)
        with Store.open(tmp_path / name) as opened:
            got = opened.get_run(opened.append(evaluation, PROVENANCE))
        stored.append((got.run.conversations, got.scores.points))
    assert stored[0] == stored[1]
    assert stored[0][0] == as_stored(run).conversations


def test_default_summaries_are_stored_as_references_and_read_back_whole(tmp_path):
    """summary_buffer's default summaries are stored as "\\0summary N" (not megabytes of text) and read
    back as the same text; a record that merely starts with NUL, or looks like a summary but is not
    one, is kept as it is."""
    turns = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i} says \x00 something {i}"} for i in range(30)]
    turns[5]["record"] = False
    turns.append({"role": "user", "content": "q", "record": False, "test_at": {"question": "q", "expected_fact": "turn 3 says"}})
    turns.append({"role": "user", "content": "q2", "record": False, "test_at": {"question": "q2", "expected_fact": "turn 9"}})
    conversations = [Conversation(id="c", description="d", turns=turns)]
    corpus = Corpus(directory=tmp_path, conversations=conversations, digest=corpus_digest(conversations))
    run = play_corpus(corpus, SummaryBuffer(), k=3)
    summary = run.conversations[0].test_points[0].retrieved_records[0]
    assert summary.startswith("Earlier in the conversation: system: ") and len(summary) > 500
    roles, contents = [t["role"] for t in turns], [t["content"] for t in turns]
    recorded = [t.get("record", True) for t in turns]
    stored = compact_text(summary, 30, roles, contents, recorded)
    assert stored == "\x00summary 23"  # 29 recorded turns before the question, 6 kept verbatim
    assert expand_text(stored, 30, roles, contents, [5, 30, 31]) == summary
    for text in ("\x00summary 23", "\x00\x00", summary + " ", summary.replace("turn 3", "turn 4")):
        kept = compact_text(text, 30, roles, contents, recorded)
        assert not kept.startswith("\x00summary ") or kept == "\x00summary 23" and text == summary
        assert expand_text(kept, 30, roles, contents, [5, 30, 31]) == text

    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    with Store.open(tmp_path / "s.duckdb") as opened:
        got = opened.get_run(opened.append(evaluation, PROVENANCE))
        texts = opened._con.execute("SELECT record_texts FROM test_points ORDER BY turn_index").fetchall()
    assert texts == [(["\x00summary 23"],), (["\x00summary 23"],)]
    assert got.run.conversations == as_stored(run).conversations


def test_an_older_store_keeps_a_text_that_starts_with_nul(tmp_path):
    """Upgrading to schema 11 doubles the NUL a stored record text starts with, so it reads back as it was."""
    turns = [
        {"role": "user", "content": "hello"},
        {"role": "user", "content": "q", "test_at": {"question": "q", "expected_fact": "x"}},
    ]
    conversations = [Conversation(id="c", description="d", turns=turns)]
    corpus = Corpus(directory=tmp_path, conversations=conversations, digest=corpus_digest(conversations))
    point = TestPointResult(
        turn_index=1, question="q", expected_fact="x", expected_keywords=[], retrieved_records=["\x00summary 1", "\x00odd"]
    )
    run = RunResult(
        strategy={"name": "odd"}, model="none", k=5, seed=42, corpus_dir=str(tmp_path), corpus_digest=corpus.digest,
        started_at=datetime.now(UTC), duration_s=0.0,
        conversations=[ConversationResult(conversation_id="c", description="d", turn_count=2, test_points=[point])],
    )  # fmt: skip
    evaluation = Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))
    path = tmp_path / "old.duckdb"
    with Store.open(path, migrations=MIGRATIONS[: _version_of("conversation_digests_compact_summaries") - 1]) as opened:
        run_id = opened.append(evaluation, PROVENANCE)
    with Store.open(path) as opened:
        assert opened.get_run(run_id).run.conversations[0].test_points[0].retrieved_records == ["\x00summary 1", "\x00odd"]
        again = opened.get_run(opened.append(evaluation, PROVENANCE))
    assert again.run.conversations[0].test_points[0].retrieved_records == ["\x00summary 1", "\x00odd"]


def _version_of(name: str) -> int:
    """A migration's version, by its name: later migrations append after it (the protocols' among them)."""
    return next(m.version for m in MIGRATIONS if m.name == name)


# -- a corpus of more conversations than one write batch -------------------------------------------------

def evaluation(conversations: list[Conversation]) -> Evaluation:
    corpus = Corpus(directory=Path("many"), conversations=conversations, digest=corpus_digest(conversations))
    run = play_corpus(corpus, FullHistory(), ignores_k=True)  # the oracle keeps its whole list, as a registered run does
    return Evaluation(corpus=corpus, run=run, scores=score_run(run, TokenCounter(exact=False)))


def conversations(count: int, edited: int | None = None) -> list[Conversation]:
    made = []
    for c in range(count):
        first = "an edited turn" if c == edited else f"conversation {c} says hello"
        turns = [{"role": "user", "content": first}, {"role": "assistant", "content": SHARED}]
        turns.append({"role": "user", "content": "q", "test_at": {"question": "q", "expected_fact": "hello"}})
        made.append(Conversation(id=f"c{c:03d}", description="d", turns=turns))
    return made


def test_a_corpus_over_several_batches_round_trips(store_path):
    """A corpus longer than one write batch is stored whole and in order, and a second run on it is accepted."""
    count = 2 * CORPUS_BATCH + 3
    with Store.open(store_path) as store:
        first = store.append(evaluation(conversations(count)), PROVENANCE)
        store.append(evaluation(conversations(count)), PROVENANCE)
        stored = store.get_run(first)
    assert [c.conversation_id for c in stored.run.conversations] == [f"c{c:03d}" for c in range(count)]


def test_a_difference_past_the_first_batch_is_found(store_path):
    """Text stored under a digest that differs in a late conversation is refused, naming that conversation and turn."""
    count = 2 * CORPUS_BATCH + 3
    genuine = evaluation(conversations(count))
    # The state an unchecked import of old left: other text under the genuine corpus's digest.
    edited = Corpus(Path("many"), conversations(count, edited=count - 2), genuine.corpus.digest)
    forged = Evaluation(corpus=edited, run=genuine.run, scores=genuine.scores)
    with Store.open(store_path) as store:
        store.append(forged, PROVENANCE)
        with pytest.raises(StoreError, match=rf"conversation 'c{count - 2:03d}', turn 0\); refusing to mix them"):
            store.append(genuine, PROVENANCE)
