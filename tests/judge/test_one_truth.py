"""One truth per run: on imported LoCoMo and LongMemEval corpora every surface judges a test point by
the same rule (evals.judge.headline), and reports the same figure and count.

The verdicts are worked out here from the stored retrievals alone (an evidence turn among the
records, over the population the benchmark's published code counts), not by the code under test;
then each surface is read the way a reviewer's script would: the drill-downs' ``data-verdict``
attributes, the leaderboard's and run page's figures, ``evals leaderboard`` / ``evals runs`` JSON,
``evals compare``'s line and ``evals gate``'s JSON.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.html import parse
from helpers.stores import provenance

from evals.benchmarks.locomo.importer import import_locomo
from evals.benchmarks.longmemeval.importer import import_longmemeval
from evals.cli import cli
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
BENCHMARKS = {
    "locomo": (import_locomo, FIXTURES / "locomo_small.json"),
    "longmemeval": (import_longmemeval, FIXTURES / "longmemeval_small.json"),
}


@pytest.fixture(scope="module", params=sorted(BENCHMARKS))
def built(request, tmp_path_factory):
    """An imported benchmark, bm25 and recency at k=2 (bm25 twice, at two commits, for the gate), and its site."""
    root = tmp_path_factory.mktemp(request.param)
    importer, source = BENCHMARKS[request.param]
    importer(source, root / "corpus")
    store_path = root / "results.duckdb"
    with Store.open(store_path) as store:
        runs = {
            "bm25": store.append(evaluate(RunConfig(strategy="bm25", corpus=root / "corpus", k=2)), provenance("a" * 40)),
            "recency": store.append(evaluate(RunConfig(strategy="recency", corpus=root / "corpus", k=2)), provenance("b" * 40)),
            "bm25-again": store.append(evaluate(RunConfig(strategy="bm25", corpus=root / "corpus", k=2)), provenance("c" * 40)),
        }
    build_site(store_path, root / "site")
    return request.param, store_path, root / "site", runs


def expected_verdicts(store_path: Path, run_id: str, benchmark: str) -> dict[tuple[str, int], str]:
    """Each test point's verdict by the rule's definition: an evidence turn among the first k records,
    over every point with evidence (LoCoMo) or the answerable ones with evidence (LongMemEval)."""
    with Store.open(store_path, read_only=True) as store:
        stored = store.get_run(run_id)
    out = {}
    for conversation in stored.run.conversations:
        for point in conversation.test_points:
            counted = bool(point.evidence_turns) and (point.answerable or benchmark == "locomo")
            if not counted:
                out[(conversation.conversation_id, point.turn_index)] = "unanswerable" if not point.answerable else "unscored"
                continue
            found = set(point.retrieved_turns or []) & set(point.evidence_turns)
            out[(conversation.conversation_id, point.turn_index)] = "hit" if found else "miss"
    return out


def drilldown_verdicts(site: Path, run_id: str) -> dict[tuple[str, int], str]:
    found = {}
    for page in sorted((site / "runs" / run_id).glob("*.html")):
        conversation = parse(page).find("h1").text().split()[0]
        for section in parse(page).iter():
            if section.tag == "section" and "data-verdict" in section.attrs:
                turn = int(section.attrs["id"].removeprefix("tp-"))
                found[(conversation, turn)] = section.attrs["data-verdict"]
    return found


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_every_drilldown_verdict_is_the_rules(built):
    """Each test point's data-verdict on its drill-down is the rule's verdict, for every run."""
    benchmark, store_path, site, runs = built
    for run_id in runs.values():
        expected = expected_verdicts(store_path, run_id, benchmark)
        assert drilldown_verdicts(site, run_id) == expected
        assert {"hit", "miss"} & set(expected.values())


def test_every_surface_reports_the_same_figure_and_count(built):
    """Leaderboard page, run page, evals leaderboard and runs JSON, compare and gate: one figure, one count."""
    benchmark, store_path, site, runs = built
    expected = {name: expected_verdicts(store_path, run_id, benchmark) for name, run_id in runs.items()}
    counts = {
        name: (sum(v == "hit" for v in e.values()), sum(v in ("hit", "miss") for v in e.values())) for name, e in expected.items()
    }

    board = json.loads(invoke("leaderboard", "--store", str(store_path), "--format", "json"))
    listed = json.loads(invoke("runs", "--store", str(store_path), "--format", "json"))
    for rows in (board, listed):
        for row in rows:
            name = next(n for n, r in runs.items() if r == row["run_id"])
            headline = row["headline"]
            assert (headline["hits"], headline["total"]) == counts[name]
            assert headline["value"] == pytest.approx(counts[name][0] / counts[name][1])
            assert headline["population"] and headline["metric"]

    cells = {}
    for board in sorted(site.glob("leaderboard-*.html")):  # each benchmark's leaderboard (index.html lists them)
        for row in parse(board).iter():
            if row.tag == "tr":
                link = next((a.attrs["href"] for a in row.iter() if a.tag == "a" and "runs/" in a.attrs.get("href", "")), None)
                text = [td.text().strip() for td in row.find_all("td")]
                if link and any(re.fullmatch(r"\d+ / \d+", cell) for cell in text):  # a leaderboard row, not a cutoff table's
                    cells[link.split("/")[-1].removesuffix(".html")] = text
    assert cells
    for name, run_id in runs.items():
        if run_id not in cells:  # only the latest run of a configuration is on the leaderboard
            continue
        hits, total = counts[name]
        assert f"{hits} / {total}" in cells[run_id]
        assert any(c.startswith(f"{100 * hits / total:.1f}%") for c in cells[run_id])
        run_page = parse(site / "runs" / f"{run_id}.html").text()
        assert re.search(rf"{hits} / {total}\s+test points hit", run_page)

    line = invoke("compare", runs["bm25"], runs["recency"], "--store", str(store_path)).splitlines()
    assert f"recall_any@k {counts['bm25'][0]}/{counts['bm25'][1]} =" in line[0]
    assert f"recall_any@k {counts['recency'][0]}/{counts['recency'][1]} =" in line[1]
    lost = sum(expected["bm25"][key] == "hit" and expected["recency"][key] == "miss" for key in expected["bm25"])
    assert f"hit by A only: {lost}" in line

    gate = json.loads(
        invoke("gate", "--base", runs["bm25"], "--head", runs["bm25-again"], "--store", str(store_path), "--format", "json")
    )
    (row,) = gate["rows"]
    assert row["base"]["value"] == pytest.approx(counts["bm25"][0] / counts["bm25"][1])
    assert row["base"]["n"] == counts["bm25"][1]


def test_cannot_be_answered_only_where_the_dataset_says_so(built):
    """No drill-down says a test point cannot be answered unless the dataset marks it unanswerable,
    and those carry the dataset's own words."""
    benchmark, _, site, runs = built
    words = {"locomo": "category 5", "longmemeval": "_abs"}[benchmark]
    for page in (site / "runs" / runs["bm25"]).glob("*.html"):
        tree = parse(page)
        for section in tree.iter():
            if section.tag != "section" or "data-verdict" not in section.attrs:
                continue
            text = section.text()
            assert "cannot be answered" not in text
            if section.attrs["data-verdict"] == "unanswerable" or "unanswerable" in text.split("·")[0]:
                assert words in text


