"""`--runner graphiti`: Graphiti on in-memory Kuzu, its LLM the local test server (tests/helpers/llm_server.py,
scripted replies from tests/helpers/graphiti_replies.py, over real HTTP), through the run's cache.

They need the `graphiti` extra (`pip install -e '.[graphiti]'`); without it they are skipped.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

pytest.importorskip("graphiti_core", reason="needs the graphiti extra: pip install -e '.[graphiti]'")
pytest.importorskip("kuzu", reason="needs the graphiti extra: pip install -e '.[graphiti]'")

from helpers import FIXTURES, configuration  # noqa: E402
from helpers.llm_server import LLMServer  # noqa: E402
from helpers.offline import run_offline  # noqa: E402
from helpers.runs import evals_run, stored_runs  # noqa: E402

from evals.cli import cli  # noqa: E402
from evals.errors import EvalsError  # noqa: E402
from evals.io.cache import Cache  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.strategies.contract import check_strategy  # noqa: E402
from evals.strategies.graphiti import Graphiti  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.llm_memory]

TURNS = [
    ("user", "My dog is called Biscuit and he hates the vacuum cleaner."),
    ("assistant", "Biscuit sounds like a character."),
    ("user", "I moved to Porto last spring for a job at a bakery."),
    ("assistant", "Porto has wonderful pastries."),
    ("user", "My dog is called Biscuit and he hates the vacuum cleaner."),
]
TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def server() -> Iterator[LLMServer]:
    with LLMServer() as running:
        yield running


@pytest.fixture(scope="module")
def memory(server: LLMServer) -> Iterator[Graphiti]:
    """One graphiti strategy on the local server, shared (each test resets it)."""
    strategy = Graphiti(base_url=server.base_url)
    yield strategy
    strategy.close()


def _fed(strategy: Graphiti, turns: list[tuple[str, str]] = TURNS) -> Graphiti:
    strategy.reset()
    for index, (role, content) in enumerate(turns):
        strategy.add(role, content, turn=index)
    return strategy


def test_keeps_the_contract(server: LLMServer):
    """`evals check-strategy graphiti --option base_url=…` finds nothing to fix."""
    assert check_strategy("graphiti", {"base_url": server.base_url}) == []


def test_finds_the_evidence(server: LLMServer):
    """On the evidence corpus every question's evidence turn is named by a retrieved fact."""
    config = RunConfig(strategy="graphiti", corpus=FIXTURES / "evidence_corpus", options={"base_url": server.base_url})
    evaluation = evaluate(config)
    assert evaluation.scores.recall == 1.0
    records = [r for c in evaluation.run.conversations for p in c.test_points for r in p.retrieved_records]
    assert records and all(r.startswith(("User said: ", "Assistant said: ")) for r in records)


def test_facts_name_their_source_turns(memory: Graphiti):
    """A fact names the turn that stated it, and every later turn that restated it."""
    _fed(memory)
    records = memory.retrieve("What is my dog called?", 5)
    dog = next(r for r in records if "Biscuit and he hates" in r.text)
    assert dog.turns == (0, 4) and dog.text == f"User said: {TURNS[0][1]}"
    porto = memory.retrieve("Where did I move for the bakery job?", 5)
    assert any(r.turns == (2,) and r.turn == 2 and r.text == f"User said: {TURNS[2][1]}" for r in porto)


def test_reset_takes_a_fresh_graph(memory: Graphiti):
    """After reset() nothing is found, and the next conversation sees only its own facts."""
    _fed(memory)
    memory.reset()
    assert memory.retrieve("What is my dog called?", 5) == []
    memory.add("user", "My cat is called Miso.", turn=0)
    found = memory.retrieve("What is my cat called?", 5)
    assert [(r.text, r.turns) for r in found] == [("User said: My cat is called Miso.", (0,))]


