"""A memory that writes with an LLM and wrote nothing: a failed run, never a stored score of 0."""

from __future__ import annotations

from helpers import PLUGINS
from helpers.cli import evals
from helpers.stores import failed_rows

from evals.store import Store


def test_a_memory_whose_llm_answered_but_that_wrote_nothing_fails_the_run(corpus_small, store_path, monkeypatch):
    """Its LLM answered every write, it retrieved nothing at any test point: the run fails, kept as a failed run with
    no figure."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    result = evals("run", "--runner", "mute_writer:SPEC", "--corpus", corpus_small, "--store", store_path)
    assert result.exit_code == 1, result.output
    assert "wrote nothing" in result.output
    assert "a failed run, not a score" in result.output
    (failed,) = failed_rows(store_path)
    assert "wrote nothing" in failed[3]
    with Store.open(store_path, read_only=True) as store:
        assert store.run_count() == 0


def test_a_memory_that_asked_its_llm_nothing_is_not_refused(corpus_small, store_path, monkeypatch):
    """The rule is for memories whose LLM answered: one that asked nothing and found nothing is scored as it is."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    result = evals(
        "run", "--runner", "mute_writer:SPEC", "--option", "replies=false", "--corpus", corpus_small, "--store", store_path
    )
    assert result.exit_code == 0, result.output
