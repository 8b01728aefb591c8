"""The corpus loader: valid input loads; every kind of bad input is named precisely."""

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.corpora import conversation

from evals.cli import cli
from evals.model.corpus import CorpusError, check_corpus, load_corpus

GOLDEN = FIXTURES / "golden"


def write(folder: Path, name: str, data) -> Path:
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


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


# -- sessions and dates -------------------------------------------------------------


def sessioned(**test_overrides):
    """Three turns in two sessions, then a test point asking for session "s1"."""
    test = {"question": "editor?", "expected_fact": "vim", "expected_keywords": ["vim"], "evidence_sessions": ["s1"]}
    test.update(test_overrides)
    return conversation(
        turns=[
            {"role": "user", "content": "I use vim", "session": "s1", "date": "1:56 pm on 8 May, 2023"},
            {"role": "assistant", "content": "noted", "session": "s1", "date": "1:56 pm on 8 May, 2023"},
            {"role": "user", "content": "hello again", "session": "s2", "date": "2023/05/20 (Sat) 02:21"},
            {"role": "user", "content": "q", "test_at": test},
        ]
    )


def test_session_and_date_are_kept_verbatim(tmp_path):
    """A turn's session id and date are exposed exactly as written; a turn without them has None."""
    write(tmp_path, "c1.json", sessioned())
    turns = load_corpus(tmp_path).conversations[0].turns
    assert [(t.session, t.date) for t in turns] == [
        ("s1", "1:56 pm on 8 May, 2023"),
        ("s1", "1:56 pm on 8 May, 2023"),
        ("s2", "2023/05/20 (Sat) 02:21"),
        (None, None),
    ]


def test_conversation_sessions_lists_each_turns_session(tmp_path):
    """Conversation.sessions is one entry per turn, None where a turn has no session."""
    write(tmp_path, "c1.json", sessioned())
    assert load_corpus(tmp_path).conversations[0].sessions == ["s1", "s1", "s2", None]


def test_evidence_sessions_are_read(tmp_path):
    """A test point's evidence_sessions are exposed in the order given; absent, they are []."""
    write(tmp_path, "c1.json", sessioned(evidence_sessions=["s2", "s1"]))
    write(tmp_path, "c2.json", conversation("c2"))
    first, second = load_corpus(tmp_path).conversations
    assert first.turns[3].test_at.evidence_sessions == ["s2", "s1"]
    assert second.turns[1].test_at.evidence_sessions == []


def test_sessions_enter_the_digest(tmp_path):
    """A session is corpus content: the same turns with and without one have different digests."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    write(one, "c1.json", conversation())
    data = conversation()
    data["turns"][0]["session"] = "s1"
    write(two, "c1.json", data)
    assert load_corpus(one).digest != load_corpus(two).digest


def test_null_session_and_date_mean_none(tmp_path):
    """An explicit null session or date is read as absent and leaves the digest as without it."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    write(one, "c1.json", conversation())
    data = conversation()
    data["turns"][0].update(session=None, date=None)
    write(two, "c1.json", data)
    assert load_corpus(one).digest == load_corpus(two).digest


def _edit_turn(index, **fields):
    return lambda d: d["turns"][index].update(fields)


def _edit_test(**fields):
    return lambda d: d["turns"][3]["test_at"].update(fields)


@pytest.mark.parametrize(
    ("edit", "where", "message"),
    [
        (_edit_turn(0, session=""), "turns[0].session", "must be a non-empty string"),
        (_edit_turn(2, session="  "), "turns[2].session", "must be a non-empty string"),
        (_edit_turn(0, session=3), "turns[0].session", "expected a string, got int"),
        (_edit_turn(1, date=" \t"), "turns[1].date", "must be a non-empty string"),
        (_edit_turn(1, date=20230508), "turns[1].date", "expected a string, got int"),
        (_edit_turn(0, sesion="s1"), "turns[0].sesion", "unknown field (did you mean 'session'?)"),
        (_edit_turn(0, dates="x"), "turns[0].dates", "unknown field (did you mean 'date'?)"),
        (_edit_test(evidence_sessions="s1"), "turns[3].test_at.evidence_sessions", "expected an array, got string"),
        (_edit_test(evidence_sessions=["s1", ""]), "turns[3].test_at.evidence_sessions[1]", "must be a non-empty string"),
        (_edit_test(evidence_sessions=[1]), "turns[3].test_at.evidence_sessions[0]", "expected a string, got int"),
        (
            _edit_test(evidence_session=["s1"]),
            "turns[3].test_at.evidence_session",
            "unknown field (did you mean 'evidence_sessions'?)",
        ),
        (_edit_test(evidence_sessions=["s9"]), "turns[3].test_at.evidence_sessions[0]", "session 's9' is the session of no turn"),
        (_edit_test(evidence_sessions=["s1", "s1"]), "turns[3].test_at.evidence_sessions[1]", "session 's1' is listed twice"),
    ],
)
def test_bad_session_fields_are_named(tmp_path, edit, where, message):
    """Each bad session, date or evidence session is one problem naming the file and its JSON path."""
    data = sessioned()
    edit(data)
    write(tmp_path, "c1.json", data)
    assert problems(tmp_path) == [f"{tmp_path / 'c1.json'}: {where}: {message}"]


