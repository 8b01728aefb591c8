"""`--executor ray`: conversations played as Ray tasks store what a local run stores.

One local Ray instance (`ray.init(num_cpus=2)`, about 6 s to start) serves the
whole module. They need the `ray` extra, which `tasks.py test` installs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import PLUGINS, ROOT
from helpers.stores import stored_rows

ray = pytest.importorskip("ray", reason="needs the ray extra: pip install -e '.[ray]'")

from evals.errors import EvalsError  # noqa: E402
from evals.run.evaluate import RunConfig  # noqa: E402
from evals.run.executors import RayExecutor  # noqa: E402
from evals.run.workflow import run_with_store  # noqa: E402

pytestmark = pytest.mark.slow

BUILT_INS = ["no_memory", "full_history", "summary_buffer", "mneme", "random_k", "recency", "bm25"]


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    """A local Ray instance for the module; workers find the test plug-ins through PYTHONPATH."""
    path = os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": path}})
    yield
    ray.shutdown()


def run(config: RunConfig, store: Path, executor=None, **kwargs):
    return run_with_store(config, store, force=True, repo=ROOT, executor=executor, **kwargs)


@pytest.mark.parametrize("strategy", BUILT_INS)
def test_ray_run_stores_what_a_local_run_stores(strategy, store_path):
    """Every built-in strategy's run on Ray stores the local run's rows, test point by test point, apart from timings."""
    config = RunConfig(strategy=strategy, corpus=ROOT / "corpus")
    local = run(config, store_path)
    remote = run(config, store_path, RayExecutor())
    assert stored_rows(store_path, remote.run_id) == stored_rows(store_path, local.run_id)


def test_a_ray_run_counts_retrievals_longer_than_asked_as_a_local_run_does(store_path, monkeypatch):
    """A strategy returning more records than asked: the Ray run stores the local run's count of such retrievals."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    config = RunConfig(strategy="greedy_strategy:SPEC", corpus=ROOT / "corpus")
    local = run(config, store_path)
    remote = run(config, store_path, RayExecutor())
    counts = [m for m in stored_rows(store_path, local.run_id)["run_metrics"] if m[0] == "retrievals_over_k"]
    assert counts[0][3][1] > 0
    assert stored_rows(store_path, remote.run_id)["run_metrics"] == stored_rows(store_path, local.run_id)["run_metrics"]


def test_minilm_embeddings_are_computed_once_on_workers_and_cached(corpus_small, tmp_path):
    """mneme with MiniLM on Ray embeds each distinct text once on the workers; the driver caches them all,
    and the run stores what a local run computing its own vectors stores."""
    pytest.importorskip("sentence_transformers", reason="needs the minilm extra")
    from evals.model.corpus import load_corpus
    from evals.run.executors import corpus_texts

    config = RunConfig(strategy="mneme", options={"embedder": "minilm"}, corpus=corpus_small)
    distinct = len(set(corpus_texts(load_corpus(corpus_small).conversations)))
    store = tmp_path / "ray.duckdb"
    remote = run(config, store, RayExecutor())
    assert (remote.cache_misses, remote.cache_hits) == (distinct, 0)
    again = run(config, store)  # a local run now finds every vector in the cache the driver wrote
    assert (again.cache_misses, again.cache_hits) == (0, distinct)
    fresh = run(config, tmp_path / "local.duckdb", use_cache=False)
    assert stored_rows(store, remote.run_id)["test_points"] == stored_rows(tmp_path / "local.duckdb", fresh.run_id)["test_points"]


def test_a_ray_run_reuses_a_local_run_of_the_same_inputs(corpus_small, store_path, clean_repo):
    """On a clean commit, a Ray run of a configuration the store already holds is answered from the store."""
    config = RunConfig(strategy="recency", corpus=corpus_small)
    local = run_with_store(config, store_path, repo=clean_repo)
    remote = run_with_store(config, store_path, repo=clean_repo, executor=RayExecutor())
    assert (remote.reused, remote.run_id) == (True, local.run_id)


def test_progress_is_reported_as_conversations_complete(corpus_small, store_path):
    """The progress callback hears of every conversation once, the count going up to the total."""
    seen = []
    run(
        RunConfig(strategy="recency", corpus=corpus_small),
        store_path,
        RayExecutor(),
        progress=lambda d, t, c: seen.append((d, t, c)),
    )
    assert [d for d, _, _ in seen] == [1, 2, 3]
    assert {c for _, _, c in seen} == {p.stem for p in corpus_small.glob("*.json")}


def test_a_worker_that_dies_is_retried(corpus_small, store_path, tmp_path, monkeypatch):
    """A conversation whose worker process dies on its first attempt is played again, and the run is whole."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    victim = sorted(p.stem for p in corpus_small.glob("*.json"))[1]
    options = {"marker": str(tmp_path / "died"), "victim": victim}
    remote = run(RunConfig(strategy="dying_strategy:SPEC", options=options, corpus=corpus_small), store_path, RayExecutor())
    assert (tmp_path / "died").exists()
    local = run(RunConfig(strategy="full_history", corpus=corpus_small), store_path)
    assert stored_rows(store_path, remote.run_id)["test_points"] == stored_rows(store_path, local.run_id)["test_points"]


def test_a_conversation_that_cannot_finish_is_kept_as_a_failed_run(corpus_small, store_path, tmp_path, monkeypatch):
    """When a conversation's worker dies on every attempt, the run names it and is kept as a failed run (a row that
    says why, never a figure); no run with figures is appended."""
    from evals.store import Store

    monkeypatch.syspath_prepend(str(PLUGINS))
    run(RunConfig(strategy="no_memory", corpus=corpus_small), store_path)
    victim = sorted(p.stem for p in corpus_small.glob("*.json"))[0]
    options = {"marker": str(tmp_path / "died"), "victim": victim, "always": True}
    config = RunConfig(strategy="dying_strategy:SPEC", options=options, corpus=corpus_small)
    with pytest.raises(EvalsError) as failed:
        run(config, store_path, RayExecutor(max_retries=1))
    assert str(failed.value).startswith(
        f"1 of 3 conversations could not be played on Ray, so the run failed: {victim!r} (its worker died"
    )
    with Store.open(store_path, read_only=True) as store:
        assert [s.strategy for s in store.runs()] == ["no_memory"]
        (kept,) = store.failed_runs()
    assert kept.reason.startswith("1 of 3 conversations could not be played on Ray")


def test_the_default_executor_does_not_import_ray(corpus_small, tmp_path):
    """A local run never imports ray."""
    script = (
        "import sys; from evals.cli import main; sys.argv = ['evals', 'run', '--runner', 'recency', '--corpus', sys.argv[1], "
        "'--store', sys.argv[2]]\ntry:\n    main()\nexcept SystemExit:\n    pass\nassert 'ray' not in sys.modules, 'ray imported'"
    )
    result = subprocess.run(
        [sys.executable, "-c", script, str(corpus_small), str(tmp_path / "r.duckdb")], capture_output=True, text=True, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr
