"""What the hostile-input tests (``tests/*/test_hostile_*.py``) share: corpora and files written on purpose,
what `evals validate` and `evals import` refuse, a genuine export to tamper with, and a run with answers
against the local LLM server under a known key."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import CORPUS_SMALL, evals
from helpers.errors import one_line_error
from helpers.stores import files_beside

from .cli import run_id_of

DEEP = "[" * 3000 + "]" * 3000  # JSON nested deeper than any parser's recursion allows

KEY = "sk-hostile-test-5f2a9c7e1b"


def corpus_of(folder: Path, *conversations: dict) -> Path:
    """A corpus folder holding ``conversations``, each in the file named after its id."""
    folder.mkdir(parents=True, exist_ok=True)
    for data in conversations:
        (folder / f"{data['id']}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def write_json(path: Path, data) -> Path:
    """``data`` (a string as it is, anything else as JSON) written to ``path``."""
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def validate_problems(folder: Path) -> list[str]:
    """What ``evals validate`` printed, one problem a line; it must have exited 1."""
    result = evals("validate", folder)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.output.splitlines()


def exported_run(tmp_path: Path, runner: str = "no_memory", corpus: Path = CORPUS_SMALL) -> dict:
    """A genuine export of one run of ``runner`` (made in a store of its own), as a dict."""
    source = tmp_path / "source.duckdb"
    result = evals("run", "--runner", runner, "--corpus", corpus, "--store", source)
    assert result.exit_code == 0, result.output
    run_id = run_id_of(result.output)
    out = tmp_path / f"export-{run_id}.json"
    assert evals("export", run_id, "--store", source, "--output", out).exit_code == 0
    return json.loads(out.read_text(encoding="utf-8"))


def refused_import(store: Path, document: dict, tmp_path: Path) -> str:
    """Import ``document`` into ``store``: it must be refused in one line with the store unchanged."""
    before = files_beside(store) if store.exists() else None
    path = write_json(tmp_path / "import.json", document)
    line = one_line_error(evals("import", path, "--store", store))
    assert (files_beside(store) if store.exists() else None) == before
    return line


def csv_rows(text: str) -> list[dict[str, str]]:
    """The rows of a CSV document, each a dict keyed by the header."""
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


def answers_run(server, store: Path, *extra: str, runner: str = "recency"):
    """`evals run --with-answers --judge` of ``runner`` against ``server``, sent with the API key ``KEY``."""
    return evals(
        "run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
        "--with-answers", "--judge", "--concurrency", "1", *extra,
        env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None},
    )
