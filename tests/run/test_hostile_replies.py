"""Replies from the endpoint: bytes that are not UTF-8, keys in every JSON escaping, judges that never parse.

Each test is named for what must hold and drives the real CLI against
the local OpenAI-compatible server over real HTTP (tests/helpers/llm_server.py). A refused reply is a one-line
error naming where it happened; nothing is stored, and it is never cached.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.llm_server import LLMServer

from evals.cli import cli
from evals.io.cache import cache_path_for
from evals.store import Store

CORPUS_SMALL = FIXTURES / "corpus_small"
POINTS = 4  # test points in corpus_small
KEY = "sk-proj-hostile-36-3f9a1c5e7b2d"


def evals(*args: object, env: dict | None = None):
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def one_line_error(result, exit_code: int = 1) -> str:
    assert result.exit_code == exit_code, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = [line for line in result.output.splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def answers_run(server: LLMServer, store: Path, *extra: object, key: str = KEY):
    """`evals run --with-answers --judge`, one request at a time, against ``server``."""
    return evals(
        "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--repo", store.parent,
        "--base-url", server.base_url, "--with-answers", "--judge", "--concurrency", "1", *extra,
        env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": key, "OPENAI_BASE_URL": None},
    )  # fmt: skip


def stored_runs(store: Path) -> list:
    if not store.exists():
        return []
    with Store.open(store, read_only=True) as opened:
        return [opened.get_run(s.run_id) for s in opened.runs()]


def cached_values(store: Path) -> list[bytes]:
    path = cache_path_for(store)
    if not path.exists():
        return []
    with duckdb.connect(str(path), read_only=True) as con:
        return [bytes(v) for (v,) in con.execute("SELECT value FROM cache_entries WHERE namespace LIKE 'chat:%'").fetchall()]


@pytest.fixture
def server():
    with LLMServer() as started:
        yield started


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "results.duckdb"


# -- silently wrong -------------------------------------------------------------------------------------------


def test_a_reply_that_is_not_utf8_is_refused_not_replaced(server, store):
    """An answer whose bytes are not UTF-8 is a one-line malformed reply; nothing is stored as "\ufffd" or cached."""
    # Lone surrogates, written raw (the server encodes with surrogatepass): bytes that are no UTF-8.
    raw = '"content": "\udcff\udcfe'
    server.rewrite = lambda kind, text, key: text.replace('"content": "', raw, 1) if kind == "answer" else text
    line = one_line_error(answers_run(server, store))
    assert "(answer): malformed response from" in line and "UTF-8" in line
    assert stored_runs(store) == [] and cached_values(store) == []


def _judge_garbage(server: LLMServer) -> None:
    server.verdict_shape = "garbage"


def test_the_run_line_states_the_unparsed_verdicts(server, store):
    """A judge whose every verdict is unparsed: the run's summary line says how many, not only "accuracy 0.000"."""
    _judge_garbage(server)
    result = answers_run(server, store)
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("run "))
    assert f"accuracy 0.000 [0.000, 0.490] (0/{POINTS})" in line and f"unparsed {POINTS}/{POINTS}" in line


def test_max_unparsed_fails_a_run_above_it(server, store):
    """--max-unparsed 0.5: a run with every verdict unparsed exits 1, saying so in one line (the run is kept)."""
    _judge_garbage(server)
    result = answers_run(server, store, "--max-unparsed", "0.5")
    assert result.exit_code == 1, result.output
    assert f"{POINTS} of {POINTS} verdicts unparsed" in result.output and "--max-unparsed" in result.output
    assert len(stored_runs(store)) == 1


