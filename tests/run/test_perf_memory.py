"""What a run keeps in memory does not grow with the history it plays.

summary_buffer's summaries over long histories are kept as the turns they fold and read back as
the same texts; full_history's per-point rankings share their turn numbers and session ids; the
token counter keeps no long text. The figures at full size come from
bench/bench_memory_s.py; these check the behaviour on small files.
"""

from __future__ import annotations

import gc
import sys
import types

import pytest
from helpers import ROOT
from helpers.corpora import generated_longmemeval

from evals.model.corpus import load_corpus
from evals.model.tokens import DIGEST_ABOVE, TokenCounter
from evals.run.playthrough import play_corpus
from evals.strategies import FullHistory, SummaryBuffer
from evals.strategies import summary_buffer as summary_module
from evals.strategies.summary_buffer import FOLD_ABOVE, FoldedRecords, nested_summary


def longest_text(root: object) -> int:
    """The length of the longest string reachable from ``root`` (classes and modules not followed)."""
    seen: set[int] = set()
    stack, longest = [root], 0
    while stack:
        node = stack.pop()
        if id(node) in seen or isinstance(node, type | types.ModuleType | types.FunctionType):
            continue
        seen.add(id(node))
        if isinstance(node, str):
            longest = max(longest, len(node))
        else:
            stack.extend(gc.get_referents(node))
    return longest


def plain_replay(conversation) -> list[list[str]]:
    """What SummaryBuffer returns at each test point, played by hand (no harness around it)."""
    memory, found = SummaryBuffer(), []
    for turn in conversation.turns:
        if turn.test_at is not None:
            found.append(memory.retrieve(turn.test_at.question, 5))
        if turn.record:
            memory.add(turn.role, turn.content)
    return found


def test_long_summaries_are_kept_as_the_turns_they_fold_and_read_back_whole(tmp_path):
    corpus = load_corpus(generated_longmemeval(tmp_path))
    run = play_corpus(corpus, SummaryBuffer())
    for conversation, result in zip(corpus.conversations, run.conversations, strict=True):
        for point, expected in zip(result.test_points, plain_replay(conversation), strict=True):
            assert len(expected[0]) > FOLD_ABOVE  # the summary: long enough to be folded
            records = point.retrieved_records
            assert isinstance(records, FoldedRecords)
            assert list(records) == expected and records == expected and expected == records
            assert records[0] == expected[0] and records[1:] == expected[1:] and len(records) == len(expected)
    # Nothing the run holds is a summary's text: the turns are the corpus's, a pointer each.
    assert longest_text(run) < FOLD_ABOVE


def test_a_record_is_folded_only_when_it_is_the_summary_exactly():
    roles, contents = ("user", "assistant") * 3, tuple("x" * 20_000 + str(i) for i in range(6))
    summary = nested_summary(roles, contents, 5)
    assert len(summary) > FOLD_ABOVE
    turns = lambda: (roles, contents)  # noqa: E731
    folded = summary_module.fold_summaries([summary, "recent"], turns, before=5)
    assert isinstance(folded, FoldedRecords) and list(folded) == [summary, "recent"]
    # Not the summary of the turns before the point, or not exactly it: kept as text.
    for records, before in (([summary], 4), ([summary + " "], 5), ([summary.replace("x", "y", 1)], 5), (["short"], 5)):
        assert summary_module.fold_summaries(records, turns, before=before) is records


def test_folding_changes_no_document_byte_and_no_stored_value(tmp_path, monkeypatch):
    """``python -m evals`` and ``evals run`` give the same document, and the store the same rows,
    with summaries folded and with them kept as text."""
    from click.testing import CliRunner

    from evals.cli import cli, legacy_cli
    from evals.store import Store

    folder = generated_longmemeval(tmp_path)
    seen = []
    for fold_above in (FOLD_ABOVE, 10**12):
        monkeypatch.setattr(summary_module, "FOLD_ABOVE", fold_above)
        legacy, output, store = (tmp_path / f"{name}{fold_above}" for name in ("legacy.json", "run.json", "s.duckdb"))
        done = CliRunner().invoke(legacy_cli, ["--runner", "summary_buffer", "--corpus", str(folder), "--output", str(legacy)])
        assert done.exit_code == 0, done.output
        done = CliRunner().invoke(
            cli,
            [
                "run",
                "--runner",
                "summary_buffer",
                "--corpus",
                str(folder),
                "--store",
                str(store),
                "--output",
                str(output),
                "--no-cache",
            ],
        )
        assert done.exit_code == 0, done.output
        with Store.open(store, read_only=True) as opened:
            rows = opened._con.execute(
                "SELECT * EXCLUDE (run_id) FROM test_points ORDER BY conversation_id, turn_index"
            ).fetchall()
            metrics = opened._con.execute(
                "SELECT metric, value, n FROM run_metrics WHERE metric NOT LIKE '%latency%' "
                "AND metric NOT IN ('ingest_cpu_s_per_1k_turns', 'peak_rss_mb') ORDER BY metric"  # measured, as latency
            ).fetchall()
        document = output.read_text()
        seen.append((legacy.read_bytes(), rows, metrics, document[: document.index('"latency"')]))
    assert any(
        "\x00summary " in text
        for row in seen[0][1]
        for value in row
        if isinstance(value, list)
        for text in value
        if isinstance(text, str)
    )
    assert seen[0] == seen[1]