def test_rerun_from_the_cache_asks_the_server_nothing(server: LLMServer, tmp_path: Path):
    """A second run with the same cache sends no request and retrieves the same facts."""
    config = RunConfig(strategy="graphiti", corpus=FIXTURES / "evidence_corpus", options={"base_url": server.base_url})
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        before = server.total
        first = evaluate(config, cache=cache)
        asked = server.total
        second = evaluate(config, cache=cache)
        assert asked > before and server.total == asked
    assert [c.test_points for c in first.run.conversations] == [c.test_points for c in second.run.conversations]


def test_write_tokens_are_counted_sent_then_cached(server: LLMServer, tmp_path: Path):
    """Graphiti's requests are tallied as memory writes: sent the first time, from the cache the second, same tokens."""
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        tallies = []
        for _ in range(2):
            strategy = Graphiti(base_url=server.base_url, cache=cache)
            try:
                _fed(strategy)
            finally:
                strategy.close()
            tallies.append(strategy.write_usage)
    first, second = tallies
    assert first.sent > 0 and first.cached == 0 and first.prompt_tokens > 0 and first.completion_tokens > 0
    assert (second.sent, second.cached) == (0, first.sent)
    assert (second.cached_prompt_tokens, second.cached_completion_tokens) == (first.prompt_tokens, first.completion_tokens)


def test_a_run_with_answers_stores_the_write_tokens_and_a_rerun_sends_none(server: LLMServer, tmp_path: Path):
    """`evals run --runner graphiti --with-answers`: graphiti's requests are the run's memory-write tally (per
    conversation, with the CLI's line); the same command again takes every one from the cache beside the store."""
    store = tmp_path / "results.duckdb"
    server.reset_counts()
    options = ("--option", f"base_url={server.base_url}", "--with-answers")
    first = evals_run(server, store, FIXTURES / "corpus_small", *options, runner="graphiti", key="sk-unused")
    assert first.exit_code == 0, first.output
    sent = server.requests["graphiti"]
    second = evals_run(server, store, FIXTURES / "corpus_small", *options, runner="graphiti", key="sk-unused")
    assert second.exit_code == 0, second.output
    assert sent > 0 and server.requests["graphiti"] == sent
    old, new = stored_runs(store, oldest_first=True)
    write, again = old.summary.llm_usage["memory_write"], new.summary.llm_usage["memory_write"]
    assert (write["sent"], write["cached"], write["per"]) == (sent, 0, len(old.run.conversations))
    assert write["prompt_tokens"] > 0 and write["model"] == "gpt-4o-mini"
    assert (again["sent"], again["cached"], again["cached_prompt_tokens"]) == (0, sent, write["prompt_tokens"])
    assert "llm memory-write (gpt-4o-mini): " in first.output


def test_listed_with_the_extra_it_needs():
    """`evals strategies` lists graphiti as built in, with the extra that installs it, the endpoint it asks and its
    two options; `--available` (what a suite of "available" strategies runs, offline) leaves it out."""
    lines = CliRunner().invoke(cli, ["strategies"]).output.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("graphiti  ("))
    assert "(built-in)" in lines[at] and "[installed by the graphiti extra]" in lines[at]
    assert lines[at].endswith("[asks an LLM endpoint: --option base_url=… or OPENAI_BASE_URL]")
    assert "graphiti" not in CliRunner().invoke(cli, ["strategies", "--names", "--available"]).output.split()
    assert [line.split("=")[0].strip() for line in lines[at + 1 : at + 3]] == ["--option llm_model", "--option base_url"]


def test_configuration_names_the_library_the_llm_and_not_the_key(monkeypatch: pytest.MonkeyPatch):
    """The configuration names graphiti-core's and kuzu's versions, the model and endpoint; never the API key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    config = configuration("graphiti", base_url="http://127.0.0.1:1/v1", llm_model="m")
    assert config["graphiti-core"].startswith("0.31") and config["kuzu"].startswith("0.11")
    assert (config["llm_model"], config["llm_base_url"], config["model"]) == ("m", "http://127.0.0.1:1/v1", "all-MiniLM-L6-v2")
    assert "sk-secret" not in json.dumps(config)


def test_base_url_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, server: LLMServer):
    """Without --option base_url, OPENAI_BASE_URL is the endpoint, as for mem0 infer=true."""
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    strategy = Graphiti()
    try:
        assert strategy.base_url == server.base_url
        _fed(strategy, TURNS[:1])
    finally:
        strategy.close()


def test_openai_without_a_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch):
    """No endpoint and no OPENAI_API_KEY fails before Graphiti starts, naming both ways out."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EvalsError, match="OPENAI_API_KEY.*base_url"):
        Graphiti()