def test_run_suite_makes_every_run_then_fails_naming_those_above_max_unparsed(server, store, tmp_path):
    """`evals run-suite --max-unparsed`: both runs are made and stored; the command exits 1 naming each one over."""
    _judge_garbage(server)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'description = "judged"\n[[matrix]]\ncorpora = ["{CORPUS_SMALL}"]\nstrategies = ["recency", "bm25"]\n'
        f'with_answers = true\njudge = true\nbase_url = "{server.base_url}"\nconcurrency = 1\n'
    )
    env = {"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None}
    args = ["run-suite", "--suite", suite, "--store", store, "--repo", store.parent]
    result = evals(*args, "--max-unparsed", "0.5", env=env)
    assert result.exit_code == 1, result.output
    error = result.output.splitlines()[-1]
    assert error.startswith("Error: ") and error.count(f"{POINTS} of {POINTS} verdicts unparsed") == 2
    assert "recency" in error and "bm25" in error
    assert len(stored_runs(store)) == 2
    assert evals(*args, env=env).exit_code == 0  # without the limit, the same suite passes


def test_the_leaderboard_states_the_unparsed_verdicts(server, store):
    """The leaderboard's answer accuracy cell says how many verdicts were unparsed."""
    _judge_garbage(server)
    assert answers_run(server, store).exit_code == 0
    board = evals("leaderboard", "--store", store)
    assert board.exit_code == 0, board.output
    line = next(line for line in board.output.splitlines() if line.startswith("recency"))
    assert f"{POINTS} unparsed" in line


def test_the_gate_states_and_can_fail_on_unparsed_verdicts(server, store):
    """The gate reports the head's unparsed verdicts, and fails (exit 1) above --max-unparsed."""
    assert answers_run(server, store).exit_code == 0
    _judge_garbage(server)
    assert answers_run(server, store, "--seed", "1", "--no-cache").exit_code == 0  # the same configuration, another seed
    with Store.open(store, read_only=True) as opened:
        runs = sorted(opened.runs(), key=lambda s: s.seed)
    base, head = runs[1].run_id, runs[0].run_id  # seed 42 judged fine, seed 1 unparsed
    report = evals("gate", "--store", store, "--base", base, "--head", head)
    assert f"{POINTS} of {POINTS} verdicts unparsed" in report.output
    failed = evals("gate", "--store", store, "--base", base, "--head", head, "--max-unparsed", "0.5", "--format", "json")
    assert failed.exit_code == 1, failed.output
    assert json.loads(failed.output)["rows"][0]["unparsed"] == {"count": POINTS, "of": POINTS, "too_many": True}


# -- leaks --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ['sk-quote"in-key-0123456789', "sk-back\\slash-key-0123456789"], ids=["quote", "backslash"])
def test_a_key_echoed_in_plain_json_escaping_is_masked_in_the_cache(server, store, key):
    """A key holding " or \\, echoed escaped as JSON escapes it (\\" and \\\\, also twice over in a verdict's reason,
    and in `model` and `system_fingerprint`), reaches the cache in no form."""
    server.echo_key = True

    def served_by_the_key(kind: str, text: str, sent: str) -> str:
        payload = json.loads(text)
        payload["model"] = f"m {sent}"
        payload["system_fingerprint"] = f"fp {sent}"
        return json.dumps(payload)

    server.rewrite = served_by_the_key
    assert answers_run(server, store, key=key).exit_code == 0
    once = json.dumps(key)[1:-1]
    forms = [key, once, json.dumps(once)[1:-1]]
    values = cached_values(store)
    assert values and not [v for v in values for form in forms if form.encode() in v]


# -- leftovers -----------------------------------------------------------------------------------------------------


def test_a_non_ascii_api_key_is_named_as_such(server, store):
    """A key with a character an HTTP header cannot carry is refused as the key's problem, never as a malformed response."""
    line = one_line_error(answers_run(server, store, key="sk-clé-non-ascii-0123456789"))
    assert "API key" in line and "ASCII" in line and "malformed" not in line and "clé" not in line


def test_one_attempt_is_said_in_the_singular(server, store):
    """With --max-retries 0, a failing request says "failed after 1 attempt", not "1 attempts"."""
    server.fail_next("500")
    line = one_line_error(answers_run(server, store, "--max-retries", "0"))
    assert "failed after 1 attempt:" in line
