"""`python -m evals`: the original harness's flags, JSON shape and summary line."""

import json
import os
import shutil
import socket
import subprocess
import sys

import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.cli import cli, legacy_cli

GOLDEN = FIXTURES / "golden"
SEED_KEYS = {"strategy", "seed", "k", "corpus_dir", "conversation_count", "metrics", "conversations"}
JQ_RECIPE = (
    "{strategy: .strategy.name, recall: .metrics.recall_at_k.aggregate, "
    "tokens_per_tp: .metrics.tokens.aggregate_tokens_per_test_point}"
)


def python_m_evals(*args, env=None):
    return subprocess.run(
        [sys.executable, "-m", "evals", *args], capture_output=True, text=True, env=env or os.environ.copy(), timeout=120
    )


@pytest.fixture
def full_json(tmp_path):
    out = tmp_path / "out" / "full.json"
    proc = python_m_evals("--runner", "full_history", "--corpus", str(GOLDEN), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    return out, proc


def test_writes_the_seed_shape(full_json):
    """The JSON file has every key of the original, with the original's nesting."""
    doc = json.loads(full_json[0].read_text())
    assert SEED_KEYS <= doc.keys()
    assert set(doc["metrics"]["recall_at_k"]) == {"aggregate", "hits", "total", "per_conversation"}
    assert set(doc["metrics"]["tokens"]) == {"aggregate_context_tokens", "aggregate_tokens_per_test_point", "per_conversation"}
    point = doc["conversations"][0]["test_points"][0]
    assert set(point) == {"turn_index", "question", "expected_fact", "expected_keywords", "retrieved_records"}
    assert (doc["seed"], doc["k"], doc["corpus_dir"], doc["conversation_count"]) == (42, 5, str(GOLDEN), 3)


def test_records_the_tokenizer(full_json):
    """The result says which tokenizer produced its token numbers."""
    assert json.loads(full_json[0].read_text())["tokenizer"] == "cl100k_base"


def test_prints_the_seed_summary_line(full_json):
    """stdout is the original one-line summary ending with the output path."""
    out, proc = full_json
    assert proc.stdout == f"strategy=full_history convs=3 recall@5=0.75 tokens/tp=19.75 -> {out}\n"


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is installed by .ci/run")
def test_jq_recipe_works(full_json):
    """The README's jq recipe extracts strategy, recall and tokens per test point."""
    proc = subprocess.run(["jq", "-c", JQ_RECIPE, str(full_json[0])], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == {"strategy": "full_history", "recall": 0.75, "tokens_per_tp": 19.75}


def test_output_is_required():
    """Like the original, --output is required."""
    result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory"])
    assert result.exit_code == 2 and "--output" in result.output


def test_openai_without_key_fails_fast(tmp_path):
    """--embedder openai without OPENAI_API_KEY is a one-line error, exit 1, no file."""
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    out = tmp_path / "x.json"
    proc = python_m_evals("--runner", "mneme", "--embedder", "openai", "--corpus", str(GOLDEN), "--output", str(out), env=env)
    assert proc.returncode == 1
    assert proc.stderr == "Error: --embedder openai needs the OPENAI_API_KEY environment variable; it is not set\n"
    assert not out.exists()


def test_bad_corpus_is_one_line_and_writes_nothing(tmp_path):
    """A missing corpus folder is a one-line error and no output file."""
    out = tmp_path / "x.json"
    proc = python_m_evals("--corpus", str(tmp_path / "missing"), "--output", str(out))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"Error: invalid corpus: {tmp_path / 'missing'}: corpus folder does not exist"
    assert not out.exists()


def test_subcommands_reach_the_full_cli():
    """`python -m evals validate DIR` runs the evals subcommand, not the legacy parser."""
    proc = python_m_evals("validate", str(GOLDEN))
    assert proc.returncode == 0 and proc.stdout.startswith("ok:")


def test_a_run_makes_no_network_call(tmp_path, monkeypatch):
    """Every strategy runs with all socket connections refused."""

    def refuse(*args, **kwargs):
        raise AssertionError("network call attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for runner in ("mneme", "no_memory", "summary_buffer", "full_history"):
        result = CliRunner().invoke(
            legacy_cli, ["--runner", runner, "--corpus", str(GOLDEN), "--output", str(tmp_path / "o.json")]
        )
        assert result.exit_code == 0, result.output


def test_every_command_has_help():
    """`evals --help` and each command's --help describe every option."""
    runner = CliRunner()
    assert runner.invoke(cli, ["--help"]).exit_code == 0
    for name, command in cli.commands.items():
        assert command.help, name
        for param in command.params:
            if isinstance(param, __import__("click").Option):
                assert param.help, f"{name} {param.name}"
        assert runner.invoke(cli, [name, "--help"]).exit_code == 0


def test_legacy_help_lists_the_seed_flags():
    """`python -m evals --help` shows exactly the original's flags."""
    text = CliRunner().invoke(legacy_cli, ["--help"]).output
    for flag in ("--corpus", "--runner", "--backend", "--embedder", "--output", "--seed", "--k", "--with-answers", "--judge"):
        assert flag in text