def test_evidence_session_must_come_before_the_test_point(tmp_path):
    """A session whose only turns are at or after the test point can never be in memory there."""
    data = sessioned(evidence_sessions=["s3"])
    data["turns"][3]["session"] = "s3"
    data["turns"].append({"role": "assistant", "content": "later", "session": "s3"})
    write(tmp_path, "c1.json", data)
    assert problems(tmp_path) == [
        f"{tmp_path / 'c1.json'}: turns[3].test_at.evidence_sessions[0]: "
        "session 's3' has no recorded turn before this one, so memory never holds it"
    ]


def test_evidence_session_of_unrecorded_turns_only(tmp_path):
    """A session whose earlier turns all have record: false is never held by memory either."""
    data = sessioned(evidence_sessions=["s2"])
    data["turns"][2]["record"] = False
    write(tmp_path, "c1.json", data)
    assert problems(tmp_path) == [
        f"{tmp_path / 'c1.json'}: turns[3].test_at.evidence_sessions[0]: "
        "session 's2' has no recorded turn before this one, so memory never holds it"
    ]


# -- published reference rows: references.json --------------------------------------


def reference(**overrides):
    row = {
        "label": "Some paper, BM25 (session level)",
        "citation": "Someone et al. 2025, Table 2",
        "metric": "recall_any",
        "level": "session",
        "k": 5,
        "value": 0.634,
        "note": "computed on their split; not re-run here",
    }
    row.update(overrides)
    return row


def test_references_are_loaded_beside_the_conversations(tmp_path):
    """references.json is read into Corpus.references and is not taken for a conversation."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference(), reference(k=10, value=0.71, note=None)])
    corpus = load_corpus(tmp_path)
    assert [c.id for c in corpus.conversations] == ["c1"]
    assert [(r.label, r.metric, r.level, r.k, r.value, r.note) for r in corpus.references] == [
        ("Some paper, BM25 (session level)", "recall_any", "session", 5, 0.634, "computed on their split; not re-run here"),
        ("Some paper, BM25 (session level)", "recall_any", "session", 10, 0.71, None),
    ]
    assert corpus.references[0].citation == "Someone et al. 2025, Table 2"


def test_no_references_file_means_no_references(tmp_path):
    """A corpus without references.json has an empty list."""
    write(tmp_path, "c1.json", conversation())
    assert load_corpus(tmp_path).references == []


def test_references_are_not_in_the_digest(tmp_path):
    """Adding or changing references.json leaves the corpus digest as it was: published figures are not content."""
    write(tmp_path, "c1.json", conversation())
    before = load_corpus(tmp_path).digest
    write(tmp_path, "references.json", [reference()])
    assert load_corpus(tmp_path).digest == before
    write(tmp_path, "references.json", [reference(value=0.5)])
    assert load_corpus(tmp_path).digest == before


def test_references_alone_are_not_a_corpus(tmp_path):
    """A folder holding only references.json has no conversation, which is the usual error."""
    write(tmp_path, "references.json", [reference()])
    assert problems(tmp_path) == [f"{tmp_path}: no *.json files in the corpus folder"]


def test_integer_value_is_a_number(tmp_path):
    """A value written as 0 or 1 is a number like any other."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference(value=1)])
    assert load_corpus(tmp_path).references[0].value == 1.0


