"""Intervals, strict recall, MRR and McNemar's test on the command line: compare and leaderboard."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from helpers.cli import run_id_of
from helpers.html import markdown_rows

from evals.cli import cli
from evals.judge.stats import wilson_interval
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.store import MIGRATIONS, Store

OLD = Provenance(commit="0ld" * 13 + "0", dirty=False, package_version="0.1.0", mneme_version="1.0.0", python_version="3.11.7")


@pytest.fixture
def evals(store_path):
    """Invoke `evals ARGS... --store <temp store>` in-process; returns click's Result."""

    def invoke(*args: str):
        result = CliRunner().invoke(cli, [*args, "--store", str(store_path)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result

    return invoke


def test_compare_prints_mcnemar_p_worked_by_hand(evals, corpus_small):
    """full_history vs no_memory on 4 test points: 4 hit by A only, 0 by B only, so p = 2 * (1/2)^4 = 0.125."""
    full = run_id_of(evals("run", "--runner", "full_history", "--corpus", str(corpus_small)).output)
    none = run_id_of(evals("run", "--runner", "no_memory", "--corpus", str(corpus_small)).output)
    output = evals("compare", full, none).output
    assert "McNemar exact test (paired, two-sided) over 4 shared test points: 4 by A only vs 0 by B only, p = 0.1250" in output


def test_compare_shows_each_recall_with_its_interval(evals, corpus_small):
    """Each run's line gives recall with its 95% Wilson interval, strict recall and MRR."""
    full = run_id_of(evals("run", "--runner", "full_history", "--corpus", str(corpus_small)).output)
    none = run_id_of(evals("run", "--runner", "no_memory", "--corpus", str(corpus_small)).output)
    lines = evals("compare", full, none).output.splitlines()
    low, high = wilson_interval(4, 4)
    assert f"keyword hit@k 4/4 = 1.000 [{low:.3f}, {high:.3f}]" in lines[0]
    assert "strict 1.000" in lines[0] and "MRR 0.833" in lines[0]
    assert "keyword hit@k 0/4 = 0.000" in lines[1] and "MRR 0.000" in lines[1]


def test_leaderboard_markdown_is_one_table_per_corpus_with_intervals(evals, corpus_small):
    """--format markdown: a header, a separator and one row per configuration, recall with its interval."""
    for runner in ("no_memory", "full_history", "recency"):
        evals("run", "--runner", runner, "--corpus", str(corpus_small))
    text = evals("leaderboard", "--format", "markdown").output
    rows = markdown_rows(text)
    assert rows[0][:4] == ["strategy", "model", "k", "keyword hit@k [95% CI]"]
    assert set(rows[1][0]) <= set("-:")
    # As the site's board: the memories ranked, then the ceilings.
    assert [r[0] for r in rows[2:]] == ["recency", "no_memory", "full_history (ceiling)"]
    low, high = wilson_interval(4, 4)
    assert rows[4][3] == f"1.000 [{low:.3f}, {high:.3f}]"
    assert text.count("**Corpus `corpus_small`**") == 1


def test_leaderboard_markdown_shows_unknown_numbers_as_dashes(store_path, evals, corpus_small):
    """A run stored before strict recall and MRR were recorded shows "—" for them, never 0."""
    with Store.open(store_path, migrations=MIGRATIONS[:2]) as store:
        store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus_small)), OLD)
    evals("migrate")
    row = markdown_rows(evals("leaderboard", "--format", "markdown").output)[2]
    assert row[4:6] == ["—", "—"]
    assert row[3].startswith("1.000 [")


def test_empty_store_prints_a_markdown_note(evals, store_path, corpus_small):
    """No runs: a one-line Markdown note instead of an empty table."""
    with Store.open(store_path):
        pass
    assert evals("leaderboard", "--format", "markdown").output == "_No runs in the store yet._\n"


def test_runs_json_carries_cache_counts(evals, corpus_small):
    """`evals runs --format json` has the run's cache hits and misses (0 and 0 with the hash embedder)."""
    import json

    evals("run", "--runner", "mneme", "--corpus", str(corpus_small))
    evals("run", "--runner", "mneme", "--corpus", str(corpus_small), "--no-cache")
    rows = json.loads(evals("runs", "--format", "json").output)
    assert [(r["cache_hits"], r["cache_misses"]) for r in rows] == [(None, None), (0, 0)]


def test_runs_table_shows_embeddings_computed_and_cached(evals, store_path, corpus_small):
    """`evals runs` shows each run's embeddings computed/cached; "—" for a run made without the cache."""
    with Store.open(store_path) as store:
        store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus_small)), OLD, cache_hits=21, cache_misses=2)
        store.append(evaluate(RunConfig(strategy="no_memory", corpus=corpus_small)), OLD)
    lines = evals("runs").output.splitlines()
    assert lines[0].split()[-2:] == ["emb", "new/cached"]
    assert {line.split()[3]: line.split()[-1] for line in lines[1:]} == {"full_history": "2/21", "no_memory": "—"}
