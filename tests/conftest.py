"""Fixtures shared across test files. Keep each small and say what it gives."""

from __future__ import annotations

import subprocess
from contextlib import ExitStack
from pathlib import Path

import pytest
from helpers import FIXTURES
from helpers.browser import chromium, serving
from helpers.cli import forbid_work, stored_store
from helpers.corpora import imported, longmemeval_file
from helpers.lane import OPT_IN, module_opts_in
from helpers.llm_server import LLMServer
from helpers.pairs import build_pair_site
from helpers.protocol_sources import pin_sources
from helpers.stores import make_answers_store, site_of

# -- the fast lane (tests/helpers/lane.py) ---------------------------------------------------------

# Plain `pytest` is the loop a contributor runs after every change; the OPT_IN markers opt in (CI and
# `python3 tasks.py test` pass --run-slow), as inspect_ai's conftest does with --runslow.


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-slow", action="store_true", default=False, help=f"also run the tests marked {', '.join(OPT_IN)} (as CI does)"
    )


def pytest_report_header(config: pytest.Config) -> str | None:
    if wants_every_test(config):
        return None
    return f"fast lane: tests marked {', '.join(OPT_IN)} are left out (--run-slow or -m to run them)"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """A module all of whose tests opt in is not imported, unless it was named on the command line."""
    if collection_path.suffix != ".py" or not collection_path.name.startswith("test_") or wants_every_test(config):
        return None
    named = {Path(arg.split("::")[0]).resolve() for arg in config.args}
    if collection_path.resolve() not in named and module_opts_in(collection_path):
        return True
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if wants_every_test(config):
        return
    kept, opted_in = [], []
    for item in items:
        (opted_in if any(item.get_closest_marker(name) for name in OPT_IN) else kept).append(item)
    if opted_in:
        config.hook.pytest_deselected(items=opted_in)
        items[:] = kept


def wants_every_test(config: pytest.Config) -> bool:
    """--run-slow asks for everything; an explicit -m expression chooses for itself."""
    return config.getoption("--run-slow") or bool(config.getoption("markexpr"))


@pytest.fixture(autouse=True)
def user_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test's own user cache ($EVALS_CACHE: what python -m evals and evaluate() keep embeddings in),
    so no test writes in ~/.cache and none finds what another computed."""
    path = tmp_path_factory.mktemp("user-cache") / "cache.duckdb"
    monkeypatch.setenv("EVALS_CACHE", str(path))
    return path


@pytest.fixture
def corpus_small() -> Path:
    """A three-conversation corpus with four test points (tests/fixtures/corpus_small)."""
    return FIXTURES / "corpus_small"


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """Where a test's results store goes: a fresh path in an existing temp directory."""
    return tmp_path / "results.duckdb"


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store holding one genuine run, for refused actions to leave exactly as it was (a module may give
    ``store`` a meaning of its own)."""
    return stored_store(tmp_path / "store")


@pytest.fixture
def clean_repo(tmp_path: Path) -> Path:
    """An empty git repository with one commit and a clean working tree."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=evals tests", "-c", "user.email=tests@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "README").write_text("fixture\n")
    subprocess.run([*git, "add", "README"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "fixture"], check=True)
    return repo


# -- sites ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def site(store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from the module's own ``store`` fixture (a module without one defines neither)."""
    return site_of(store, tmp_path_factory)


# -- sites in a browser (tests/helpers/browser.py) -------------------------------------------------


@pytest.fixture(scope="module")
def serve():
    """Serves folders over HTTP on 127.0.0.1: ``serve(folder)`` is the folder's base URL; every server stops after the module."""
    with ExitStack() as stack:
        yield lambda folder: stack.enter_context(serving(folder))


@pytest.fixture(scope="module")
def browser():
    """One headless Debian Chromium for the module (each test opens its own page or context); skipped without it."""
    with chromium() as launched:
        yield launched


# -- the local LLM server and the protocols' published files (tests/helpers/llm_server.py, protocol_sources.py) --


@pytest.fixture
def server():
    """The local OpenAI-compatible server (tests/helpers/llm_server.py) on a random port, for one test."""
    with LLMServer() as started:
        yield started


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The stand-ins of the protocols' published files in a downloads folder ($EVALS_DOWNLOADS), their digests as the pins."""
    return pin_sources(monkeypatch, tmp_path / "downloads")


@pytest.fixture
def lme_corpus(tmp_path: Path) -> Path:
    """A LongMemEval-format file (tests/helpers/corpora.py) imported as a corpus: one question of each type and an abstention."""
    return imported("longmemeval", longmemeval_file(tmp_path / "lme.json"), tmp_path / "lme")


@pytest.fixture
def locomo_corpus(tmp_path: Path) -> Path:
    """LoCoMo's small fixture (tests/fixtures/importers/locomo_small.json) imported as a corpus."""
    return imported("locomo", FIXTURES / "importers" / "locomo_small.json", tmp_path / "locomo")


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """:func:`helpers.cli.forbid_work` for the whole test (after the fixtures it follows)."""
    forbid_work(monkeypatch)


@pytest.fixture(scope="module")
def answers_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store whose recency and full_history runs were answered and judged by the local chat server, beside a
    retrieval-only mneme run (helpers.stores.make_answers_store)."""
    return make_answers_store(tmp_path_factory.mktemp("answers") / "results.duckdb")


@pytest.fixture(scope="module")
def answers_site(answers_store: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of ``answers_store``."""
    return site_of(answers_store, tmp_path_factory)


@pytest.fixture(scope="module")
def pair_site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A LoCoMo-shaped store of two memories and the ceilings, and its site (helpers.pairs.build_pair_site)."""
    return build_pair_site(tmp_path_factory.mktemp("pairs"))


@pytest.fixture(scope="module")
def pair_served(pair_site: dict, serve) -> str:
    """The base URL of ``pair_site``'s site, served over HTTP."""
    return serve(pair_site["site"])


@pytest.fixture
def env(tmp_path, monkeypatch) -> dict[str, Path]:
    """For fetching benchmarks: a downloads folder and a lock file of the test's own, the working directory
    tmp_path, and no request able to reach past loopback."""
    monkeypatch.chdir(tmp_path)
    downloads, lock = tmp_path / "downloads", tmp_path / "repo" / "benchmarks.lock"
    lock.parent.mkdir()
    monkeypatch.setenv("EVALS_DOWNLOADS", str(downloads))
    monkeypatch.setenv("EVALS_BENCHMARKS_LOCK", str(lock))
    monkeypatch.delenv("EVALS_MIRROR", raising=False)
    # A request that slipped past the mirror would go to a proxy nobody listens on, never out.
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.setenv(proxy, "http://127.0.0.1:9")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return {"downloads": downloads, "lock": lock}
