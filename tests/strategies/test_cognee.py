"""`--runner cognee`: cognee writes its graph through the local LLM server, reruns from the cache, names turns, offline.

cognee is real (cognee 1.6.5 with its SQLite, Ladybug graph and LanceDB files in a temporary directory) and its
LLM is the local OpenAI-compatible server (tests/helpers/llm_server.py, replies in tests/helpers/cognee_replies.py)
over real HTTP. cognee is slow to import and to cognify, so a module-wide server and strategy serve most tests.
They need the `cognee` extra, in an environment of its own (`.venv-cognee`, which `python3 tasks.py test` makes).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.offline import run_offline

from evals.cli import cli
from evals.strategies import Registry


def test_listed_with_the_extra_it_needs():
    """`evals strategies` lists cognee with the extra that installs it, installed here or not, and the endpoint it asks."""
    spec = Registry().get("cognee")
    assert spec.extra == "cognee" and "cognee" in spec.requires and spec.derived_records and spec.needs_endpoint
    lines = CliRunner().invoke(cli, ["strategies"]).output.splitlines()
    line = next(line for line in lines if line.startswith("cognee  ("))
    assert "[needs the cognee extra]" in line or "[installed by the cognee extra]" in line
    assert line.endswith("[asks an LLM endpoint: --option base_url=… or OPENAI_BASE_URL]")


def test_without_the_extra_the_error_advises_an_environment_of_its_own(tmp_path: Path):
    """With cognee missing, `--runner cognee` fails with one line advising the extra in a separate environment
    (installed into this one it would downgrade huggingface-hub and lancedb under the field), and writes no store."""
    from helpers import FIXTURES

    code = "import sys; sys.modules['cognee'] = None; from evals.cli import main; main(sys.argv[1:])"
    store = tmp_path / "s.duckdb"
    args = ["run", "--runner", "cognee", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and ".venv-cognee/bin/pip install -e '.[cognee]'" in proc.stderr
    assert "python3 -m venv .venv-cognee" in proc.stderr
    assert not store.exists()


needs_cognee = pytest.mark.skipif(
    bool(Registry().get("cognee").missing()),
    reason="needs the cognee extra, in its own environment (python3 tasks.py test makes .venv-cognee)",
)

TURNS = [
    ("user", "My dog is called Biscuit and he hates the vacuum cleaner."),
    ("assistant", "Biscuit sounds like a character."),
    ("user", "I moved to Porto last spring for a job at a bakery."),
    ("assistant", "Noted."),
    ("user", "The staging database listens on port 6543 now."),
    ("assistant", "Noted."),
]


@pytest.fixture(scope="module")
def server() -> Iterator:
    from helpers.llm_server import LLMServer

    with LLMServer() as running:
        yield running


@pytest.fixture(scope="module")
def fed(server, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """One cognee strategy with TURNS (turns 10-15) written and searched once, its cache in a fresh file."""
    from evals.io.cache import Cache
    from evals.strategies.cognee import Cognee

    with Cache.open(tmp_path_factory.mktemp("cognee") / "cache.duckdb") as cache:
        strategy = Cognee(base_url=server.base_url, cache=cache)
        strategy.reset()
        for index, (role, content) in enumerate(TURNS, start=10):
            strategy.add(role, content, turn=index)
        strategy.records = strategy.retrieve("Which port does the staging database listen on?", 6)
        yield strategy, cache
        strategy.close()


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
@pytest.mark.parametrize("search_type", ["chunks", "summaries"])
def test_keeps_the_contract(server, search_type):
    """`evals check-strategy` finds nothing wrong with cognee writing through the local server, either search."""
    from evals.strategies.contract import check_strategy

    assert check_strategy("cognee", {"base_url": server.base_url, "search_type": search_type}) == []


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_finds_the_evidence_and_reruns_from_the_cache(server, tmp_path: Path):
    """On the labelled fixture corpus every evidence turn is found; a second run with the same cache asks the
    server nothing and retrieves the same records."""
    from helpers import FIXTURES

    from evals.io.cache import Cache
    from evals.run.evaluate import RunConfig, evaluate

    config = RunConfig(strategy="cognee", corpus=FIXTURES / "evidence_corpus", options={"base_url": server.base_url})
    with Cache.open(tmp_path / "cache.duckdb") as cache:
        before = server.total
        first = evaluate(config, cache=cache)
        asked = server.total - before
        second = evaluate(config, cache=cache)
        assert server.total - before == asked
    assert asked > 0 and first.scores.recall == 1.0
    assert [c.test_points for c in first.run.conversations] == [c.test_points for c in second.run.conversations]


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_records_name_their_source_turns(fed):
    """Each chunk names the turn its data item holds, also for two turns of the same text."""
    strategy, _ = fed
    by_text: dict[str, set[int]] = {}
    for record in strategy.records:
        by_text.setdefault(record.text, set()).update(record.turns)
    assert by_text == {content: {i for i, (_, c) in enumerate(TURNS, start=10) if c == content} for _, content in TURNS}
    assert strategy.records[0].turns == (14,)


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_write_requests_and_tokens_are_counted(fed, server):
    """cognify's requests (a graph and a summary per chunk) are tallied with their tokens, a repeated turn's
    from the cache; a second strategy on the same cache finds them all cached and sends none."""
    from evals.strategies.cognee import Cognee

    strategy, cache = fed
    tally = strategy.write_usage
    distinct = len({content for _, content in TURNS})
    assert tally.sent == 2 * distinct and tally.cached == 2 * (len(TURNS) - distinct)
    assert tally.prompt_tokens > 0 and tally.completion_tokens > 0
    again = Cognee(base_url=server.base_url, cache=cache)
    try:
        before = server.total
        again.reset()
        for index, (role, content) in enumerate(TURNS, start=10):
            again.add(role, content, turn=index)
        found = again.retrieve("Which port does the staging database listen on?", 6)
        assert sorted((r.text, r.turns) for r in found) == sorted((r.text, r.turns) for r in strategy.records)
        assert server.total == before
        assert again.write_usage.sent == 0 and again.write_usage.cached == tally.requests
        assert again.write_usage.cached_prompt_tokens == tally.prompt_tokens + tally.cached_prompt_tokens
    finally:
        again.close()


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_summaries_name_the_turns_of_the_chunks_they_were_made_from(fed, server):
    """search_type=summaries returns the summaries cognee's LLM wrote, each naming its chunk's turn."""
    from evals.strategies.cognee import Cognee

    _, cache = fed
    strategy = Cognee(base_url=server.base_url, cache=cache, search_type="summaries")
    try:
        strategy.reset()
        for index, (role, content) in enumerate(TURNS, start=10):
            strategy.add(role, content, turn=index)
        records = strategy.retrieve("Which port does the staging database listen on?", 6)
    finally:
        strategy.close()
    assert records[0].text == f"This chunk is about: {TURNS[4][1]}" and records[0].turns == (14,)
    summaries = {f"This chunk is about: {content}": content for _, content in TURNS}
    for record in records:
        assert {TURNS[turn - 10][1] for turn in record.turns} == {summaries[record.text]}


@needs_cognee
def test_an_unknown_search_type_is_refused():
    """--option search_type takes chunks or summaries only."""
    from evals.strategies import BuildContext, Registry
    from evals.strategies.registry import StrategyError

    with pytest.raises(StrategyError, match="search_type=graph"):
        Registry().plan("cognee", {"search_type": "graph"}, BuildContext())


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_reset_forgets_the_conversation(server):
    """After reset() nothing of the previous conversation is found, and the next one has a dataset of its own."""
    from evals.strategies.cognee import Cognee

    strategy = Cognee(base_url=server.base_url)
    try:
        strategy.reset()
        strategy.add("user", "My dog is called Biscuit.", turn=0)
        assert strategy.retrieve("What is the dog called?", 3)
        first = strategy.dataset
        strategy.reset()
        assert strategy.retrieve("What is the dog called?", 3) == [] and strategy.dataset != first
        strategy.add("user", "I live in Porto.", turn=0)
        assert [r.text for r in strategy.retrieve("What is the dog called?", 3)] == ["I live in Porto."]
    finally:
        strategy.close()


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_a_turn_of_no_text_is_not_given_to_cognee(server):
    """A turn with no text (a shared image alone) is skipped: nothing to find, and cognee is asked nothing for it."""
    from evals.strategies.cognee import Cognee

    strategy = Cognee(base_url=server.base_url)
    try:
        strategy.reset()
        strategy.add("user", "  ", turn=0)
        before = server.total
        assert strategy.retrieve("Where?", 3) == [] and server.total == before
        strategy.add("user", "I live in Porto.", turn=1)
        assert [r.turns for r in strategy.retrieve("Where?", 3)] == [(1,)]
    finally:
        strategy.close()


@needs_cognee
def test_configuration_names_cognee_its_llm_and_not_the_key(monkeypatch: pytest.MonkeyPatch):
    """A run's configuration records cognee's version, the endpoint and model, and never the API key."""
    import importlib.metadata

    from helpers import configuration

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    described = configuration("cognee", base_url="http://127.0.0.1:1/v1/", llm_model="m")
    assert described["cognee"] == importlib.metadata.version("cognee")
    assert described["llm_base_url"] == "http://127.0.0.1:1/v1" and described["llm_model"] == "m"
    assert described["model"] == "all-MiniLM-L6-v2" and described["search_type"] == "chunks"
    assert "sk-secret" not in json.dumps(described)


@needs_cognee
def test_against_openai_without_a_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch):
    """With no base URL and no key, building cognee says what to set instead of asking OpenAI."""
    from evals.errors import EvalsError
    from evals.strategies.cognee import Cognee

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EvalsError, match="OPENAI_API_KEY"):
        Cognee()


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_failure_names_the_endpoint_and_hides_the_key(server, monkeypatch: pytest.MonkeyPatch):
    """A refused cognify request fails the search with the endpoint's answer, the API key blanked out."""
    from evals.errors import EvalsError
    from evals.strategies.cognee import Cognee

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    strategy = Cognee(base_url=server.base_url)
    try:
        strategy.reset()
        strategy.add("user", "A turn no one has cognified: 5b1f.", turn=0)
        server.fail_next("401")
        with pytest.raises(EvalsError, match="401") as raised:
            strategy.retrieve("Which turn?", 1)
    finally:
        server.clear_faults()
        strategy.close()
    assert server.base_url in str(raised.value) and "sk-secret" not in str(raised.value)


