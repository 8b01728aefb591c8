"""`--runner mem0`: mem0 (mem0ai) offline, its source turns, its resets, and fact extraction through the cache.

mem0 is real (mem0ai with FAISS and all-MiniLM-L6-v2) and slow to start (its
``Memory.from_config`` loads the model), so a few module-wide instances serve
most tests. Every test here runs with the network closed but for 127.0.0.1:
a connection anywhere else fails the test that made it. They need the `mem0`
extra (`pip install -e '.[mem0]'`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import duckdb
import pytest
from click.testing import CliRunner

pytest.importorskip("mem0", reason="needs the mem0 extra: pip install -e '.[mem0]'")
pytest.importorskip("faiss", reason="needs the mem0 extra: pip install -e '.[mem0]'")

from helpers import FIXTURES, configuration  # noqa: E402
from helpers.llm_server import LLMServer  # noqa: E402
from helpers.runs import evals_run, stored_runs  # noqa: E402

from evals.cli import cli  # noqa: E402
from evals.errors import EvalsError  # noqa: E402
from evals.io.cache import Cache  # noqa: E402
from evals.run.evaluate import RunConfig, evaluate  # noqa: E402
from evals.site import build_site  # noqa: E402
from evals.strategies import Record  # noqa: E402
from evals.strategies.contract import check_strategy  # noqa: E402
from evals.strategies.mem0 import PROMPT_DATE, Mem0  # noqa: E402

pytestmark = pytest.mark.slow

TURNS = [
    ("user", "My dog is called Biscuit and he hates the vacuum cleaner."),
    ("assistant", "Biscuit sounds like a character."),
    ("user", "I moved to Porto last spring for a job at a bakery."),
    ("assistant", "Porto has wonderful pastries."),
    ("user", "The staging database listens on port 6543 now."),
    ("assistant", "Port 6543 for staging, noted."),
]


class _Network:
    """Refuses every connection and name lookup except loopback, and remembers what was tried."""

    LOCAL = {"127.0.0.1", "::1", "localhost"}

    def __init__(self) -> None:
        self.attempts: list[str] = []

    def _allowed(self, host: object) -> bool:
        return isinstance(host, str) and host in self.LOCAL

    def __enter__(self) -> _Network:
        self._connect, self._connect_ex, self._getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo
        network = self

        def connect(sock: socket.socket, address: object, *rest: object) -> object:
            host = address[0] if isinstance(address, tuple) else None
            if sock.family in (socket.AF_INET, socket.AF_INET6) and not network._allowed(host):
                network.attempts.append(f"connect {address!r}")
                raise OSError(f"network closed in this test: {address!r}")
            return network._connect(sock, address, *rest)

        def connect_ex(sock: socket.socket, address: object) -> int:
            try:
                connect(sock, address)
            except OSError:
                return 111
            return 0

        def getaddrinfo(host: object, *args: object, **kwargs: object) -> object:
            if host is not None and not network._allowed(host.decode() if isinstance(host, bytes) else host):
                network.attempts.append(f"lookup {host!r}")
                raise socket.gaierror(f"network closed in this test: {host!r}")
            return network._getaddrinfo(host, *args, **kwargs)

        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = connect, connect_ex, getaddrinfo
        return self

    def __exit__(self, *exc: object) -> None:
        socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo = self._connect, self._connect_ex, self._getaddrinfo


@pytest.fixture(scope="module")
def network() -> Iterator[_Network]:
    """The network, closed for the whole module (module fixtures build mem0 inside it)."""
    with _Network() as closed:
        yield closed


@pytest.fixture(autouse=True)
def offline(network: _Network) -> Iterator[None]:
    """Fails a test that tried to reach anything but 127.0.0.1."""
    before = len(network.attempts)
    yield
    assert network.attempts[before:] == []


@pytest.fixture(scope="module")
def memory(network: _Network) -> Iterator[Mem0]:
    """One mem0 strategy (infer=False), shared: building one takes seconds."""
    strategy = Mem0()
    yield strategy
    strategy.close()


@pytest.fixture(scope="module")
def site_run(network: _Network, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`evals run --runner mem0` on the small fixture corpus into a fresh store: (store, stdout)."""
    store = tmp_path_factory.mktemp("mem0") / "results.duckdb"
    args = ["run", "--runner", "mem0", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return store, result.stdout


def _fed(strategy: Mem0, turns: list[tuple[str, str]] = TURNS, start: int = 0) -> Mem0:
    strategy.reset()
    for index, (role, content) in enumerate(turns, start=start):
        strategy.add(role, content, turn=index)
    return strategy


def test_run_offline_finds_facts(site_run: tuple[Path, str]):
    """A run on the small corpus completes with the network closed and recalls something."""
    _, stdout = site_run
    assert "mem0 (embedder all-MiniLM-L6-v2) keyword hit@5" in stdout
    recall = float(stdout.split("keyword hit@5 ", 1)[1].split()[0])
    assert recall > 0


def test_run_appears_in_the_site(site_run: tuple[Path, str], tmp_path: Path):
    """The stored run is a leaderboard row of the built site, with its model."""
    store, _ = site_run
    build_site(store, tmp_path / "site")
    rows = json.loads((tmp_path / "site" / "leaderboard.json").read_text(encoding="utf-8"))
    row = next(r for r in rows if r["strategy"] == "mem0")
    assert row["model"] == "all-MiniLM-L6-v2"
    (board,) = (tmp_path / "site").glob("leaderboard-*.html")  # its benchmark's leaderboard (index.html lists them)
    assert f'href="runs/{row["run_id"]}.html"' in board.read_text(encoding="utf-8")


def test_reset_empties_memory(memory: Mem0):
    """After reset() nothing is found, and the next conversation sees only its own turns."""
    _fed(memory)
    assert memory.retrieve("What is my dog called?", 5)
    memory.reset()
    assert memory.retrieve("What is my dog called?", 5) == []
    memory.add("user", "My cat is called Miso.", turn=0)
    assert [r.text for r in memory.retrieve("What is my dog called?", 5)] == ["My cat is called Miso."]


def test_reset_takes_a_fresh_user_id(memory: Mem0):
    """Each conversation is its own mem0 user."""
    before = memory.user_id
    memory.reset()
    assert memory.user_id != before


def test_records_name_their_source_turn(memory: Mem0):
    """Each record names the turn it was added at, even where turn indices skip (unrecorded turns)."""
    turns = {10: TURNS[0], 12: TURNS[2], 15: TURNS[4]}
    memory.reset()
    for index, (role, content) in turns.items():
        memory.add(role, content, turn=index)
    records = memory.retrieve("Which port does staging use?", 3)
    assert records and all(isinstance(r, Record) for r in records)
    assert {r.turn: r.text for r in records} == {i: content for i, (_, content) in turns.items()}
    assert records[0].turn == 15 and records[0].score is not None


def test_turns_are_counted_when_not_given(memory: Mem0):
    """Without turn=, add counts turns from 0 again after each reset."""
    for _ in range(2):
        memory.reset()
        for role, content in TURNS:
            memory.add(role, content)
        found = {r.text: r.turn for r in memory.retrieve("dog Biscuit vacuum", len(TURNS))}
        assert found == {content: index for index, (_, content) in enumerate(TURNS)}


def test_context_is_one_system_message_of_the_records(memory: Mem0):
    """context_for lists the retrieved memories in one system message; an empty memory gives none."""
    _fed(memory)
    [message] = memory.context_for("What is my dog called?", 2)
    assert message["role"] == "system"
    assert [line[2:] for line in message["content"].splitlines()[1:]] == [
        r.text for r in memory.retrieve("What is my dog called?", 2)
    ]
    memory.reset()
    assert memory.context_for("What is my dog called?", 2) == []


def test_keeps_the_contract():
    """evals.strategies.contract.check_strategy finds nothing to fix."""
    assert check_strategy("mem0") == []


def test_configuration_names_mem0_and_no_llm_without_infer():
    """Without infer the configuration names mem0's version, embedder and store, and no LLM."""
    config = configuration("mem0")
    assert config["name"] == "mem0" and config["model"] == "all-MiniLM-L6-v2" and config["vector_store"] == "faiss"
    assert config["mem0ai"].startswith("2.2")
    assert not any(key.startswith("llm") for key in config)


def test_configuration_with_infer_names_the_llm_and_not_the_key(monkeypatch: pytest.MonkeyPatch):
    """With infer the configuration names the model, endpoint and pinned date; never the API key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    config = configuration("mem0", infer=True, base_url="http://127.0.0.1:1/v1", llm_model="m")
    assert (config["llm_model"], config["llm_base_url"], config["prompt_date"]) == ("m", "http://127.0.0.1:1/v1", PROMPT_DATE)
    assert "sk-secret" not in json.dumps(config)


def test_infer_against_openai_without_a_key_says_what_to_set(monkeypatch: pytest.MonkeyPatch):
    """infer=True with no endpoint and no OPENAI_API_KEY fails before mem0 starts, naming both ways out."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(EvalsError, match="OPENAI_API_KEY.*base_url"):
        Mem0(infer=True)


@pytest.mark.llm_memory
def test_infer_stores_extracted_facts_with_their_turns(tmp_path: Path):
    """With infer=True mem0's LLM (the local server) rewrites each turn; records still name the right turn."""
    with LLMServer() as server:
        evaluation = evaluate(
            RunConfig(strategy="mem0", corpus=FIXTURES / "evidence_corpus", options={"infer": True, "base_url": server.base_url})
        )
        assert server.requests["extraction"] == 11  # one per recorded turn
    turns = {c.id: c for c in evaluation.corpus.conversations}
    for conversation in evaluation.run.conversations:
        for point in conversation.test_points:
            assert point.retrieved_records and all(
                r.startswith(("User said: ", "Assistant said: ")) for r in point.retrieved_records
            )
            if point.retrieved_turns is not None:
                contents = [turns[conversation.conversation_id].turns[t].content for t in point.retrieved_turns]
                assert [r.split(" said: ", 1)[1] for r in point.retrieved_records] == contents
    assert evaluation.scores.recall == 1.0


@pytest.mark.llm_memory
def test_infer_rerun_with_the_same_cache_makes_no_request(tmp_path: Path):
    """A second infer=True run with the same cache asks the server nothing and stores the same records."""
    corpus = FIXTURES / "evidence_corpus"
    with LLMServer() as server, Cache.open(tmp_path / "cache.duckdb") as cache:
        config = RunConfig(strategy="mem0", corpus=corpus, options={"infer": True, "base_url": server.base_url})
        first = evaluate(config, cache=cache)
        asked = server.total
        second = evaluate(config, cache=cache)
        assert asked > 0 and server.total == asked
    assert [c.test_points for c in first.run.conversations] == [c.test_points for c in second.run.conversations]


@pytest.mark.llm_memory
def test_infer_with_answers_stores_the_extraction_tokens_as_memory_writes(tmp_path: Path):
    """`evals run --runner mem0 --option infer=true --with-answers`: mem0's extraction requests are the run's
    memory-write tally, per conversation."""
    store = tmp_path / "results.duckdb"
    with LLMServer() as server:
        options = ("--option", "infer=true", "--option", f"base_url={server.base_url}", "--with-answers")
        result = evals_run(server, store, FIXTURES / "corpus_small", *options, runner="mem0", key="sk-unused")
        assert result.exit_code == 0, result.output
        sent = server.requests["extraction"]
    (stored,) = stored_runs(store)
    write = stored.summary.llm_usage["memory_write"]
    assert sent > 0 and (write["sent"], write["cached"], write["per"]) == (sent, 0, len(stored.run.conversations))
    assert write["prompt_tokens"] > 0 and "llm memory-write (gpt-4o-mini): " in result.output


@pytest.mark.llm_memory
def test_infer_pins_the_prompt_date():
    """The extraction prompt states PROMPT_DATE, not the day of the run."""
    with LLMServer() as server:
        strategy = Mem0(infer=True, base_url=server.base_url)
        try:
            strategy.reset()
            strategy.add("user", "My dog is called Biscuit.", turn=0)
        finally:
            strategy.close()
        prompt = server.bodies[-1]["messages"][-1]["content"]
    assert f"## Observation Date\n{PROMPT_DATE}\n" in prompt and f"## Current Date\n{PROMPT_DATE}\n" in prompt


def test_without_the_extra_the_error_says_what_to_install(tmp_path: Path):
    """With mem0ai missing, `--runner mem0` fails with one line naming the extra, and writes no store."""
    code = "import sys; sys.modules['mem0'] = None; from evals.cli import main; main(sys.argv[1:])"
    store = tmp_path / "s.duckdb"
    args = ["run", "--runner", "mem0", "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "pip install -e '.[mem0]'" in proc.stderr
    assert not store.exists()


@pytest.mark.llm_memory
def test_infer_failure_names_the_endpoint_and_hides_the_key(monkeypatch: pytest.MonkeyPatch):
    """A refused extraction request fails the add with the endpoint's answer, the API key blanked out."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-test-key")
    with LLMServer() as server:
        strategy = Mem0(infer=True, base_url=server.base_url)
        try:
            strategy.reset()
            server.fail_next("401")
            with pytest.raises(EvalsError, match="401") as raised:
                strategy.add("user", "My dog is called Biscuit.", turn=0)
        finally:
            strategy.close()
    assert server.base_url in str(raised.value) and "sk-secret" not in str(raised.value)


def test_close_removes_the_temporary_directory():
    """close() removes the directory that held mem0's history; the FAISS store was kept in memory, not written there."""
    strategy = Mem0()
    _fed(strategy)
    directory = Path(strategy.directory)
    assert (directory / "history.db").is_file() and not any((directory / "faiss").rglob("*.json"))
    strategy.close()
    assert not directory.exists()


def test_extraction_echoing_the_key_percent_encoded_is_cached_and_used_masked(tmp_path: Path):
    """mem0's LLM replies quoting a key that holds / + = % in its ``id`` and facts, percent-encoded: neither the
    cache nor the stored memories keep it."""
    key = "sk-mem0/h41+key=with%signs"
    encoded = quote(key, safe="")

    def rewrite(kind: str, text: str, sent: str) -> str:
        if kind != "extraction":
            return text
        return text.replace('"id": "', f'"id": "{encoded}-', 1).replace("said: ", f"said ({encoded}): ")

    with LLMServer() as server, Cache.open(tmp_path / "cache.duckdb") as cache:
        server.rewrite = rewrite
        strategy = Mem0(infer=True, base_url=server.base_url, api_key=key, cache=cache)
        try:
            strategy.reset()
            strategy.add("user", "My dog is called Biscuit.", turn=0)
            records = strategy.retrieve("What is the dog called?", k=5)
        finally:
            strategy.close()
        assert server.requests["extraction"] == 1
    assert records and all(encoded not in r.text and "***" in r.text for r in records)
    with duckdb.connect(str(tmp_path / "cache.duckdb"), read_only=True) as con:
        values = [bytes(v) for (v,) in con.execute("SELECT value FROM cache_entries WHERE namespace LIKE 'chat:%'").fetchall()]
    assert values and not [v for v in values if encoded.encode() in v]


def test_infer_requests_have_the_runs_deadline_and_retries(tmp_path: Path):
    """--request-timeout and --max-retries reach mem0's own requests: a server too slow fails the run at once."""
    import time

    with LLMServer(delay_s=5.0) as server:
        config = RunConfig(
            strategy="mem0",
            corpus=FIXTURES / "corpus_small",
            options={"infer": True, "base_url": server.base_url},
            request_timeout=0.5,
            max_retries=0,
        )
        started = time.perf_counter()
        with pytest.raises(EvalsError, match=r"no complete response within 0\.5 s") as raised:
            evaluate(config)
        assert time.perf_counter() - started < 30
    assert "1 attempt" in str(raised.value)


def test_infer_reply_with_absurd_token_counts_is_refused_and_not_cached(tmp_path: Path):
    """An extraction reply reporting 2**63 prompt tokens is an error at the reply, and never reaches the cache."""

    def absurd(kind: str, text: str, key: str) -> str:
        if kind != "extraction":
            return text
        payload = json.loads(text)
        payload["usage"]["prompt_tokens"] = 2**63
        return json.dumps(payload)

    with LLMServer() as server, Cache.open(tmp_path / "cache.duckdb") as cache:
        server.rewrite = absurd
        strategy = Mem0(infer=True, base_url=server.base_url, cache=cache)
        try:
            strategy.reset()
            with pytest.raises(EvalsError, match="usage.prompt_tokens"):
                strategy.add("user", "My dog is called Biscuit.", turn=0)
        finally:
            strategy.close()
    with duckdb.connect(str(tmp_path / "cache.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM cache_entries WHERE namespace LIKE 'chat:%'").fetchone() == (0,)


def test_infer_reply_over_the_reply_cap_is_refused():
    """An extraction reply over the 8 MiB reply cap is malformed, as the harness's own replies are."""
    from helpers.llm_server import replying

    with LLMServer() as server:
        server.rewrite = replying("extraction", "x" * (9 * 1024**2))
        strategy = Mem0(infer=True, base_url=server.base_url)
        try:
            strategy.reset()
            with pytest.raises(EvalsError, match="malformed response"):
                strategy.add("user", "My dog is called Biscuit.", turn=0)
        finally:
            strategy.close()


def test_infer_whose_every_reply_is_prose_fails_the_run():
    """Extraction replies mem0 cannot read (prose) leave it with nothing written: the run fails, it scores nothing."""
    from helpers.llm_server import replying

    with LLMServer() as server:
        server.rewrite = replying("extraction", "I found no facts worth keeping, sorry.")
        options = {"infer": True, "base_url": server.base_url}
        config = RunConfig(strategy="mem0", corpus=FIXTURES / "corpus_small", options=options)
        with pytest.raises(EvalsError, match="wrote nothing"):
            evaluate(config)
