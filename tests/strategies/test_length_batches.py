"""Embedding batches formed by length (:func:`evals.strategies.embedders.length_batches`): every text once,
sorted by word pieces, padding at most MAX_PADDING of the real word pieces, the same batches for the same lengths."""

from __future__ import annotations

import random

from evals.strategies.embedders import MAX_PADDING, length_batches


def padding(lengths: list[int], batches: list[list[int]]) -> float:
    """Word pieces the batches add by padding each text to its batch's longest, over the real ones."""
    padded = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    return padded / sum(lengths) - 1


def spread(seed: int, count: int) -> list[int]:
    """Word-piece counts shaped like a chat corpus: mostly short turns, a long tail up to MiniLM's 256."""
    rng = random.Random(seed)
    return [min(256, 3 + int(rng.lognormvariate(3.2, 0.7))) for _ in range(count)]


def test_every_text_is_in_exactly_one_batch():
    """The batches hold each position once, none larger than the size asked."""
    lengths = spread(0, 1000)
    batches = length_batches(lengths, 32)
    assert sorted(i for batch in batches for i in batch) == list(range(1000))
    assert max(len(batch) for batch in batches) == 32


def test_batches_are_sorted_by_length_ties_by_position():
    """Read batch after batch, the texts go by word pieces, then by position."""
    lengths = spread(1, 500)
    order = [i for batch in length_batches(lengths, 16) for i in batch]
    assert order == sorted(range(500), key=lambda i: (lengths[i], i))


def test_padding_stays_within_its_share_even_on_a_sparse_tail():
    """Each batch pads at most MAX_PADDING of its word pieces, also where few texts share a length."""
    for seed in range(5):
        lengths = spread(seed, 300) + [256, 200, 150, 90, 7]
        batches = length_batches(lengths, 64)
        assert padding(lengths, batches) <= MAX_PADDING
        assert all(padding(lengths, [batch]) <= MAX_PADDING for batch in batches)


def test_equal_lengths_fill_whole_batches():
    """Texts of one length make full batches: no padding, nothing closed early."""
    assert [len(b) for b in length_batches([12] * 100, 32)] == [32, 32, 32, 4]


def test_no_texts_no_batches():
    """An empty list makes no batch."""
    assert length_batches([], 32) == []
