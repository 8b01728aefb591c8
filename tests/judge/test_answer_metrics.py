"""The answers' figures as each protocol counts them: per category with Wilson intervals and n, the
task-averaged score with its bootstrap interval, abstention, unparsed verdicts, the failure decomposition;
and where they show: the result JSON, the store, `evals leaderboard --by-category`, the gate and the run page.

The unit tests build PointAnswers with the protocol fields by hand; the end-to-end tests play a corpus
with categories through `evals run --with-answers --judge` against the local chat server (real HTTP),
into a real store, and read what the commands and the site make of it.
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers.llm_server import LLMServer
from helpers.runs import evals_run, last_run

from evals.analysis.gate import NO_CHANGE, NOISE, REGRESSION, gate
from evals.benchmarks import category_names, protocol_lexical
from evals.benchmarks.locomo import CATEGORY_NOTE as LOCOMO_CATEGORY_NOTE
from evals.benchmarks.locomo.scores import locomo_score, mem0_f1
from evals.cli import cli
from evals.judge import answer_metrics as qa
from evals.judge.metrics import ALL, METRICS, ScoredRun, compute_metrics, grouped, point_values
from evals.judge.scoring import score_run
from evals.judge.stats import bootstrap_mean_of_means_interval, holm, mcnemar_exact, wilson_interval
from evals.model.results import AnswerRun, ConversationResult, PointAnswer, RunResult, TestPointResult
from evals.store import Store
from evals.views.breakdown import answer_category_rows, answer_figures
from evals.views.report import legacy_json

# -- runs made by hand -------------------------------------------------------------------------------


def answer(verdict: str | None = None, *, score: float | None = None, text: str = "an answer", answerable: bool = True,
           counted: bool | None = True, category: str | None = None, correct: bool | None = None) -> PointAnswer:  # fmt: skip
    if correct is None and verdict in (qa.CORRECT, qa.WRONG):
        correct = verdict == qa.CORRECT
    return PointAnswer(text, 10, 2, 0.1, False, correct, None, 5 if verdict else None, 1 if verdict else None, answerable,
                       category=category, counted=counted, verdict=verdict, score=score)  # fmt: skip


def scored(
    points: list[tuple[str | None, PointAnswer, bool | None]], protocol: str = "longmemeval", benchmark: str | None = None
) -> ScoredRun:
    """A one-conversation run: per test point its category, its answer and whether its evidence was retrieved
    (None: the point lists no evidence)."""
    tests = []
    for i, (category, given, found) in enumerate(points):
        evidence = [] if found is None else [0]
        tests.append(
            TestPointResult(
                turn_index=i + 1,
                question=f"question {i}?",
                expected_fact="the fact",
                expected_keywords=["fact"],
                retrieved_records=["the fact"] if found else ["other"],
                evidence_turns=evidence,
                retrieved_turns=None if found is None else ([0] if found else [1]),
                category=category,
                answerable=given.answerable,
            )
        )
    conversation = ConversationResult(conversation_id="c", description="", turn_count=len(points) + 1, test_points=tests)
    run = RunResult(
        strategy={"name": "s"}, model="m", k=5, seed=0, corpus_dir="x", corpus_digest="d" * 64,
        started_at=datetime(2025, 1, 1, tzinfo=timezone.utc), duration_s=0.0, conversations=[conversation], benchmark=benchmark,
    )  # fmt: skip
    answers = AnswerRun("m", "j", "u", [[given for _, given, _ in points]], protocol=protocol)
    return ScoredRun(run, score_run(run), answers, protocol_lexical(answers and answers.protocol))


def whole(run: ScoredRun) -> dict:
    return grouped(point_values(run))[ALL]


# -- per category, overall, task-averaged ------------------------------------------------------------


def longmemeval_like() -> ScoredRun:
    """Type A: 3 of 4 correct, an _abs question among them judged correct (it stays in its type); type B:
    1 correct, 1 wrong, 1 unparsed (counted, as not correct); one point the protocol leaves out."""
    return scored(
        [
            ("A", answer("correct"), True),
            ("A", answer("correct"), True),
            ("A", answer("wrong"), False),
            ("A", answer("correct", answerable=False, text="I cannot tell: it was never said"), None),
            ("B", answer("correct"), False),
            ("B", answer("wrong"), True),
            ("B", answer("unparsed"), True),
            ("B", answer("correct", counted=False), True),
        ]
    )


def test_per_category_accuracy_with_wilson_interval_and_n():
    """Accuracy per category over the counted points, an unparsed verdict in the denominator; Wilson intervals."""
    values = point_values(longmemeval_like())
    groups = grouped(values, "category", ["answer_accuracy"])
    assert (groups["A"]["answer_accuracy"].value, groups["A"]["answer_accuracy"].n) == (0.75, 4)
    assert (groups["B"]["answer_accuracy"].value, groups["B"]["answer_accuracy"].n) == (pytest.approx(1 / 3), 3)
    assert (groups["B"]["answer_accuracy"].low, groups["B"]["answer_accuracy"].high) == pytest.approx(wilson_interval(1, 3))
    overall = whole(longmemeval_like())["answer_accuracy"]
    assert (overall.value, overall.n) == (pytest.approx(4 / 7), 7)
    assert (overall.low, overall.high) == pytest.approx(wilson_interval(4, 7))
    rows = answer_category_rows(values)
    assert [(r["category"], r["n"], r["interval"]) for r in rows] == [("A", 4, "wilson"), ("B", 3, "wilson")]


def test_task_averaged_is_the_mean_of_category_accuracies_with_a_seeded_bootstrap():
    """Each type weighs the same (0.75 and 1/3 -> 0.5417, not the pooled 4/7); the interval is the stratified
    bootstrap of evals.judge.stats, the same on every computation."""
    run = longmemeval_like()
    found = compute_metrics(run)["answer_task_averaged"]
    assert found.value == pytest.approx((0.75 + 1 / 3) / 2) and found.n == 7
    expected = bootstrap_mean_of_means_interval([[1, 1, 0, 1], [1, 0, 0]], seed=0)
    assert (found.low, found.high) == pytest.approx(expected)
    assert compute_metrics(longmemeval_like())["answer_task_averaged"] == found
    varied = [[0.1, 0.5, 0.9, 0.3, 0.7, 0.05], [0.2, 0.4, 0.33]]
    assert bootstrap_mean_of_means_interval(varied, seed=0) == bootstrap_mean_of_means_interval(varied, seed=0)
    assert bootstrap_mean_of_means_interval(varied, seed=0) != bootstrap_mean_of_means_interval(varied, seed=1)
    assert found.low <= found.value <= found.high


def test_unparsed_verdicts_are_counted_and_flagged_past_one_percent():
    """One unparsed verdict in 3 counted points of type B (7 in all): share 1/7, flagged; 1 in 200: not flagged."""
    figures = answer_figures(point_values(longmemeval_like()), longmemeval_like().answers)
    assert figures["unparsed"] == {"count": 1, "of": 7, "share": pytest.approx(1 / 7), "flagged": True}
    many = scored([("A", answer("unparsed"), None)] + [("A", answer("correct"), None)] * 199)
    figures = answer_figures(point_values(many), many.answers)
    assert figures["unparsed"] == {"count": 1, "of": 200, "share": 0.005, "flagged": False}
    assert figures["overall"]["value"] == pytest.approx(199 / 200)


def test_failure_decomposition_by_evidence_retrieved():
    """Accuracy where an evidence turn was retrieved (3 points: 2 correct, 1 wrong... of those counted) and where
    none was; points without evidence count in neither."""
    found = whole(longmemeval_like())
    retrieved, missed = found["answer_accuracy_evidence_found"], found["answer_accuracy_evidence_missed"]
    # Retrieved: A correct, A correct, B wrong, B unparsed (B's uncounted point is out): 2 of 4.
    assert (retrieved.value, retrieved.n) == (0.5, 4)
    # Missed: A wrong, B correct: 1 of 2.
    assert (missed.value, missed.n) == (0.5, 2)
    assert retrieved.low is not None and retrieved.low <= 0.5 <= retrieved.high


def test_abstention_figures():
    """Abstention accuracy is over the counted unanswerable points (the protocol's verdict); false abstention reads
    the lexical rule on answerable points; correct abstention the protocol's verdict on unanswerable ones."""
    run = scored(
        [
            ("A", answer("correct", answerable=False, text="It was never said."), None),  # the judge says it abstained
            ("A", answer("wrong", answerable=False, text="Paris"), None),
            ("A", answer("wrong", text="I don't know."), None),
            ("A", answer("correct", text="Paris"), None),
            ("A", answer("correct", text="It\u2019s not mentioned, but probably Paris"), None),
        ]
    )
    found = whole(run)
    assert (found["answer_abstention_accuracy"].value, found["answer_abstention_accuracy"].n) == (0.5, 2)
    assert (found["answer_correct_abstention"].value, found["answer_correct_abstention"].n) == (0.5, 2)
    assert (found["answer_false_abstention"].value, found["answer_false_abstention"].n) == (pytest.approx(2 / 3), 3)
    # LoCoMo's category 5 decides by its own rule (its score); mem0 leaves category 5 out: the lexical rule decides.
    assert qa.abstains(answer(score=1.0, answerable=False, text="whatever")) is True
    assert qa.abstains(answer(None, answerable=False, counted=False, text="Not mentioned in the conversation")) is True
    assert qa.abstains(answer("unparsed", answerable=False)) is None


def test_a_run_before_protocols_counts_answerable_judged_points():
    """Without the protocol fields: answerable points with a verdict, valued by `correct` (the old accuracy)."""
    legacy = [
        PointAnswer("a", 1, 1, 0.1, True, c, "r", 1, 1, a) for c, a in ((True, True), (False, True), (None, True), (True, False))
    ]
    run = scored([(None, p, None) for p in legacy], protocol="harness")
    accuracy = compute_metrics(run)["answer_accuracy"]
    assert (accuracy.value, accuracy.n) == (0.5, 2)
    assert "answer_task_averaged" not in compute_metrics(run)  # no categories: no task average


def test_locomo_scores_without_a_judge_by_category_number():
    """LoCoMo's protocol scores each point (its F1 rules, category 5 by its phrase rule): the mean score with a
    bootstrap interval, no judged accuracy; categories shown by number with the name in brackets."""
    pairs = [("4 single-hop", "Paris, France", "Paris"), ("4 single-hop", "London", "Paris"),
             ("1 multi-hop", "a cat, a dog", "dog, cat, bird"),
             ("5 adversarial", "Not mentioned in the conversation", "no answer")]  # fmt: skip
    points = [(c, answer(None, score=locomo_score(a, g, c), answerable=not c.startswith("5")), None) for c, a, g in pairs]
    run = scored(points, protocol="locomo", benchmark="locomo")
    found = compute_metrics(run)
    assert "answer_accuracy" not in found
    assert found["answer_score"].value == pytest.approx((2 / 3 + 0 + 2 / 3 + 1) / 4)
    figures = answer_figures(point_values(run), run.answers, "locomo")
    assert [(r["label"], r["n"], r["interval"]) for r in figures["by_category"]] == [
        ("1 (multi-hop)", 1, "bootstrap"),
        ("4 (single-hop)", 2, "bootstrap"),
        ("5 (adversarial)", 1, "bootstrap"),
    ]
    assert figures["category_note"] == LOCOMO_CATEGORY_NOTE
    assert figures["lexical"] == {"f1": "locomo", "bleu1": "harness"}
    assert figures["abstention"]["accuracy"]["value"] == 1.0
    locomo = category_names("locomo")
    assert qa.category_label("4", locomo) == "4 (single-hop)" and qa.category_label("multi-session") == "multi-session"


def test_answer_f1_is_the_protocols_own():
    """A mem0-protocol run's answer F1 is mem0's set F1; the same answers under the harness give its multiset F1."""
    points = [(None, answer("correct", text="Paris paris PARIS"), None)]
    assert compute_metrics(scored(points, protocol="mem0"))["answer_f1"].value == mem0_f1("Paris paris PARIS", "the fact") == 0.0
    points = [(None, answer("correct", text="paris fact fact"), None)]
    assert compute_metrics(scored(points, protocol="mem0"))["answer_f1"].value == pytest.approx(
        mem0_f1("paris fact fact", "the fact")
    )
    assert compute_metrics(scored(points, protocol="harness"))["answer_f1"].value == pytest.approx(0.5)


def test_result_json_carries_the_figures():
    """metrics.answers.figures in the result JSON: overall, per category, task-averaged, abstention, unparsed,
    by evidence, and which protocol's lexical scores the document's F1 and BLEU-1 are."""
    run = longmemeval_like()
    document = legacy_json(run.run, run.scores, run.answers)
    figures = document["metrics"]["answers"]["figures"]
    assert figures["protocol"] == "longmemeval"
    assert figures["overall"]["n"] == 7 and figures["overall"]["interval"] == "wilson"
    assert [r["category"] for r in figures["by_category"]] == ["A", "B"]
    assert figures["task_averaged"]["categories"] == 2 and figures["task_averaged"]["interval"] == "bootstrap"
    assert figures["by_evidence"]["retrieved"]["n"] == 4
    assert figures["lexical"] == {"f1": "harness", "bleu1": "harness"}
    json.dumps(document)  # plain JSON


def test_the_new_metrics_are_declared_once_with_descriptions():
    for name in ("answer_accuracy", "answer_score", "answer_task_averaged", "answer_abstention_accuracy",
                 "answer_false_abstention", "answer_correct_abstention", "answer_unparsed",
                 "answer_accuracy_evidence_found", "answer_accuracy_evidence_missed"):  # fmt: skip
        assert METRICS[name].answers and METRICS[name].description


# -- end to end: a corpus with categories, the local chat server, a real store ---------------------


def _corpus(folder: Path) -> Path:
    """Twelve conversations, each a locker code at turn 0 and its question after small talk: four of category
    "alpha", eight of "beta", the question's evidence turn 0."""
    folder.mkdir()
    for i in range(12):
        category = "alpha" if i < 4 else "beta"
        code = f"{category[:2]}{i:02d}qx"
        turns = [{"role": "user", "content": f"Member {i} has locker code {code}."}]
        turns += [
            {"role": "assistant" if j % 2 else "user", "content": f"Small talk number {j} about the weather."}
            for j in range(1, 6)
        ]
        question = f"what is the locker code of member {i}?"
        test_at = {"question": question, "expected_fact": f"member {i} has locker code {code}", "expected_keywords": [code],
                   "evidence_turns": [0], "category": category}  # fmt: skip
        turns.append({"role": "user", "content": question, "test_at": test_at})
        document = {"schema_version": "1", "id": f"locker_{i:02d}", "description": f"Locker {i}.", "turns": turns}
        (folder / f"locker_{i:02d}.json").write_text(json.dumps(document))
    return folder


def _wrong_for(codes: set[str]):
    """A server rewrite that makes the answers holding one of ``codes`` say "I don't know." instead."""

    def rewrite(kind: str, text: str, key: str) -> str:
        if kind != "answer" or not any(code in text for code in codes):
            return text
        body = json.loads(text)
        body["choices"][0]["message"]["content"] = "I don't know."
        return json.dumps(body)

    return rewrite


def _run(server: LLMServer, corpus: Path, store: Path) -> str:
    args = ["run", "--runner", "full_history", "--corpus", str(corpus), "--store", str(store), "--repo", str(store.parent),
            "--base-url", server.base_url, "--with-answers", "--judge", "--no-cache"]  # fmt: skip
    result = CliRunner().invoke(
        cli, args, env={"EVALS_LLM_BACKOFF": "0.01", "OPENAI_API_KEY": "sk-unused", "OPENAI_BASE_URL": None}
    )
    assert result.exit_code == 0, result.output
    with Store.open(store, read_only=True) as opened:
        return opened.runs()[0].run_id


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> dict[str, Any]:
    """A base run whose answers are all correct; a head run losing 6 "beta" answers (raw p 0.031, Holm 0.063: noise);
    one losing all 8 (raw p 0.0078, Holm 0.016: a regression)."""
    root = tmp_path_factory.mktemp("answer_metrics")
    corpus = _corpus(root / "corpus")
    store = root / "results.duckdb"
    runs = {}
    with LLMServer() as server:
        runs["base"] = _run(server, corpus, store)
        server.rewrite = _wrong_for({f"be{i:02d}qx" for i in range(4, 10)})
        runs["six"] = _run(server, corpus, store)
        server.rewrite = _wrong_for({f"be{i:02d}qx" for i in range(4, 12)})
        runs["eight"] = _run(server, corpus, store)
    return {"store": store, "runs": runs, "root": root}


def test_the_store_keeps_the_figures_as_metrics(played):
    """Each figure is a row of the run's metrics: `evals runs --format json` shows it."""
    result = CliRunner().invoke(cli, ["runs", "--store", str(played["store"]), "--format", "json"])
    assert result.exit_code == 0, result.output
    by_id = {r["run_id"]: r for r in json.loads(result.output)}
    base, eight = by_id[played["runs"]["base"]]["metrics"], by_id[played["runs"]["eight"]]["metrics"]
    assert base["answer_accuracy"]["value"] == 1.0 and base["answer_accuracy"]["n"] == 12
    assert base["answer_task_averaged"]["value"] == 1.0
    assert eight["answer_task_averaged"]["value"] == pytest.approx(0.5)  # alpha 4/4, beta 0/8
    assert eight["answer_false_abstention"]["value"] == pytest.approx(8 / 12)  # "I don't know." declines
    assert eight["answer_accuracy_evidence_found"]["n"] == 12


def test_leaderboard_by_category_shows_answer_accuracy_with_n(played):
    """--by-category: per category, the answers' accuracy, its Wilson interval and n (text and JSON)."""
    store = str(played["store"])
    records = json.loads(CliRunner().invoke(cli, ["leaderboard", "--store", store, "--by-category", "--format", "json"]).output)
    beta = next(r for r in records if r["category"] == "beta")
    assert beta["answer_n"] == 8 and beta["answer_interval"] == "wilson"
    assert (beta["answer_low"], beta["answer_high"]) == pytest.approx(wilson_interval(round(beta["answer_accuracy"] * 8), 8))
    text = CliRunner().invoke(cli, ["leaderboard", "--store", store, "--by-category"]).output
    header = text.splitlines()[0]
    assert "answer acc" in header and header.rstrip().endswith("n")
    assert re.search(r"beta .* 8\s*$", text, re.MULTILINE)


def test_gate_tests_each_question_type_with_holm(played):
    """Retrieval is the same (no change in the headline); per type, McNemar on the verdicts, Holm across the types:
    6 lost of 8 is p = 0.031 alone but 0.063 adjusted (noise, the gate passes); 8 lost is 0.016 adjusted (fails)."""
    runs = played["runs"]
    with Store.open(played["store"], read_only=True) as opened:
        six = gate(opened, runs["base"], runs["six"])
        eight = gate(opened, runs["base"], runs["eight"])
    (row,) = six.rows
    assert row.paired == NO_CHANGE
    types = {t.category: t for t in row.types}
    assert (types["beta"].lost, types["beta"].gained, types["beta"].shared) == (6, 0, 8)
    assert types["beta"].p == mcnemar_exact(6, 0) < 0.05
    assert [t.p_holm for t in row.types] == holm([t.p for t in row.types])
    assert types["beta"].paired == NOISE and types["alpha"].paired == NO_CHANGE and not six.failed
    (row,) = eight.rows
    assert {t.category: t.paired for t in row.types} == {"alpha": NO_CHANGE, "beta": REGRESSION}
    assert eight.failed and eight.exit_code == 1
    report = CliRunner().invoke(cli, ["gate", "--base", runs["base"], "--head", runs["eight"], "--store", str(played["store"])])
    assert report.exit_code == 1
    assert "Answer accuracy per question type" in report.output and "answers regressed on beta" in report.output
    assert json.dumps(eight.as_dict())  # the JSON carries every type test
    assert eight.as_dict()["rows"][0]["answer_types"][1]["category"] == "beta"


def test_run_page_shows_the_answer_figures(played, tmp_path):
    """The run page: the protocol's block (accuracy, task-averaged, abstention, decomposition) and a per-category table."""
    out = tmp_path / "site"
    result = CliRunner().invoke(cli, ["build-site", "--store", str(played["store"]), "--out", str(out), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    pages = [p.read_text() for p in (out / "runs").glob("*.html")]
    page = next(p for p in pages if played["runs"]["eight"] in p)
    assert 'id="answer-figures"' in page and "task-averaged" in page
    table = page[page.index('id="answer-categories"') :]
    table = table[: table.index("</table>")]
    assert re.search(r"<td>alpha</td><td class=\"num\"[^>]*>4</td><td[^>]*>100", table)
    assert re.search(r"<td>beta</td><td class=\"num\"[^>]*>8</td><td[^>]*>0", table)
    assert "accuracy where no evidence turn was retrieved" in page


# -- end to end under the published protocols (h25core's stand-in sources and corpora) ---------------


@pytest.fixture
def protocol_server():
    with LLMServer() as started:
        yield started


def _figures(stored) -> dict[str, Any]:
    values = point_values(ScoredRun(stored.run, stored.scores, stored.answers, protocol_lexical(stored.answers.protocol)))
    return answer_figures(values, stored.answers, stored.summary.benchmark)


def test_longmemeval_protocol_figures_from_the_stored_run(protocol_server, sources, lme_corpus, store_path):
    """--protocol longmemeval: every question type a category, the _abs question in its type and in abstention
    accuracy (by the abstention template's verdict), the task average over the six types; stored as metrics."""
    result = evals_run(protocol_server, store_path, lme_corpus, "--k", "2", "--protocol", "longmemeval", "--judge")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    figures = _figures(stored)
    assert figures["protocol"] == "longmemeval"
    counts = {r["category"]: r["n"] for r in figures["by_category"]}
    assert len(counts) == 6 and counts["temporal-reasoning"] == 2 and sum(counts.values()) == 7
    assert figures["abstention"]["accuracy"]["n"] == 1 and figures["abstention"]["correct_abstention"]["n"] == 1
    assert figures["task_averaged"]["categories"] == 6
    metrics = stored.summary.metrics
    assert metrics["answer_task_averaged"].value == pytest.approx(figures["task_averaged"]["value"])
    assert metrics["answer_accuracy"].n == 7


def test_locomo_protocol_figures_from_the_stored_run(protocol_server, sources, locomo_corpus, store_path):
    """--protocol locomo: no judge, so the QA score (LoCoMo's stemmed F1 rules) with bootstrap intervals, categories
    by number; the result JSON and --by-category say so."""
    result = evals_run(protocol_server, store_path, locomo_corpus, "--k", "2", "--protocol", "locomo")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    assert "answer_accuracy" not in stored.summary.metrics and "answer_score" in stored.summary.metrics
    figures = _figures(stored)
    assert figures["overall"]["interval"] == "bootstrap" and figures["lexical"]["f1"] == "locomo"
    assert all(re.fullmatch(r"\d \([a-z-]+\)", r["label"]) for r in figures["by_category"])
    records = json.loads(
        CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path), "--by-category", "--format", "json"]).output
    )
    assert {r["label"] for r in records} == {r["label"] for r in figures["by_category"]}
    assert all(r["answer_interval"] == "bootstrap" for r in records if r["answer_n"])