def test_the_terminal_leaderboard_fits_100_columns_and_marks_what_it_must(built, tmp_path):
    """`evals leaderboard` fits 100 columns by default, states the corpus's rule, and marks a ceiling and
    the hash embedder; --wide shows every metric column."""
    benchmark, store_path, _, _ = built
    copy = tmp_path / "copy.duckdb"
    copy.write_bytes(store_path.read_bytes())
    with Store.open(copy) as store:
        corpus = Path(store.runs()[0].corpus_dir)  # the folder as given (no published table shows it)
        for strategy in ("full_history", "mneme"):
            store.append(evaluate(RunConfig(strategy=strategy, corpus=corpus, k=2)), provenance("d" * 40))
    lines = invoke("leaderboard", "--store", str(copy)).splitlines()
    assert max(len(line) for line in lines) <= 100
    assert "ranked by recall_any@k over" in lines[0]
    rows = {
        line.split()[0]: line
        for line in lines
        if line.split() and line.split()[0].rstrip("*!") in ("full_history", "mneme", "bm25")
    }
    assert set(rows) == {"full_history*", "mneme!", "bm25"}
    assert max(len(line) for line in invoke("leaderboard", "--store", str(copy), "--wide").splitlines()) > 100


@pytest.mark.parametrize(("benchmark", "counted"), [(None, 3), ("longmemeval", 3), ("locomo", 4)])
def test_the_population_is_the_benchmarks(tmp_path, benchmark, counted):
    """A question the dataset marks unanswerable but labels with evidence counts on LoCoMo (as its
    task_eval does) and not on LongMemEval or an undeclared corpus (as run_retrieval.py skips _abs);
    its drill-down verdict follows."""
    import shutil

    corpus = tmp_path / "corpus"
    shutil.copytree(ROOT / "tests" / "fixtures" / "evidence_corpus", corpus)
    family = json.loads((corpus / "01_family.json").read_text())
    family["turns"][8]["test_at"]["evidence_turns"] = [0]  # the unanswerable question, now labelled
    (corpus / "01_family.json").write_text(json.dumps(family))
    if benchmark is not None:
        (corpus / "benchmark.json").write_text(json.dumps({"name": benchmark}))
    with Store.open(tmp_path / "results.duckdb") as store:
        run_id = store.append(evaluate(RunConfig(strategy="full_history", corpus=corpus)), provenance("e" * 40))
        headline = store.get_run(run_id).summary.headline
    assert (headline.hits, headline.total) == (counted, counted)
    build_site(tmp_path / "results.duckdb", tmp_path / "site")
    verdicts = drilldown_verdicts(tmp_path / "site", run_id)
    assert verdicts[("01_family", 8)] == ("hit" if benchmark == "locomo" else "unanswerable")