def test_full_history_points_share_turn_numbers_and_session_ids(tmp_path):
    """Each test point's ranking names every earlier turn and its session (480 a point here, 5,000 over
    a LongMemEval_m haystack): the numbers and ids are shared objects, not new ones per point."""
    corpus = load_corpus(generated_longmemeval(tmp_path))
    run = play_corpus(corpus, FullHistory(), ignores_k=True, cutoffs=(1, 5))
    points = [p for c in run.conversations for p in c.test_points]
    assert len(points) == 3 and all(len(p.ranked_turns) > 400 for p in points)
    first, second = points[0], points[1]
    assert all(a is b for a, b in zip(first.ranked_turns, second.ranked_turns, strict=False))  # 300 is 300 across points
    for point in points:
        assert point.retrieved_turns is point.ranked_turns  # one list where they are the same list
        assert len(set(map(id, point.ranked_sessions))) == len(set(point.ranked_sessions))
    # Call timings: a machine integer per call, read and written as a list of ints.
    assert run.timings.add_ns.itemsize == 8 and len(run.timings.add_ns) == sum(len(c.turns) - 1 for c in corpus.conversations)
    assert run.timings.model_dump()["add_ns"] == list(run.timings.add_ns)


def test_long_texts_are_counted_exactly_and_not_kept(tmp_path):
    """A text over DIGEST_ABOVE is counted as the whole text encodes, remembered by digest only; a run's
    folded summaries count as their texts do."""
    counter = TokenCounter()
    if not counter.is_exact:
        pytest.skip("cl100k_base is not available")
    encoding = counter._encoder()
    roles, contents = ("user", "assistant") * 4, tuple(f"turn {i} holds <|endoftext|> and words. " * 400 for i in range(8))
    texts = [nested_summary(roles, contents, depth) for depth in (5, 8)]
    assert all(len(t) > DIGEST_ABOVE for t in texts)
    folded = FoldedRecords([5, 8, "a recent turn"], roles, contents)
    counter.count_all(folded)
    assert counter.counts(folded) == [len(encoding.encode_ordinary(t)) for t in [*texts, "a recent turn"]]
    assert counter.counts(list(folded)) == counter.counts(folded)  # remembered: the same count again
    assert max(map(len, counter._counts)) <= DIGEST_ABOVE


# -- the harness's own time (bench/bench_overhead.py) ---------------------------------------------


def test_a_run_counting_few_texts_loads_the_tokenizer_beside_the_play(tmp_path):
    """``python -m evals --runner mneme`` counts a few thousand records: cl100k is loaded by a child
    while the turns play, never by the run's own process, and the counts are the same."""
    import subprocess

    from evals.run.evaluate import RunConfig, evaluate

    script = (
        "import sys\nfrom pathlib import Path\nfrom evals.run.evaluate import RunConfig, evaluate\n"
        "e = evaluate(RunConfig(strategy='mneme', corpus=Path('corpus'), cutoffs=()), held_tokens=False)\n"
        "print(e.scores.tokenizer, 'tiktoken' in sys.modules, [p.record_tokens for c in e.scores.points for p in c])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    tokenizer, loaded, counts = done.stdout.split(" ", 2)
    if tokenizer != "cl100k_base":
        pytest.skip("cl100k_base is not available")
    assert loaded == "False"
    # Counted in this process instead (a memory's footprint makes the run count many texts ahead).
    expected = evaluate(RunConfig(strategy="mneme", corpus=ROOT / "corpus", cutoffs=()), held_tokens=True)
    assert counts.strip() == str([p.record_tokens for c in expected.scores.points for p in c])


def test_a_tokenizer_child_that_dies_leaves_the_counting_to_this_process():
    import os
    import signal

    counter = TokenCounter()
    counter.load_beside()
    if counter._beside is None:
        pytest.skip("this process cannot fork a child")
    os.kill(counter._beside.pid, signal.SIGKILL)
    texts = ["one text", "another <|endoftext|> text", "one text"]
    counter.count_all(texts)
    encoding = counter._encoder()
    assert counter.counts(texts) == [len(encoding.encode_ordinary(t)) for t in texts]
    assert counter._beside is None