@needs_cognee
def test_close_removes_the_temporary_directory(server):
    """close() removes the directory cognee kept its databases and files in."""
    from evals.strategies.cognee import Cognee

    strategy = Cognee(base_url=server.base_url)
    directory = strategy.directory
    assert os.path.isdir(directory)
    strategy.close()
    assert not os.path.exists(directory)


# A child process with the network closed (helpers.offline): cognee imported, run on the small corpus against the
# local server.
_OFFLINE_CHILD = """
from helpers.llm_server import LLMServer
from evals.run.evaluate import RunConfig, evaluate

with LLMServer() as server:
    run = evaluate(RunConfig(strategy="cognee", corpus=Path(sys.argv[1]), options={"base_url": server.base_url}))
    asked = server.total
print(json.dumps({"attempts": ATTEMPTS, "recall": run.scores.recall, "asked": asked}))
"""


@needs_cognee
@pytest.mark.slow
@pytest.mark.llm_memory
def test_reaches_no_network_but_the_endpoint(tmp_path: Path):
    """cognee imports and runs on the small corpus with no lookup or connection beyond loopback: none from
    Python (an audit hook) and, where strace is installed, none from native code either."""
    from helpers import FIXTURES

    env = {key: value for key, value in os.environ.items() if key not in ("OPENAI_BASE_URL", "OPENAI_API_KEY")}
    report = run_offline(_OFFLINE_CHILD, str(FIXTURES / "corpus_small"), tmp_path=tmp_path, env=env)
    assert report["asked"] > 0 and report["recall"] > 0


