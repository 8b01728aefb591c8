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
    if tokens._can_fork():
        counter.load_beside()
    assert not counter.is_exact