@pytest.mark.parametrize(
    ("rows", "where", "message"),
    [
        ({"label": "x"}, "", "expected a JSON array of reference objects at the top level, got dict"),
        (["row"], "[0]", "expected an object, got string"),
        ([reference(nte="x")], "[0].nte", "unknown field (did you mean 'note'?)"),
        ([reference(source="x")], "[0].source", "unknown field (allowed here: label, citation, metric, level, k, value, note)"),
        (
            [reference(metric="recall@5")],
            "[0].metric",
            "expected 'recall_any', 'recall_all', 'recall_frac', 'ndcg_any' or 'ndcg_any_lme', got 'recall@5'",
        ),
        ([reference(level="dialog")], "[0].level", "expected 'turn' or 'session', got 'dialog'"),
        ([reference(k=0)], "[0].k", "must be a positive integer, got 0"),
        ([reference(k=5.0)], "[0].k", "expected an integer, got float"),
        ([reference(k=True)], "[0].k", "expected an integer, got bool"),
        ([reference(value=58.8)], "[0].value", "must be between 0 and 1 (a fraction, not a percentage), got 58.8"),
        ([reference(value="0.5")], "[0].value", "expected a number, got string"),
        ([reference(value=True)], "[0].value", "expected a number, got bool"),
        ([reference(label=" ")], "[0].label", "must be a non-empty string"),
        ([reference(note="")], "[0].note", "must be a non-empty string"),
        ([reference(), reference(value=0.5)], "[1]", "same label, metric, level and k as [0]"),
    ],
)
def test_bad_references_are_named(tmp_path, rows, where, message):
    """Each problem in references.json names the file and the JSON path of the field."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", rows)
    path = tmp_path / "references.json"
    assert problems(tmp_path) == [f"{path}: {where}: {message}" if where else f"{path}: {message}"]


def test_missing_reference_fields_are_each_named(tmp_path):
    """A row missing its citation and k gets one problem per field."""
    row = reference()
    del row["citation"], row["k"]
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference(k=10), row])
    path = tmp_path / "references.json"
    assert problems(tmp_path) == [
        f"{path}: [1].citation: required field is missing",
        f"{path}: [1].k: required field is missing",
    ]


def test_references_json_is_read_as_strictly_as_a_conversation(tmp_path):
    """Broken JSON or a repeated key in references.json is reported like in any corpus file."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", '[{"label": "a", "label": "b"}]')
    assert problems(tmp_path) == [f"{tmp_path / 'references.json'}: [0]: key 'label' appears twice"]


def test_bad_references_fail_the_load(tmp_path):
    """load_corpus refuses a corpus whose references.json is invalid, as evals run would."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference(level="dialog")])
    with pytest.raises(CorpusError, match=r"references.json: \[0\].level"):
        load_corpus(tmp_path)


def test_validate_reports_reference_problems(tmp_path):
    """`evals validate` lists references.json's problems with the conversations' and exits 1."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference(k=-1)])
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.splitlines() == [f"{tmp_path / 'references.json'}: [0].k: must be a positive integer, got -1"]


def test_validate_counts_conversations_not_references(tmp_path):
    """A valid corpus with references.json validates, counting only its conversations."""
    write(tmp_path, "c1.json", conversation())
    write(tmp_path, "references.json", [reference()])
    result = CliRunner().invoke(cli, ["validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "1 conversations, 1 test points" in result.output


def test_a_bad_benchmark_declaration_is_a_problem_naming_the_file_and_field(tmp_path):
    """benchmark.json naming no known benchmark, or not an object, is a problem with its file and path;
    a valid one is read and changes the digest (it decides how runs are judged)."""
    import json
    import shutil

    from evals.model.corpus import check_corpus, load_corpus

    corpus = tmp_path / "c"
    shutil.copytree(FIXTURES / "corpus_small", corpus)
    plain = load_corpus(corpus).digest
    (corpus / "benchmark.json").write_text(json.dumps({"name": "locomoo"}))
    (problem,) = check_corpus(corpus)[1]
    assert problem.file.endswith("benchmark.json") and problem.path == "name" and "'locomo'" in problem.message
    (corpus / "benchmark.json").write_text("[]")
    (problem,) = check_corpus(corpus)[1]
    assert "expected a JSON object" in problem.message
    (corpus / "benchmark.json").write_text(json.dumps({"name": "locomo"}))
    declared = load_corpus(corpus)
    assert declared.benchmark == "locomo" and declared.digest != plain
