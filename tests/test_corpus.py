"""The corpus loader: valid input loads; every kind of bad input is named precisely."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.cli import cli
from evals.corpus import CorpusError, check_corpus, load_corpus

GOLDEN = Path(__file__).parent / "fixtures" / "golden"


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def conversation(cid="c1", **overrides):
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


def problems(folder: Path) -> list[str]:
    return [str(p) for p in check_corpus(folder)[1]]


def test_valid_corpus_loads_in_file_name_order(tmp_path):
    """Files load sorted by name, whatever order they were written in."""
    write(tmp_path, "b.json", conversation("b"))
    write(tmp_path, "a.json", conversation("a"))
    assert [c.id for c in load_corpus(tmp_path).conversations] == ["a", "b"]


def test_missing_schema_version_means_1(tmp_path):
    """A conversation without schema_version is read as version "1"."""
    data = conversation()
    del data["schema_version"]
    write(tmp_path, "c1.json", data)
    assert load_corpus(tmp_path).conversations[0].schema_version == "1"


def test_unknown_fields_are_refused(tmp_path):
    """An unknown key is a problem (a misspelled optional field would otherwise be silently dropped)."""
    write(tmp_path, "c1.json", conversation(notes="anything"))
    assert problems(tmp_path) == [
        f"{tmp_path / 'c1.json'}: notes: unknown field (allowed here: schema_version, id, description, turns)"
    ]


def test_only_json_files_directly_inside_count(tmp_path):
    """Files in subfolders and non-.json files are not part of the corpus."""
    write(tmp_path, "c1.json", conversation())
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", "other.json", conversation("other"))
    write(tmp_path, "notes.txt", "hello")
    assert len(load_corpus(tmp_path).conversations) == 1


def test_missing_folder(tmp_path):
    """A folder that does not exist is one clear problem."""
    assert problems(tmp_path / "nope") == [f"{tmp_path / 'nope'}: corpus folder does not exist"]


def test_empty_folder(tmp_path):
    """A folder without *.json files is an error, not an empty run."""
    assert problems(tmp_path) == [f"{tmp_path}: no *.json files in the corpus folder"]


def test_unreadable_file(tmp_path):
    """A *.json that cannot be read (here a folder named like one) is reported by name."""
    (tmp_path / "a.json").mkdir()
    assert problems(tmp_path) == [f"{tmp_path / 'a.json'}: not a regular file (a directory); only regular files are read"]


def test_not_utf8(tmp_path):
    """Bytes that are not UTF-8 are reported with their position."""
    (tmp_path / "a.json").write_bytes(b'{"id": "\xff"}')
    assert "not UTF-8 text" in problems(tmp_path)[0]


def test_invalid_json_has_line_and_column(tmp_path):
    """Broken JSON names the line and column."""
    write(tmp_path, "a.json", '{\n  "id": "x",\n  "turns": [}\n')
    assert problems(tmp_path) == [f"{tmp_path / 'a.json'}: invalid JSON at line 3, column 13: Expecting value"]


def test_top_level_must_be_an_object(tmp_path):
    """A JSON array at the top level is rejected with what was expected."""
    write(tmp_path, "a.json", "[]")
    assert problems(tmp_path) == [f"{tmp_path / 'a.json'}: expected a JSON object at the top level, got list"]


def test_unsupported_schema_version(tmp_path):
    """schema_version "2" is refused, naming the field and the supported version."""
    write(tmp_path, "a.json", conversation(schema_version="2"))
    assert problems(tmp_path) == [
        f"{tmp_path / 'a.json'}: schema_version: unsupported schema_version '2'; this harness reads '1'"
    ]


def test_missing_required_fields(tmp_path):
    """Each missing field is its own problem with its JSON path."""
    data = conversation()
    del data["description"]
    del data["turns"][1]["test_at"]["question"]
    write(tmp_path, "a.json", data)
    assert problems(tmp_path) == [
        f"{tmp_path / 'a.json'}: description: required field is missing",
        f"{tmp_path / 'a.json'}: turns[1].test_at.question: required field is missing",
    ]


def test_wrong_type_names_the_json_path(tmp_path):
    """A string where a list of keywords belongs is located as turns[1].test_at.expected_keywords."""
    data = conversation()
    data["turns"][1]["test_at"]["expected_keywords"] = "vim"
    write(tmp_path, "a.json", data)
    assert problems(tmp_path) == [
        f"{tmp_path / 'a.json'}: turns[1].test_at.expected_keywords: expected an array, got string"
    ]


def test_wrong_type_inside_a_list(tmp_path):
    """A number among the keywords is located down to its index."""
    data = conversation()
    data["turns"][1]["test_at"]["expected_keywords"] = ["vim", 7]
    write(tmp_path, "a.json", data)
    assert problems(tmp_path) == [
        f"{tmp_path / 'a.json'}: turns[1].test_at.expected_keywords[1]: expected a string, got int"
    ]


def test_empty_turns(tmp_path):
    """A conversation with no turns is an error."""
    write(tmp_path, "a.json", conversation(turns=[]))
    assert problems(tmp_path) == [f"{tmp_path / 'a.json'}: turns: expected at least one turn, got an empty list"]


def test_id_is_the_file_name(tmp_path):
    """An id that is not its file's name is a problem, so two files can never share an id."""
    write(tmp_path, "a.json", conversation("same"))
    write(tmp_path, "same.json", conversation("same"))
    assert problems(tmp_path) == [
        f"{tmp_path / 'a.json'}: id: 'same' differs from the file name; it must be 'a' (the file name without .json)"
    ]


def test_load_raises_with_every_problem(tmp_path):
    """load_corpus raises one error carrying all problems of all files."""
    write(tmp_path, "a.json", "{")
    write(tmp_path, "b.json", conversation(turns=[]))
    with pytest.raises(CorpusError) as caught:
        load_corpus(tmp_path)
    assert len(caught.value.problems) == 2
    assert "and 1 more problems" in str(caught.value)


def test_digest_ignores_formatting_and_folder_names(tmp_path):
    """The corpus digest depends on content, not on indentation or where the folder is."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    write(one, "c1.json", conversation())
    (two / "c1.json").write_text(json.dumps(conversation(), indent=4), encoding="utf-8")
    assert load_corpus(one).digest == load_corpus(two).digest


def test_validate_reports_every_problem_and_exits_1(tmp_path):
    """`evals validate` lists all problems and exits 1."""
    write(tmp_path, "a.json", "{")
    write(tmp_path, "b.json", conversation(turns=[]))
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "a.json: invalid JSON" in result.output and "b.json: turns:" in result.output


def test_validate_ok_exits_0(tmp_path):
    """`evals validate` on a valid corpus says so and exits 0."""
    shutil.copytree(GOLDEN, tmp_path / "c")
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "c")])
    assert result.exit_code == 0
    assert "3 conversations, 4 test points" in result.output
