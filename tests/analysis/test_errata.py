"""Errata: a run's headline "with errata", recomputed from the store beside the published one, never over it.

The runs are real (``evals run`` into a DuckDB file) on the planted LoCoMo fixture of the label audit
(tests/fixtures/audit/locomo_planted.json) and on the starter-format corpus_small. ``recency`` at k = 1
retrieves each question's last earlier turn, so which verdicts an erratum flips is known by hand:

conv-1 (turns 0-7, questions at 8-14; recency retrieves turn 7), conv-2 (turns 0-3, questions at 4-7;
recency retrieves turn 3). As published recency hits only "What does Bob say he will not do?" (evidence
turn 7): 1 of the 9 questions with evidence.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.audit import PLANTED, audit_entry, write_audit
from helpers.cli import run_id_of

from evals.analysis.errata import EXCLUDED, errata_figures
from evals.benchmarks.formats import import_corpus
from evals.cli import cli
from evals.store import Store


def invoke(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def run(corpus: Path, store: Path, strategy: str, k: int = 1) -> str:
    result = invoke("run", "--runner", strategy, "--corpus", corpus, "--store", store, "--k", str(k))
    assert result.exit_code == 0, result.output
    return run_id_of(result.output)


@pytest.fixture(scope="module")
def planted(tmp_path_factory) -> tuple[Path, Path, str, str]:
    """The planted LoCoMo corpus, and a store with a recency and a bm25 run on it (k = 1)."""
    here = tmp_path_factory.mktemp("planted")
    corpus = here / "planted"
    import_corpus("locomo", PLANTED, corpus)
    store = here / "results.duckdb"
    return corpus, store, run(corpus, store, "recency"), run(corpus, store, "bm25")


def write(path: Path, errata: list[dict], **top) -> Path:
    path.write_text(json.dumps({"source": "a hand check of the fixture", **top, "errata": errata}), encoding="utf-8")
    return path


# The planted corrections, and what each does to recency's verdict.
ERRATA = [
    # miss -> hit: the answer ("Vivaldi") is not in turn 7, but the planted label moves there.
    {"conversation": "conv-1", "question": "Which composer does Bob play?", "evidence_turns": [7], "reason": "planted: a hit"},
    # hit -> miss
    {"conversation": "conv-1", "turn": 12, "evidence_turns": [4], "reason": "planted: a miss"},
    # no evidence (its id names no turn) -> evidence turn 3, which recency retrieved: unscored -> hit
    {"conversation": "001_conv-2", "question": "What does Di do on weekends?", "evidence_turns": [3], "reason": "D1:4 holds it"},
    # left out as invalid: miss -> excluded
    {"conversation": "conv-2", "question": "Where did Cy move?", "exclude": True, "reason": "planted: invalid"},
    # an answer correction: an evidence headline's verdict does not move
    {"conversation": "conv-1", "turn": 8, "expected_fact": "Pixel the cat", "reason": "planted: answer only"},
]
FLIPS = {
    ("000_conv-1", 9): ("miss", "hit"),
    ("000_conv-1", 12): ("hit", "miss"),
    ("001_conv-2", 6): ("unscored", "hit"),
    ("001_conv-2", 5): ("miss", EXCLUDED),
}


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_planted_errata_flip_exactly_the_planted_verdicts_and_never_the_published_figure(planted, tmp_path):
    corpus, store, recency, bm25 = planted
    errata = write(tmp_path / "errata.json", ERRATA)
    before = digest(store)
    with Store.open(store, read_only=True) as opened:
        summaries = opened.latest_per_configuration()
        figures = errata_figures(opened, [errata], summaries)
    assert digest(store) == before  # read only: nothing written over the published runs
    figure = figures.of(recency)
    assert {(c, t): (a, b) for c, t, a, b in figure.changed} == FLIPS
    assert (figure.published.hits, figure.published.total) == (1, 9)  # as stored, untouched
    assert (figure.headline.hits, figure.headline.total) == (2, 9)  # +1 -1 +1 (and one more counted) -1 counted
    assert (figure.corrected, figure.excluded) == (5, 1)
    assert figure.errata.sha256 == digest(errata) and figure.errata.source == "a hand check of the fixture"
    # Every run: only the points an erratum names can change, and the published figure is the stored one.
    for summary in summaries:
        found = figures.of(summary.run_id)
        assert {(c, t) for c, t, _, _ in found.changed} <= set(FLIPS) | {("000_conv-1", 8)}
        assert found.published == summary.headline and found.problem == ""
    assert ("000_conv-1", 8) not in {(c, t) for c, t, _, _ in figures.of(bm25).changed}


def test_the_leaderboard_shows_both_figures_labelled_and_recorded(planted, tmp_path):
    corpus, store, recency, _ = planted
    errata = write(tmp_path / "errata.json", ERRATA)
    plain = invoke("leaderboard", "--store", store, "--format", "json")
    result = invoke("leaderboard", "--store", store, "--errata", errata, "--format", "json")
    assert result.exit_code == 0, result.output
    rows = {r["run_id"]: r for r in json.loads(result.output)}
    published = {r["run_id"]: r for r in json.loads(plain.output)}
    row = rows[recency]
    assert {k: v for k, v in row.items() if k != "headline_with_errata"} == published[recency]  # the published row, unchanged
    assert row["headline"]["hits"] == 1 and row["headline"]["total"] == 9
    shown = row["headline_with_errata"]
    assert (shown["label"], shown["hits"], shown["total"]) == ("recall_any@k with errata", 2, 9)
    assert shown["errata"]["sha256"] == digest(errata) and shown["errata"]["path"] == str(errata)
    assert shown["errata"]["corrections"] == 5 and shown["errata"]["excluded"] == 1
    table = invoke("leaderboard", "--store", store, "--errata", errata)
    assert table.exit_code == 0, table.output
    assert "with errata" in table.output and f"sha256 {digest(errata)}" in " ".join(table.output.split())
    line = next(line for line in table.output.splitlines() if line.startswith("recency"))
    assert "1/9" in line and "2/9" in line  # published, then with errata, side by side
    wide = invoke("leaderboard", "--store", store, "--errata", errata, "--wide")
    assert "with errata [95% CI]" in wide.output and "2/9" in wide.output
    csv = invoke("leaderboard", "--store", store, "--errata", errata, "--format", "csv").output.splitlines()
    header = csv[0].split(",")
    assert {"headline_with_errata_hits", "headline_with_errata_total", "errata_sha256"} <= set(header)
    assert invoke("leaderboard", "--store", store, "--errata", errata, "--format", "markdown").exit_code == 2


def test_an_answer_correction_moves_a_keyword_headline(corpus_small, tmp_path):
    """On a corpus without evidence the headline is keyword recall: a corrected answer is matched against the
    stored records again (recency k = 1 retrieves the turn before each question)."""
    store = tmp_path / "results.duckdb"
    run_id = run(corpus_small, store, "recency")
    errata = write(
        tmp_path / "errata.json",
        [
            {"conversation": "001_editor", "turn": 5, "expected_keywords": ["thanks"], "reason": "planted: a hit"},
            {"conversation": "002_pet", "turn": 8, "expected_fact": "a fixed amount", "reason": "planted: a hit"},
            {"conversation": "002_pet", "turn": 10, "exclude": True, "reason": "planted: invalid"},
        ],
    )
    with Store.open(store, read_only=True) as opened:
        figure = errata_figures(opened, [errata], opened.runs()).of(run_id)
    assert figure.published.rule.name == "keyword" and (figure.published.hits, figure.published.total) == (0, 4)
    assert (figure.headline.hits, figure.headline.total) == (2, 3)
    assert {(c, t): (a, b) for c, t, a, b in figure.changed} == {
        ("001_editor", 5): ("miss", "hit"),
        ("002_pet", 8): ("miss", "hit"),
        ("002_pet", 10): ("miss", EXCLUDED),
    }


@pytest.mark.parametrize(
    ("entry", "where", "message"),
    [
        ({"conversation": "conv-9", "turn": 9, "evidence_turns": [0], "reason": "x"},
         "errata[0].conversation", "names no conversation"),
        ({"conversation": "conv-1", "turn": 3, "evidence_turns": [0], "reason": "x"},
         "errata[0].turn", "is not the turn of a test point"),
        ({"conversation": "conv-1", "question": "Who is Ann?", "evidence_turns": [0], "reason": "x"},
         "errata[0].question", "is no test point's question"),
        ({"conversation": "conv-1", "turn": 9, "question": "What is Ann's cat called?", "evidence_turns": [0], "reason": "x"},
         "errata[0].question", "is not the question at turn 9"),
        ({"conversation": "conv-1", "turn": 9, "evidence_turns": [8], "reason": "x"},
         "errata[0].evidence_turns[0]", "not an earlier recorded turn"),
        ({"conversation": "conv-1", "turn": 9, "evidence_turns": "3", "reason": "x"},
         "errata[0].evidence_turns", "array of turn indexes"),
        ({"conversation": "conv-1", "turn": 9, "expected_fact": " ", "reason": "x"},
         "errata[0].expected_fact", "non-empty string"),
        ({"conversation": "conv-1", "turn": 9, "expected_keywords": [""], "reason": "x"},
         "errata[0].expected_keywords", "non-empty strings"),
        ({"conversation": "conv-1", "turn": 9, "exclude": "yes", "reason": "x"}, "errata[0].exclude", "true or false"),
        ({"conversation": "conv-1", "turn": 9, "exclude": True, "evidence_turns": [3], "reason": "x"},
         "errata[0].evidence_turns", "takes no correction"),
        ({"conversation": "conv-1", "turn": 9, "reason": "x"}, "errata[0]", "corrects nothing"),
        ({"conversation": "conv-1", "turn": 9, "evidence_turns": [3], "reason": "x", "why": 1}, "errata[0].why", "unknown field"),
    ],
)
def test_a_bad_errata_file_is_one_line_naming_file_and_field_and_leaves_the_store(planted, tmp_path, entry, where, message):
    _, store, _, _ = planted
    errata = write(tmp_path / "errata.json", [entry])
    before = (digest(store), store.stat().st_mtime_ns)
    for command in (["leaderboard"], ["build-site", "--out", tmp_path / "site"]):
        result = invoke(*command, "--store", store, "--errata", errata)
        assert result.exit_code == 1, result.output
        assert result.output.startswith(f"Error: {errata}: {where}: ") and message in result.output, result.output
        assert result.output.count("\n") == 1
    assert (digest(store), store.stat().st_mtime_ns) == before
    assert not (tmp_path / "site").exists()


def test_errata_for_no_corpus_in_the_store_and_two_files_for_one_are_refused(planted, tmp_path):
    _, store, _, _ = planted
    other = write(
        tmp_path / "other.json", [{"conversation": "conv-1", "turn": 9, "exclude": True, "reason": "x"}], benchmark="longmemeval"
    )
    result = invoke("leaderboard", "--store", store, "--errata", other)
    assert (
        result.exit_code == 1
        and "errata[0].conversation: 'conv-1' names no conversation of a corpus declaring benchmark 'longmemeval'"
        in result.output
    )
    one = write(tmp_path / "one.json", [{"conversation": "conv-1", "turn": 9, "exclude": True, "reason": "x"}])
    two = write(tmp_path / "two.json", [{"conversation": "conv-2", "turn": 5, "exclude": True, "reason": "x"}])
    result = invoke("leaderboard", "--store", store, "--errata", one, "--errata", two)
    assert (
        result.exit_code == 1
        and f"{two}: (top level): corrects corpus planted" in result.output
        and f"which {one} corrects already" in result.output
    )


# -- a suite's [errata] table -------------------------------------------------------------------------------


def test_a_suite_names_errata_per_corpus_checked_before_anything_runs(planted, tmp_path):
    corpus, store, recency, _ = planted
    shutil.copytree(corpus, tmp_path / "planted")
    write(tmp_path / "errata.json", ERRATA)
    suite = tmp_path / "suite.toml"
    suite.write_text('[[matrix]]\ncorpora = ["planted"]\nstrategies = ["recency"]\nk = 1\n\n[errata]\nplanted = "errata.json"\n')
    rows = json.loads(invoke("leaderboard", "--store", store, "--errata", suite, "--format", "json").output)
    assert next(r for r in rows if r["run_id"] == recency)["headline_with_errata"]["hits"] == 2
    # A bad errata file stops the suite before its first run.
    write(tmp_path / "errata.json", [{"conversation": "conv-1", "turn": 3, "exclude": True, "reason": "x"}])
    fresh = tmp_path / "fresh.duckdb"
    result = invoke("run-suite", "--suite", suite, "--store", fresh)
    assert result.exit_code == 1 and f"{tmp_path / 'errata.json'}: errata[0].turn: " in result.output
    assert not fresh.exists()
    suite.write_text('[[matrix]]\ncorpora = ["planted"]\n\n[errata]\nlocomo = "errata.json"\n')
    result = invoke("run-suite", "--suite", suite, "--store", fresh)
    assert result.exit_code == 1 and "errata.locomo: names no benchmark or corpus folder" in result.output


# -- a published audit: dial481/locomo-audit's format, written here for the planted fixture ---------------


@pytest.fixture
def audit_copy(tmp_path) -> Path:
    """A copy of the audit's layout, its corrections of the planted fixture in two conversations' files."""
    conv0 = [
        # The right answer, wrong evidence: evidence corrected, the answer's remark not taken.
        audit_entry(
            "locomo_0_qa1",
            "Which composer does Bob play?",
            "Vivaldi",
            ["D1:3"],
            ["D1:4"],
            "Vivaldi (answer is correct)",
            "WRONG_CITATION",
        ),
        # A wrong answer: corrected, its keywords made from the evidence as the importer makes them.
        audit_entry(
            "locomo_0_qa3",
            "When did Ann adopt her cat?",
            "7 May 2023",
            ["D1:1"],
            ["D1:1"],
            "The day before 8 May 2023",
            "TEMPORAL_ERROR",
            2,
        ),
        # No turn answers it as asked: left out.
        audit_entry("locomo_0_qa4", "What does Bob say he will not do?", "give up", ["D2:3"], [], "Nothing said", "AMBIGUOUS"),
        # One id string split in two: the same turns, so nothing changes.
        audit_entry("locomo_0_qa0", "What is Ann's cat called?", "Pixel", ["D1:1"], ["D1:1"], "Pixel", "WRONG_CITATION"),
    ]
    conv1 = [
        audit_entry(
            "locomo_1_qa2",
            "What does Di do on weekends?",
            "runs marathons",
            ["D:1:4"],
            ["D1:4"],
            "runs marathons",
            "WRONG_CITATION",
        )
    ]
    license_text = "Attribution-NonCommercial 4.0 International\n\nstand-in\n"
    return write_audit(tmp_path / "locomo-audit", {0: conv0, 1: conv1}, license_text)


def test_an_audit_in_locomo_audit_s_format_converts_and_loads(audit_copy, planted, tmp_path):
    corpus, store, recency, _ = planted
    subprocess.run(["git", "init", "-q", str(audit_copy)], check=True)
    git = ["git", "-C", str(audit_copy), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "stand-in"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    out = tmp_path / "errata.json"
    result = invoke("import-errata", "locomo-audit", audit_copy, "--out", out)
    assert result.exit_code == 0, result.output
    assert (
        "5 entries in 2 audit files -> 4 errata (2 correct evidence, 1 correct the answer, 1 exclude the question); 1 change"
        in result.output
    )
    document = json.loads(out.read_text())
    assert document["benchmark"] == "locomo" and document["origin"]["commit"] == commit
    assert document["origin"]["license"] == "Attribution-NonCommercial 4.0 International"
    assert document["origin"]["files"]["audit/errors_conv_0.json"] == digest(audit_copy / "audit" / "errors_conv_0.json")
    assert document["origin"]["locomo"]["sha256"] == digest(PLANTED) and document["origin"]["unchanged"] == ["locomo_0_qa0"]
    entries = {e["id"]: e for e in document["errata"]}
    assert entries["locomo_0_qa1"] | {"source": ""} == {
        "id": "locomo_0_qa1", "kind": "WRONG_CITATION", "conversation": "conv-1", "turn": 9,
        "question": "Which composer does Bob play?",
        "evidence_turns": [3], "reason": "dial481/locomo-audit WRONG_CITATION: evidence D1:3 -> D1:4", "source": "",
    }  # fmt: skip
    assert entries["locomo_0_qa1"]["source"] == f"dial481/locomo-audit@{commit[:12]} audit/errors_conv_0.json locomo_0_qa1"
    assert (
        entries["locomo_0_qa3"]["expected_fact"] == "The day before 8 May 2023"
        and "evidence_turns" not in entries["locomo_0_qa3"]
    )
    assert entries["locomo_0_qa4"]["exclude"] is True and "expected_fact" not in entries["locomo_0_qa4"]
    assert entries["locomo_1_qa2"]["evidence_turns"] == [3] and entries["locomo_1_qa2"]["conversation"] == "conv-2"
    assert "stand-in" not in out.read_text().replace("Attribution-NonCommercial", "")  # the audit's prose is not carried
    # It loads as any errata file: in the audit, and beside the published figure.
    audited = invoke("audit-labels", corpus, "--errata", out)
    assert audited.exit_code == 0 and "4 corrections, 1 excluded from dial481/locomo-audit@" in audited.output
    rows = json.loads(invoke("leaderboard", "--store", store, "--errata", out, "--format", "json").output)
    shown = next(r for r in rows if r["run_id"] == recency)["headline_with_errata"]
    assert shown["errata"]["origin"]["repository"] == "dial481/locomo-audit" and shown["errata"]["sha256"] == digest(out)
    assert {(v["conversation"], v["turn"]) for v in shown["verdicts_changed"]} == {("000_conv-1", 12), ("001_conv-2", 6)}
    assert (shown["hits"], shown["total"]) == (1, 9)  # the excluded hit out, the newly labelled one in


def test_an_audit_of_another_version_of_locomo_is_refused(audit_copy, tmp_path):
    entries = json.loads((audit_copy / "audit" / "errors_conv_0.json").read_text())
    entries[1]["question"] = "When did Ann adopt her dog?"
    (audit_copy / "audit" / "errors_conv_0.json").write_text(json.dumps(entries))
    result = invoke("import-errata", "locomo-audit", audit_copy, "--out", tmp_path / "e.json", "--commit", "abc")
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert f"{audit_copy / 'audit' / 'errors_conv_0.json'}: [1].question: is not question 3 of conv-1" in result.output
    entries[1] |= {"question": "When did Ann adopt her cat?", "question_id": "locomo_1_qa3"}
    (audit_copy / "audit" / "errors_conv_0.json").write_text(json.dumps(entries))
    result = invoke("import-errata", "locomo-audit", audit_copy, "--out", tmp_path / "e.json")
    assert result.exit_code == 1 and "[1].question_id: 'locomo_1_qa3' is not locomo_0_qaM" in result.output
    assert not (tmp_path / "e.json").exists()


def test_exclude_leaves_a_type_out(audit_copy, tmp_path):
    out = tmp_path / "errata.json"
    result = invoke(
        "import-errata", "locomo-audit", audit_copy / "audit", "--locomo", PLANTED, "--out", out, "--exclude", "TEMPORAL_ERROR"
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    assert document["origin"]["commit"] is None and document["origin"]["excluded_kinds"] == ["TEMPORAL_ERROR"]
    assert next(e for e in document["errata"] if e["id"] == "locomo_0_qa3")["exclude"] is True


# -- the site ------------------------------------------------------------------------------------------------


@pytest.mark.browser
def test_the_site_shows_the_figure_with_errata_beside_the_published_one(planted, tmp_path):
    """Built first without errata, then with them over it (the run pages are rendered again, not reused):
    the leaderboard gets a labelled column and a note naming the source and digest, the run page a line
    under its figures; in Chromium at 1280 px the column is on screen and not clipped."""
    from helpers.browser import chromium

    _, store, recency, _ = planted
    errata = write(tmp_path / "errata.json", ERRATA)
    site = tmp_path / "site"
    assert invoke("build-site", "--store", store, "--out", site).exit_code == 0
    plain = {p.relative_to(site): p.read_bytes() for p in site.rglob("*.html")}
    assert not any(b"with errata" in page for page in plain.values())
    result = invoke("build-site", "--store", store, "--out", site, "--errata", errata)
    assert result.exit_code == 0, result.output
    records = json.loads((site / "leaderboard.json").read_text())
    row = next(r for r in records if r["run_id"] == recency)
    assert (row["hits"], row["total"], row["headline_with_errata_hits"], row["headline_with_errata_total"]) == (1, 9, 2, 9)
    assert digest(errata) in row["errata"] and "errata.json" in row["errata"] and str(tmp_path) not in row["errata"]
    run_page = next(p for p in site.rglob("*.html") if f"run <code>{recency}</code>" in p.read_text(encoding="utf-8"))
    text = " ".join(run_page.read_text(encoding="utf-8").split())
    assert "recall_any@1 with errata: <strong>22.2%</strong>" in text and "2 / 9" in text
    assert "4 test points corrected" not in text and "5 test points corrected (1 left out as invalid), 4 verdicts changed" in text
    assert "The published figure above is unchanged" in text
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        (board,) = site.glob("leaderboard-*.html")  # the corpus's benchmark's leaderboard (index.html lists them)
        page.goto(board.as_uri())
        found = page.evaluate(
            """() => {
            const table = document.querySelector('table.leaderboard');
            const heads = [...table.tHead.rows[0].cells].map(th => th.textContent.trim());
            const column = heads.findIndex(h => h.startsWith('recall_any@k with errata'));
            const row = [...table.querySelectorAll('tbody tr')].find(tr => tr.textContent.includes('recency'));
            const cell = row.cells[column];
            const box = cell.getBoundingClientRect();
            return {column, cell: cell.innerText, published: row.cells[column - 1].innerText,
                    right: box.right, clipped: cell.scrollWidth > cell.clientWidth,
                    note: document.querySelector('.errata-note').innerText};
        }"""
        )
    assert found["column"] > 0 and "2 / 9" in found["cell"] and "1 / 9" in found["published"]
    assert found["right"] <= 1280 and not found["clipped"]
    assert f"sha256 {digest(errata)}" in found["note"] and "unchanged" in found["note"]


def test_the_pages_workflow_builds_with_the_suite_s_errata_and_a_suite_without_them_gives_none(planted, tmp_path):
    workflow = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    assert 'evals build-site --from board --out site --store-copy always --errata "$SUITE"' in workflow
    _, store, _, _ = planted
    suite = tmp_path / "evals.toml"
    suite.write_text('[[matrix]]\ncorpora = ["corpus"]\n')
    plain = invoke("leaderboard", "--store", store)
    result = invoke("leaderboard", "--store", store, "--errata", suite)
    assert result.exit_code == 0 and result.output == plain.output


def test_a_run_whose_rankings_the_store_does_not_keep_gets_no_figure_with_errata(planted, tmp_path, monkeypatch):
    """A strategy that is not prefix-stable is asked once per cutoff, and the store keeps no ranking per cutoff:
    its published figure cannot be recomputed from the store, so it gets "—" and the reason, never a mixed figure."""
    import sys

    corpus, _, _, _ = planted
    (tmp_path / "per_cutoff_recency.py").write_text(
        "from evals.strategies import Recency, StrategySpec\n"
        "SPEC = StrategySpec(name='per_cutoff_recency', build=lambda o, c: Recency(), prefix_stable=False)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    store = tmp_path / "results.duckdb"
    run_id = run(corpus, store, "per_cutoff_recency:SPEC")
    errata = write(tmp_path / "errata.json", ERRATA)
    with Store.open(store, read_only=True) as opened:
        figure = errata_figures(opened, [errata], opened.runs()).of(run_id)
    assert figure.value is None and "do not give its published figure again" in figure.problem
    table = invoke("leaderboard", "--store", store, "--errata", errata)
    assert table.exit_code == 0, table.output
    text = " ".join(table.output.split())
    assert f"no figure with errata for run {run_id}: the store's rankings" in text
    line = next(line for line in table.output.splitlines() if line.startswith("per_cutoff_recency"))
    cells = line.split()
    assert cells[cells.index("1/9") + 1 : cells.index("1/9") + 3] == ["—", "—"]  # published, then no figure with errata