def test_compare_pairs_the_answers_the_gate_pairs(tmp_path):
    """evals compare's answer population is the gate's: a judged point the protocol leaves out (counted False)
    flips in neither, so compare's shared and lost verdicts are the sums of the gate's question types."""
    from dataclasses import replace

    from evals.analysis.compare import compare_runs
    from evals.model.provenance import Provenance
    from evals.run.evaluate import RunConfig, evaluate

    evaluation = evaluate(RunConfig(strategy="full_history", corpus=_corpus(tmp_path / "corpus"), k=5))
    categories = [c.test_points[0].category for c in evaluation.run.conversations]

    def with_answers(wrong: set[int]):
        points = [[answer(qa.WRONG if i in wrong else qa.CORRECT, counted=i != 0, category=c)] for i, c in enumerate(categories)]
        return replace(evaluation, answers=AnswerRun("m", "j", "u", points))

    made = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")
    with Store.open(tmp_path / "results.duckdb") as store:
        base, head = store.append(with_answers(set()), made), store.append(with_answers({0, 5, 6}), made)
        (row,) = gate(store, base, head).rows
        answers = compare_runs(store.get_run(base), store.get_run(head)).answers
    assert (answers.shared, answers.lost) == (sum(t.shared for t in row.types), sum(t.lost for t in row.types)) == (11, 2)