def test_cognees_llm_requests_refuse_absurd_token_counts_at_the_reply(tmp_path: Path):
    """cognee's LLM client asks through the one cached chat call: a reply reporting 2**63 tokens is an error at the
    reply, never cached (it would lose the whole run at the store write, and every rerun would replay it)."""
    from helpers.llm_server import LLMServer

    from evals.io.cache import Cache
    from evals.io.chat import LLMError
    from evals.strategies import BuildContext
    from evals.strategies.cognee import CachedStructuredChat
    from evals.strategies.llm import MemoryLLM

    def absurd(kind: str, text: str, key: str) -> str:
        payload = json.loads(text)
        payload["usage"]["completion_tokens"] = 2**63
        return json.dumps(payload)

    with LLMServer() as server, Cache.open(tmp_path / "cache.duckdb") as cache:
        server.rewrite = absurd
        llm = MemoryLLM(model="m", base_url=server.base_url, api_key=None, context=BuildContext(cache=cache), asks="cognee")
        chat = CachedStructuredChat(llm)
        body = chat.body("You summarise.", "My dog is called Biscuit.", None)
        try:
            with pytest.raises(LLMError, match="usage.completion_tokens"):
                chat.complete(body)
        finally:
            chat.close()
        assert cache.get_many(llm.chat.namespace, [llm.chat.key(body)]) == {}