def _summary(line: str) -> str:
    """A run's summary line without what only says where it went (``cached:``, `` -> destination``)."""
    return line.removeprefix("cached: ").split(" -> ")[0]


def test_every_summary_line_says_the_same_headline(clean_repo: Path, tmp_path: Path, monkeypatch):
    """`evals run` and `evals run-suite` print the same line for the same run on LongMemEval (whose unanswerable points
    are outside the headline's population), and its count is the one `evals runs` and `leaderboard` give."""
    items = json.loads((FIXTURES / "longmemeval_small.json").read_text())
    items[2]["haystack_sessions"][0][0]["has_answer"] = True  # an unanswerable point with evidence, as LongMemEval has
    items[2]["answer_session_ids"] = ["answer_abs"]
    (tmp_path / "lme.json").write_text(json.dumps(items))
    import_longmemeval(tmp_path / "lme.json", clean_repo / "corpus")
    (clean_repo / "suite.toml").write_text('[[matrix]]\ncorpora = ["corpus"]\nstrategies = ["bm25"]\n')
    for args in (["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "corpus"]):
        subprocess.run(["git", "-C", str(clean_repo), *args], check=True)
    monkeypatch.chdir(clean_repo)
    store = tmp_path / "results.duckdb"
    lines = [invoke("run", "--runner", "bm25", "--corpus", "corpus", "--store", str(store)).splitlines()[-1]]
    suite = invoke("run-suite", "--suite", "suite.toml", "--store", str(store))
    lines += [line for line in suite.splitlines() if line.startswith(("run ", "cached: run "))]
    assert len(lines) == 2 and _summary(lines[0]) == _summary(lines[1])
    (row,) = json.loads(invoke("runs", "--store", str(store), "--format", "json"))
    (board,) = json.loads(invoke("leaderboard", "--store", str(store), "--format", "json"))
    for headline in (row["headline"], board["headline"]):
        assert f"({headline['hits']}/{headline['total']})" in lines[0].split(" keyword hit")[0]
