"""A published protocol on Ray: the driver reads and checks the templates once and hands them to the
workers (which need not have the files), and the stored answers are the local run's."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")
# A Ray instance per module takes seconds to start.
pytestmark = pytest.mark.slow

from helpers import FIXTURES  # noqa: E402
from helpers.llm_server import LLMServer  # noqa: E402
from helpers.protocol_sources import write_sources  # noqa: E402

from evals.benchmarks.formats import import_corpus  # noqa: E402
from evals.benchmarks.protocols import PINS  # noqa: E402
from evals.run.config import RunConfig  # noqa: E402
from evals.run.executors import RayExecutor  # noqa: E402
from evals.run.workflow import run_with_store  # noqa: E402
from evals.store import Store  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def answers(store, run_id):
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(run_id)
    return [(a.answer, a.category, a.counted, a.verdict, a.correct, a.score) for conv in stored.answers.points for a in conv]


@pytest.mark.parametrize("protocol", ["mem0", "locomo"])
def test_ray_run_answers_as_the_local_run(protocol, tmp_path, monkeypatch, store_path):
    """The stand-in pins are set in the driver only: a worker that read the files itself would refuse them."""
    downloads = tmp_path / "downloads"
    for name, pinned in write_sources(downloads).items():
        monkeypatch.setitem(PINS, name, pinned)
    corpus = tmp_path / "locomo"
    import_corpus("locomo", FIXTURES / "importers" / "locomo_small.json", corpus)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("EVALS_LLM_BACKOFF", "0.01")
    with LLMServer() as server:
        config = RunConfig(strategy="bm25", corpus=corpus, k=2, protocol=protocol, base_url=server.base_url, downloads=downloads)
        local = run_with_store(config, store_path, force=True, repo=tmp_path)
        remote = run_with_store(config, store_path, force=True, repo=tmp_path, executor=RayExecutor())
    assert answers(store_path, remote.run_id) == answers(store_path, local.run_id)
    assert all(row[2] is not None for row in answers(store_path, remote.run_id))