def test_a_refused_request_names_the_endpoint_and_hides_the_key(server: LLMServer):
    """A 401 fails the add with the endpoint's answer, the API key blanked out."""
    strategy = Graphiti(base_url=server.base_url, api_key="sk-secret-test-key")
    try:
        server.fail_next("401")
        with pytest.raises(EvalsError, match="401") as raised:
            strategy.add("user", "My dog is called Biscuit.", turn=0)
    finally:
        server.clear_faults()
        strategy.close()
    assert server.base_url in str(raised.value) and "sk-secret" not in str(raised.value)


def test_an_unparsable_reply_is_asked_again_and_never_cached(server: LLMServer, tmp_path: Path):
    """A reply Graphiti cannot parse is not cached: Graphiti's own retry asks the endpoint again and goes on."""
    broken: list[str] = []

    def rewrite(kind: str, text: str, key: str) -> str:
        if kind != "graphiti" or broken:
            return text
        body = json.loads(text)
        broken.append(body["choices"][0]["message"]["content"])
        body["choices"][0]["message"]["content"] = "Sure! Here are the entities."
        return json.dumps(body)

    server.rewrite = rewrite
    try:
        with Cache.open(tmp_path / "cache.duckdb") as cache:
            strategy = Graphiti(base_url=server.base_url, cache=cache)
            try:
                _fed(strategy, TURNS[:1])
            finally:
                strategy.close()
    finally:
        server.rewrite = None
    with duckdb.connect(str(tmp_path / "cache.duckdb"), read_only=True) as con:
        values = [bytes(v) for (v,) in con.execute("SELECT value FROM cache_entries WHERE namespace LIKE 'chat:%'").fetchall()]
    assert broken and strategy.write_usage.sent == len(values) + 1
    assert not [v for v in values if b"Sure! Here are" in v]


def test_without_the_extra_the_error_says_what_to_install(tmp_path: Path):
    """With graphiti-core missing, `--runner graphiti` fails with one line naming the extra, and writes no store."""
    code = "import sys; sys.modules['graphiti_core'] = None; from evals.cli import main; main(sys.argv[1:])"
    store = tmp_path / "s.duckdb"
    args = ["run", "--runner", "graphiti", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "pip install -e '.[graphiti]'" in proc.stderr
    assert not store.exists()


# A child process (not under pytest, where graphiti-core turns its telemetry off by itself), the network closed
# (helpers.offline): the local server and a graphiti run on the small corpus.
_OFFLINE_CHILD = """
from helpers.llm_server import LLMServer
from evals.run.evaluate import RunConfig, evaluate

with LLMServer() as server:
    run = evaluate(RunConfig(strategy="graphiti", corpus=Path(sys.argv[1]), options={"base_url": server.base_url}))
    asked = server.total
print(json.dumps({"attempts": ATTEMPTS, "recall": run.scores.recall, "asked": asked}))
"""


def test_reaches_no_network(tmp_path: Path):
    """A graphiti run makes no lookup or connection beyond loopback: none from Python (an audit hook) and,
    where strace is installed, none from native code (Kuzu) either; telemetry is off without pytest."""
    env = {k: v for k, v in os.environ.items() if k not in ("GRAPHITI_TELEMETRY_ENABLED", "OPENAI_BASE_URL")}
    env["HOME"] = str(tmp_path)  # graphiti's telemetry id would land in ~/.cache/graphiti
    report = run_offline(_OFFLINE_CHILD, str(FIXTURES / "corpus_small"), tmp_path=tmp_path, env=env, timeout=900)
    assert report["recall"] > 0 and report["asked"] > 0
    assert not (tmp_path / ".cache" / "graphiti").exists()
