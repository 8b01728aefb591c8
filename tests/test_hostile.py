"""Hostile and careless input (issue 13): each case is refused with a one-line error, or made harmless.

Every refused action leaves the store byte for byte as it was, and no input
gives a traceback: the CLI prints ``Error: …`` naming the file and field and
exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.cli import cli

FIXTURES = Path(__file__).parent / "fixtures"
CORPUS_SMALL = FIXTURES / "corpus_small"


# -- helpers ------------------------------------------------------------------------------------


def evals(*args: str, env: dict | None = None):
    """``evals ARGS`` in-process; exceptions are caught, so a traceback shows as ``result.exception``."""
    return CliRunner().invoke(cli, [str(a) for a in args], env=env)


def one_line_error(result, exit_code: int = 1) -> str:
    """The ``Error: …`` line of a refused command, checked to be all it printed and not a traceback."""
    assert result.exit_code == exit_code, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def conversation(cid: str = "c1", **overrides) -> dict:
    """A valid conversation (two turns, one test point) with ``overrides`` applied."""
    data = {
        "schema_version": "1",
        "id": cid,
        "description": "d",
        "turns": [
            {"role": "user", "content": "I use vim"},
            {"role": "user", "content": "q", "test_at": {"question": "editor?", "expected_fact": "vim", "expected_keywords": ["vim"]}},
        ],
    }
    data.update(overrides)
    return data


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


# -- 3. degenerate keywords ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "field, value, where",
    [
        ("expected_keywords", [""], "expected_keywords[0]"),
        ("expected_keywords", ["vim", " \t"], "expected_keywords[1]"),
        ("expected_fact", "", "expected_fact"),
        ("expected_fact", "   ", "expected_fact"),
    ],
)
def test_blank_keyword_or_fact_is_refused(tmp_path, field, value, where):
    """An empty or whitespace-only keyword or fact (which would match every record) is a validate problem."""
    data = conversation()
    data["turns"][1]["test_at"][field] = value
    if field == "expected_fact":
        data["turns"][1]["test_at"]["expected_keywords"] = []
    corpus = corpus_of(tmp_path / "c", data)
    file = corpus / "c1.json"
    assert validate_problems(corpus) == [
        f"{file}: turns[1].test_at.{where}: must not be empty or only whitespace (it would match any record)"
    ]


def test_blank_keyword_no_longer_scores_no_memory_a_hit(tmp_path, store_path):
    """`evals run` refuses the corpus instead of scoring no_memory's empty retrieval a hit."""
    data = conversation()
    data["turns"][1]["test_at"]["expected_keywords"] = [""]
    corpus = corpus_of(tmp_path / "c", data)
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store_path))
    assert "turns[1].test_at.expected_keywords[0]: must not be empty" in line
    assert not store_path.exists()


def test_importers_skip_a_question_with_a_blank_answer(tmp_path):
    """A benchmark question whose answer is blank is skipped with a note, so the imported corpus stays valid."""
    data = json.loads((FIXTURES / "importers" / "locomo_small.json").read_text(encoding="utf-8"))
    data[0]["qa"][0]["answer"] = "  "
    source = write_json(tmp_path / "locomo.json", data)
    result = evals("import-corpus", "locomo", source, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    assert "note: [0].qa[0]: the answer is empty (question skipped)" in result.output
    assert evals("validate", tmp_path / "out").exit_code == 0


# -- 4. validator gaps --------------------------------------------------------------------------


def test_id_must_be_the_file_name(tmp_path):
    """An id that differs from the file name (as corpus/README.md requires) is a problem."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.json").write_text(json.dumps(conversation("first")), encoding="utf-8")
    assert validate_problems(corpus) == [
        f"{corpus / 'a.json'}: id: 'first' differs from the file name; it must be 'a' (the file name without .json)"
    ]


@pytest.mark.parametrize(
    "edit, where, suggestion",
    [
        (lambda d: d["turns"][1]["test_at"].update(expected_keyword=["vim"]), "turns[1].test_at.expected_keyword", "expected_keywords"),
        (lambda d: d["turns"][1]["test_at"].update(answerabel=False), "turns[1].test_at.answerabel", "answerable"),
        (lambda d: d.update(schema_versoin="1"), "schema_versoin", "schema_version"),
        (lambda d: d["turns"][0].update(recrod=False), "turns[0].recrod", "record"),
    ],
)
def test_unknown_field_is_refused_with_a_suggestion(tmp_path, edit, where, suggestion):
    """A misspelled field is not silently ignored: it is named, with the field it was probably meant to be."""
    data = conversation()
    edit(data)
    corpus = corpus_of(tmp_path / "c", data)
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: {where}: unknown field (did you mean '{suggestion}'?)"]


def test_unknown_field_without_a_near_name(tmp_path):
    """A field like no known one is named as unknown, listing the fields allowed there."""
    data = conversation(notes="anything")
    corpus = corpus_of(tmp_path / "c", data)
    assert validate_problems(corpus) == [
        f"{corpus / 'c1.json'}: notes: unknown field (allowed here: schema_version, id, description, turns)"
    ]


@pytest.mark.parametrize("role", ["system", "tool", "User", ""])
def test_role_must_be_user_or_assistant(tmp_path, role):
    """Roles outside user/assistant are refused at their JSON path."""
    data = conversation()
    data["turns"][0]["role"] = role
    corpus = corpus_of(tmp_path / "c", data)
    assert validate_problems(corpus) == [
        f"{corpus / 'c1.json'}: turns[0].role: expected 'user' or 'assistant', got {role!r}"
    ]


def test_longmemeval_role_outside_user_assistant(tmp_path):
    """An imported turn with another role is refused at its path in the input, not written."""
    data = json.loads((FIXTURES / "importers" / "longmemeval_small.json").read_text(encoding="utf-8"))
    data[0]["haystack_sessions"][0][0]["role"] = "system"
    source = write_json(tmp_path / "lme.json", data)
    line = one_line_error(evals("import-corpus", "longmemeval", source, "--out", tmp_path / "out"))
    assert line == f"Error: {source}: [0].haystack_sessions[0][0].role: expected 'user' or 'assistant', got 'system'"
    assert not (tmp_path / "out").exists()


def test_duplicate_keys_are_refused(tmp_path):
    """A key given twice in one object (JSON parsers silently keep one) is a problem at its path."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    text = json.dumps(conversation()).replace('"content": "I use vim"', '"content": "I use vim", "content": "I use emacs"')
    (corpus / "c1.json").write_text(text, encoding="utf-8")
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: turns[0]: key 'content' appears twice"]


def test_duplicate_top_level_key(tmp_path):
    """A duplicate key at the top level is named without a path."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    text = json.dumps(conversation())[:-1] + ', "id": "c1"}'
    (corpus / "c1.json").write_text(text, encoding="utf-8")
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: key 'id' appears twice"]


def test_the_rules_are_documented():
    """corpus/README.md states each new rule."""
    readme = (Path(__file__).resolve().parent.parent / "corpus" / "README.md").read_text(encoding="utf-8")
    for phrase in ("empty or only whitespace", "unknown field", "appears twice", "lone surrogate"):
        assert phrase in readme, phrase

