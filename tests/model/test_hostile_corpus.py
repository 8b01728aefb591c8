"""Hostile and careless corpora: blank keywords, validator gaps and references beyond the
cutoff range are each refused with a one-line problem naming the file and field.

Every refused action leaves the store byte for byte as it was, and no input gives a traceback: the CLI
prints ``Error: …`` naming the file and field and exits 1 (2 for a bad option, as click does).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT
from helpers.cli import CORPUS_SMALL, evals
from helpers.corpora import conversation
from helpers.errors import one_line_error
from helpers.hostile import corpus_of, exported_run, refused_import, validate_problems, write_json
from helpers.stores import unchanged

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
    assert "note: conv-1 ([0].qa[0]): the answer is empty (question skipped)" in result.output
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
    readme = (ROOT / "corpus" / "README.md").read_text(encoding="utf-8")
    for phrase in ("empty or only whitespace", "unknown field", "appears twice", "lone surrogate"):
        assert phrase in readme, phrase


# -- references.json is range-checked up front -----------------------------------


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
