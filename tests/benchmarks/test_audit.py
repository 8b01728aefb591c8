"""`evals audit-labels`: the flags on a LoCoMo-format fixture with planted wrong labels are exactly the planted ones.

Planted (tests/fixtures/audit/locomo_planted.json):
- conv-1 "Which composer does Bob play?": labelled D1:3, the question turn; "Vivaldi" is in D1:4;
- conv-1 "Who teaches Bob the cello?": evidence D7:1, a turn that does not exist;
- conv-2 "What does Cy bake?": labelled D1:2, the question; the answer is D1:3;
- conv-2 "What does Di do on weekends?": evidence "D:1:4", malformed, so it names no turn.
Traps that must not be flagged: a right label; a date answer whose label shares words only through its
session date while another turn holds the date verbatim; a paraphrase ("give up" vs "keep going")
that no other turn holds; a count ("2") labelled on a turn without it while "twice" and "2" appear
elsewhere; an unanswerable question; a multi-hop label whose second turn holds the answer.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.audit import PLANTED

from evals.benchmarks.audit import DANGLING, MISSES, audit_corpus, content_words
from evals.benchmarks.errata import apply_errata, read_errata
from evals.benchmarks.formats import import_corpus
from evals.cli import cli
from evals.model.corpus import load_corpus


@pytest.fixture
def corpus_dir(tmp_path) -> Path:
    out = tmp_path / "planted"
    import_corpus("locomo", PLANTED, out)
    return out


def point(corpus, question: str) -> tuple[str, int]:
    for conversation in corpus.conversations:
        for index, test in conversation.test_points():
            if test.question == question:
                return conversation.id, index
    raise AssertionError(question)


def test_the_flags_are_exactly_the_planted_ones(corpus_dir):
    corpus = load_corpus(corpus_dir)
    audit = audit_corpus(corpus, source=PLANTED)
    found = {(f.conversation, f.turn, f.kind) for f in audit.flags}
    assert found == {
        (*point(corpus, "Which composer does Bob play?"), MISSES),
        (*point(corpus, "What does Cy bake?"), MISSES),
        (*point(corpus, "Who teaches Bob the cello?"), DANGLING),
        (*point(corpus, "What does Di do on weekends?"), DANGLING),
    }
    composer = next(f for f in audit.flags if f.question == "Which composer does Bob play?")
    assert composer.found_in == (3,)  # D1:4, where "Vivaldi" is
    assert {f.ids for f in audit.flags if f.kind == DANGLING} == {("D7:1",), ("D:1:4",)}
    assert audit.source["format"] == "locomo" and audit.source["sha256"] == hashlib.sha256(PLANTED.read_bytes()).hexdigest()
    assert audit.test_points == 11


def test_without_the_source_only_the_content_rule_runs(corpus_dir):
    audit = audit_corpus(load_corpus(corpus_dir))
    assert {f.kind for f in audit.flags} == {MISSES} and len(audit.flags) == 2
    assert any("--source" in note for note in audit.notes)


def test_content_words():
    assert content_words("The week before Ann's 8 May, 2023 exams") == {"week", "ann", "8", "may", "2023", "exam"}
    assert content_words("it is the one") == {"one"}


def test_the_command_prints_each_flag_with_its_turns_and_the_counts(corpus_dir):
    result = CliRunner().invoke(cli, ["audit-labels", str(corpus_dir), "--source", str(PLANTED)])
    assert result.exit_code == 0, result.output
    assert "as published: 4 flags (2 evidence misses the answer, 2 evidence id names no turn)" in result.output
    assert "holds it  turn 3: 'Bob: Mostly baroque sonatas by Vivaldi, 2 hours a day.'" in result.output
    assert "ids naming no turn: D7:1" in result.output
    document = json.loads(CliRunner().invoke(cli, ["audit-labels", str(corpus_dir), "--format", "json"]).output)
    assert len(document["flags"]) == 2 and document["errata"] is None


# -- errata ----------------------------------------------------------------------------------------------


def write_errata(path: Path, errata: list[dict], source: str = "a hand audit of the fixture") -> Path:
    path.write_text(json.dumps({"source": source, "errata": errata}), encoding="utf-8")
    return path


def test_errata_give_a_second_count_recorded_by_source_and_digest(corpus_dir, tmp_path):
    corpus = load_corpus(corpus_dir)
    bake = point(corpus, "What does Cy bake?")
    errata = write_errata(
        tmp_path / "errata.json",
        [
            {
                "conversation": "conv-2",
                "question": "What does Cy bake?",
                "evidence_turns": [2],
                "reason": "D1:2 is the question; D1:3 answers it",
            },
            {
                "conversation": "000_conv-1",
                "question": "Who teaches Bob the cello?",
                "evidence_turns": [5],
                "reason": "D7:1 does not exist; D2:1 names Marta",
                "source": "a reader's report",
            },
        ],
    )
    audit = audit_corpus(corpus, source=PLANTED, errata=errata)
    assert len(audit.flags) == 4  # as published: unchanged
    assert {(f.conversation, f.question) for f in audit.flags_with_errata} == {
        ("000_conv-1", "Which composer does Bob play?"),
        ("001_conv-2", "What does Di do on weekends?"),
    }
    assert (
        audit.errata.sha256 == hashlib.sha256(errata.read_bytes()).hexdigest()
        and audit.errata.source == "a hand audit of the fixture"
    )
    assert audit.errata.entries[bake].evidence_turns == (2,)
    corrected = apply_errata(corpus, audit.errata)
    conversation = next(c for c in corrected.conversations if c.id == bake[0])
    assert conversation.turns[bake[1]].test_at.evidence_turns == [2]
    published = next(c for c in corpus.conversations if c.id == bake[0])
    assert published.turns[bake[1]].test_at.evidence_turns == [1]  # the published corpus is untouched

    result = CliRunner().invoke(cli, ["audit-labels", str(corpus_dir), "--source", str(PLANTED), "--errata", str(errata)])
    assert result.exit_code == 0, result.output
    assert "as published: 4 flags" in result.output
    assert (
        f"with errata: 2 flags (1 evidence misses the answer, 1 evidence id names no turn); "
        f"2 corrections from a hand audit of the fixture ({errata}, sha256 {audit.errata.sha256})"
        in result.output
    )


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ({"conversation": "conv-9", "turn": 1, "evidence_turns": [0], "reason": "x"},
         "errata[0].conversation", "names no conversation"),
        ({"conversation": "conv-2", "turn": 1, "evidence_turns": [0], "reason": "x"},
         "errata[0].turn", "is not the turn of a test point"),
        ({"conversation": "conv-2", "question": "What does Cy bake?", "evidence_turns": [9], "reason": "x"},
         "errata[0].evidence_turns[0]", "not an earlier recorded turn"),
        ({"conversation": "conv-2", "question": "What does Cy bake?", "evidence_turns": [2]},
         "errata[0].reason", "non-empty string"),
        ({"conversation": "conv-2", "question": "What does Cy bake?", "evidence_turns": [2], "reason": "x", "why": 1},
         "errata[0].why", "unknown field"),
    ],
)
def test_a_bad_erratum_is_one_line_naming_the_file_and_path(corpus_dir, tmp_path, entry, where, message):
    errata = write_errata(tmp_path / "errata.json", [entry])
    with pytest.raises(Exception) as caught:
        read_errata(errata, load_corpus(corpus_dir))
    assert f"{errata}: {where}: " in str(caught.value) and message in str(caught.value)
    result = CliRunner().invoke(cli, ["audit-labels", str(corpus_dir), "--errata", str(errata)])
    assert result.exit_code == 1 and result.output.startswith("Error: ") and result.output.count("\n") == 1


def test_a_source_that_is_not_the_corpus_s_is_refused(corpus_dir):
    other = FIXTURES / "importers" / "locomo_small.json"
    result = CliRunner().invoke(cli, ["audit-labels", str(corpus_dir), "--source", str(other)])
    assert result.exit_code == 1 and "give the file the corpus was imported from" in result.output


def test_longmemeval_answer_session_ids_naming_no_session_are_flagged(tmp_path):
    """In the LongMemEval fixture, q_multi_2's answer sessions "a" and "b" name no session (it gives no
    haystack_session_ids): one flag with both ids; the other questions' ids resolve."""
    source = FIXTURES / "importers" / "longmemeval_small.json"
    out = tmp_path / "lme"
    import_corpus("longmemeval", source, out)
    audit = audit_corpus(load_corpus(out), source=source)
    dangling = [f for f in audit.flags if f.kind == DANGLING]
    assert [(f.conversation, f.ids) for f in dangling] == [("001_q_multi_2", ("a", "b"))]
    assert audit.source["format"] == "longmemeval"
