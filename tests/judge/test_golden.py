"""Golden numbers on tests/fixtures/golden, worked out by hand in the comments.

Token counts are cl100k_base's: "my favourite colour is teal"=5, "noted"=2,
"the cat sat on the mat"=6, "ok"=1, "what time is it"=4, "it is noon"=3,
"thanks"=1, "paint the fence for me"=5, "done"=1, "Gate code is 4417"=6,
"<|endoftext|>"=7 (as plain text), "open the gate"=3; the summaries S1=12
and S3=39 tokens.
"""


import pytest
from helpers import FIXTURES

from evals.run.evaluate import RunConfig, evaluate
from evals.strategies import SummaryBuffer, concatenate_summary
from evals.views.report import recall_block, tokens_block

GOLDEN = FIXTURES / "golden"

S1 = "Earlier in the conversation: user: my favourite colour is teal"
S2 = f"Earlier in the conversation: system: {S1} | assistant: noted"
S3 = f"Earlier in the conversation: system: {S2} | user: the cat sat on the mat"


def run(runner: str, **kwargs):
    return evaluate(RunConfig(strategy=runner, corpus=GOLDEN, **kwargs))


def records(result) -> list[list[str]]:
    return [tp.retrieved_records for c in result.run.conversations for tp in c.test_points]


def test_files_are_played_in_name_order():
    """Conversations come out in file-name order, every file included."""
    ids = [c.conversation_id for c in run("no_memory").run.conversations]
    assert ids == ["01_colour", "02_gate", "03_chat"]


def test_no_memory_numbers():
    """no_memory retrieves nothing: recall 0 of 4 and zero tokens."""
    scores = run("no_memory").scores
    assert (scores.hits, scores.total, scores.recall, scores.context_tokens) == (0, 4, 0.0, 0)


def test_full_history_retrieves_every_earlier_turn_ignoring_k():
    """full_history returns all earlier turns in order, even past k."""
    got = records(run("full_history", k=2))
    assert got[1] == [
        "my favourite colour is teal", "noted", "the cat sat on the mat", "ok",
        "what time is it", "it is noon", "thanks", "paint the fence for me", "done",
    ]


def test_full_history_numbers():
    """full_history: 3 of 4 hits (the one-record fact fallback misses); 22+28+13+16 tokens."""
    scores = run("full_history").scores
    assert recall_block(scores)["hits"] == 3
    assert scores.recall == 0.75
    assert tokens_block(scores)["aggregate_context_tokens"] == 79
    assert tokens_block(scores)["aggregate_tokens_per_test_point"] == 19.75


def test_summary_buffer_records():
    """summary_buffer: summary first, then the recent turns, cut to k."""
    got = records(run("summary_buffer"))
    assert got[0] == [S1, "noted", "the cat sat on the mat", "ok", "what time is it"]
    assert got[1] == [S3, "ok", "what time is it", "it is noon", "thanks"]


def test_summary_buffer_numbers():
    """summary_buffer: 3 of 4 hits; 25 + 48 + 13 + 16 = 102 tokens."""
    scores = run("summary_buffer").scores
    assert (scores.hits, scores.total, scores.context_tokens) == (3, 4, 102)
    assert tokens_block(scores)["per_conversation"]["01_colour"] == {
        "context_tokens_sum": 73, "test_points": 2, "context_tokens_per_test_point": 36.5,
    }


def test_default_summary_nests_previous_summary():
    """The default summariser folds the previous summary in as a system message."""
    assert concatenate_summary([{"role": "system", "content": S1}, {"role": "assistant", "content": "noted"}]) == S2


def test_summarize_fn_hook_replaces_the_summariser():
    """A summarize_fn callback receives the messages and its text becomes the summary."""
    seen = []

    def first_words(messages):
        seen.append(messages)
        return "summary " + str(len(seen))

    buffer = SummaryBuffer(summarize_fn=first_words)
    for i in range(8):
        buffer.add("user", f"turn {i}")
    assert buffer.retrieve("q", 2) == ["summary 2", "turn 2"]
    assert seen[1] == [{"role": "system", "content": "summary 1"}, {"role": "user", "content": "turn 1"}]


def test_conversation_without_test_points_has_null_recall():
    """A conversation with no test point reports recall null, never 0."""
    block = recall_block(run("full_history").scores)
    assert block["per_conversation"]["03_chat"] == {"hits": 0, "total": 0, "recall": None}


def test_fact_fallback_needs_one_record():
    """With no keywords, the expected fact must lie inside a single record."""
    per = recall_block(run("full_history").scores)["per_conversation"]
    assert per["02_gate"] == {"hits": 1, "total": 2, "recall": 0.5}


def test_keywords_match_case_insensitively():
    """Keyword "TEAL" matches the record text "teal"."""
    scores = run("full_history").scores
    assert scores.points[0][0].hit


def test_special_token_text_is_counted_as_text():
    """"<|endoftext|>" in a record counts as 7 ordinary tokens, not an error."""
    scores = run("full_history").scores
    assert scores.points[1][0].record_tokens == [6, 7]


def test_mneme_hash_pinned_regression():
    """mneme with the hash embedder: pinned numbers on the golden corpus."""
    scores = run("mneme").scores
    assert (scores.hits, scores.total, scores.context_tokens) == (3, 4, 58)


def test_mneme_hash_pinned_records():
    """mneme with the hash embedder: the first test point's records, pinned in rank order."""
    assert records(run("mneme"))[0] == ["ok", "what time is it", "thanks", "my favourite colour is teal", "noted"]


@pytest.mark.parametrize("runner", ["mneme"])
def test_sqlite_backend_matches_memory(runner):
    """mneme on the sqlite backend retrieves exactly what the memory backend does."""
    memory = run(runner)
    sqlite = run(runner, options={"backend": "sqlite"})
    assert records(sqlite) == records(memory)
    assert sqlite.run.strategy["backend"] == "SQLiteBackend"


def test_lazy_default_summary_equals_repeated_concatenation():
    """The default summary, built lazily, is the text repeated concatenate_summary calls give."""
    lazy = SummaryBuffer()
    eager = SummaryBuffer(summarize_fn=lambda messages: concatenate_summary(messages))
    for i in range(40):
        lazy.add("user" if i % 2 else "assistant", f"turn {i} | with a bar")
        eager.add("user" if i % 2 else "assistant", f"turn {i} | with a bar")
        assert lazy.retrieve("q", 3) == eager.retrieve("q", 3)
