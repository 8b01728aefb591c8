"""Metrics as data: a declared metric is computed, stored and shown with no other change."""

from __future__ import annotations

import csv
import io
import json
from contextlib import contextmanager

import duckdb
import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.benchmarks import protocol_lexical
from evals.cli import cli
from evals.judge import metrics
from evals.judge.metrics import METRICS, PROPORTION, MetricValue, ScoredRun, compute_metrics, proportion


def _hit_at_1(run: ScoredRun) -> MetricValue:
    points = run.scores.answerable()
    return proportion(sum(p.rank == 1 for p in points), len(points))


@contextmanager
def hit_at_1_declared():
    """hit@1, declared in test code as docs/layout.md's "Add a metric and show it on the site" declares it,
    inside metrics.declaring(): the registry is as it was once the block ends."""
    with metrics.declaring():

        @metrics.point_metric(
            "hit_at_1",
            label="hit@1",
            kind=PROPORTION,
            higher_is_better=True,
            description="Share of test points whose first retrieved record holds the answer.",
        )
        def hit_at_1(point: metrics.Point) -> float | None:
            return float(point.score.rank == 1) if point.score.answerable else None

        yield METRICS["hit_at_1"]


@pytest.fixture
def toy_metric():
    """hit@1 declared for one test (hit_at_1_declared)."""
    with hit_at_1_declared() as declared:
        yield declared


@pytest.fixture
def evals(store_path, corpus_small):
    def invoke(*args: str):
        result = CliRunner().invoke(cli, [*args, "--store", str(store_path)], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    invoke("run", "--runner", "full_history", "--corpus", str(corpus_small))
    return invoke


def test_every_declared_metric_has_a_label_kind_and_description():
    """Declarations are complete: the tables and pages need each of these."""
    for declared in METRICS.values():
        assert (
            declared.label
            and declared.description
            and declared.kind in ("proportion", "mean", "tokens", "seconds", "count", "usd")
        )


def test_declaring_a_metric_twice_is_refused():
    """A second declaration under a taken name is an error, not a silent replacement."""
    with pytest.raises(ValueError, match="declared twice"):
        metrics.metric("recall", label="x", kind=PROPORTION, higher_is_better=True, description="x")(_hit_at_1)


def test_a_declared_metric_is_stored_in_run_metrics(toy_metric, evals, store_path):
    """The new metric's value lands in run_metrics with its n and interval; no migration ran."""
    con = duckdb.connect(str(store_path), read_only=True)
    row = con.execute("SELECT value, n, low, high FROM run_metrics WHERE metric = 'hit_at_1'").fetchone()
    con.close()
    assert row[0] == 3 / 4 and row[1] == 4 and row[2] < 0.75 < row[3]


def test_a_declared_metric_is_a_leaderboard_column(toy_metric, evals):
    """The wide table, JSON and CSV of the leaderboard gain the metric from its declaration alone."""
    header, row = evals("leaderboard", "--wide").splitlines()[:2]
    assert "hit@1" in header and "0.750 [" in row
    assert json.loads(evals("leaderboard", "--format", "json"))[0]["metrics"]["hit_at_1"]["value"] == 0.75
    (parsed,) = csv.DictReader(io.StringIO(evals("leaderboard", "--format", "csv")))
    assert parsed["hit_at_1"] == "0.75" and parsed["hit_at_1_n"] == "4"


def test_a_metric_the_run_lacks_is_a_dash_not_zero(evals, toy_metric):
    """A run stored before the metric was declared shows "—" for it."""
    header, row = evals("leaderboard", "--wide").splitlines()[:2]
    assert "hit@1" in header and "—" in row.split()


def test_a_metric_that_does_not_apply_is_left_out():
    """A metric function returning None (no answers) gives the run no value for it."""

    from evals.run.evaluate import RunConfig, evaluate

    result = evaluate(RunConfig(strategy="recency", corpus=FIXTURES / "corpus_small"))
    values = compute_metrics(
        ScoredRun(result.run, result.scores, result.answers, protocol_lexical(result.answers and result.answers.protocol))
    )
    assert "answer_accuracy" not in values and values["recall"].n == 4


def test_latency_percentiles_are_nearest_rank():
    """p50/p95/p99 of the calls are times some call really took (nearest rank), in seconds."""
    from evals.model.results import CallTimings

    result = _evidence_run()

    def percentiles(retrieve_ns: list[int]) -> list[float | None]:
        run = result.run.model_copy(update={"timings": CallTimings(retrieve_ns=retrieve_ns)})
        values = compute_metrics(ScoredRun(run, result.scores))
        return [values[f"retrieve_latency_p{q}_s"].value for q in (50, 95, 99)]

    assert percentiles([i * 1_000_000 for i in range(1, 101)]) == [0.05, 0.095, 0.099]  # calls of 1..100 ms
    assert percentiles([7_000]) == [0.000007] * 3


def test_every_call_is_timed_and_stored(store_path, corpus_small):
    """A run stores retrieve and add latency with n = the calls made; the original JSON has no timing in it."""
    from evals.model.provenance import Provenance
    from evals.run.evaluate import RunConfig, evaluate
    from evals.store import Store
    from evals.views.report import legacy_json

    evaluation = evaluate(RunConfig(strategy="recency", corpus=corpus_small))
    turns = sum(c.turn_count for c in evaluation.run.conversations)
    with Store.open(store_path) as store:
        summary = store.get_summary(store.append(evaluation, Provenance("c" * 40, False, "0", None, "3.11")))
    assert summary.metric("retrieve_latency_p95_s").n == 4 and summary.metric("add_latency_p50_s").n == turns
    assert summary.metric("retrieve_latency_p95_s").value > 0
    assert "latency" not in json.dumps(legacy_json(evaluation.run, evaluation.scores))


def test_latency_travels_with_an_export(store_path, corpus_small, tmp_path):
    """An exported and imported run keeps its measured latency (it cannot be recomputed from the records)."""
    from evals.model.provenance import Provenance
    from evals.run.evaluate import RunConfig, evaluate
    from evals.store import Store
    from evals.views.exchange import export_document, read_export

    with Store.open(store_path) as store:
        run_id = store.append(
            evaluate(RunConfig(strategy="recency", corpus=corpus_small)), Provenance("c" * 40, False, "0", None, "3.11")
        )
        original = store.get_run(run_id)
        path = tmp_path / "run.json"
        path.write_text(json.dumps(export_document(original)))
    record = read_export(path)
    assert record.summary.metric("retrieve_latency_p95_s") == original.summary.metric("retrieve_latency_p95_s")


# -- each test point scored once, aggregated by grouped -------------------------------------------


def _evidence_run(strategy: str = "recency"):

    from evals.run.evaluate import RunConfig, evaluate

    return evaluate(RunConfig(strategy=strategy, corpus=FIXTURES / "evidence_corpus", cutoffs=(1, 3)))


def test_compute_metrics_scores_each_test_point_once(monkeypatch):
    """compute_metrics asks evals.judge.retrieval for a test point's values once, for every level, cutoff and metric together."""
    result = _evidence_run()
    calls: list[int] = []
    from evals.judge.metrics import _registry  # where point_values asks evals.judge.retrieval

    scored = _registry.retrieval_scores

    def counting(point, cutoffs, rule, levels):
        calls.append(point.turn_index)
        return scored(point, cutoffs, rule, levels)

    monkeypatch.setattr(_registry, "retrieval_scores", counting)
    values = compute_metrics(ScoredRun(result.run, result.scores))
    assert len(calls) == sum(len(c.test_points) for c in result.run.conversations) == 4
    assert "turn.ndcg_any_lme@3" in values and "session.recall_all@k" not in values  # no sessions in this corpus


def test_grouped_by_category_aggregates_that_categorys_points():
    """Per category, recall is the hits over the category's answerable points and turn.recall_frac@3 the mean of its
    points' values, worked out apart from grouped."""
    from evals.judge.retrieval import point_value

    result = _evidence_run("bm25")
    by_category = metrics.grouped(metrics.point_values(ScoredRun(result.run, result.scores)), "category")
    pairs = [
        (p, s)
        for c, scores in zip(result.run.conversations, result.scores.points, strict=True)
        for p, s in zip(c.test_points, scores, strict=True)
    ]
    assert set(by_category) == {p.category for p, _ in pairs}
    for category, found in by_category.items():
        mine = [(p, s) for p, s in pairs if p.category == category]
        answerable = [s for _, s in mine if s.answerable]
        assert (found["recall"].successes or 0, found["recall"].n) == (sum(s.hit for s in answerable), len(answerable))
        fractions = [v for p, _ in mine if (v := point_value(p, "recall_frac", "turn", 3, result.run.cutoff_rule)) is not None]
        if fractions:
            assert found["turn.recall_frac@3"].value == pytest.approx(sum(fractions) / len(fractions), abs=1e-12)
        else:
            assert "turn.recall_frac@3" not in found


def test_grouped_by_conversation_keeps_every_conversation_in_run_order():
    """grouped(..., "conversation") has one group per conversation, by position, with its tokens per test point."""
    result = _evidence_run()
    by_conversation = metrics.grouped(
        metrics.point_values(ScoredRun(result.run, result.scores)), "conversation", ["tokens_per_test_point"]
    )
    assert list(by_conversation) == [0, 1]
    for position, scores in enumerate(result.scores.points):
        answerable = [s.context_tokens for s in scores if s.answerable]
        assert by_conversation[position]["tokens_per_test_point"].total == sum(answerable)
        assert by_conversation[position]["tokens_per_test_point"].n == len(answerable)


def test_shared_bootstrap_draws_give_each_sample_its_own_interval():
    """bootstrap_mean_intervals over samples of one size equals bootstrap_mean_interval of each sample alone."""
    import random

    from evals.judge.stats import bootstrap_mean_interval, bootstrap_mean_intervals

    rng = random.Random(7)
    samples = [[rng.random() for _ in range(n)] for n in (1, 5, 5, 300, 300, 4000)] + [[0.5] * 5, []]
    samples.append(list(samples[3]))  # a repeat is not resampled again, and gets the same interval
    assert bootstrap_mean_intervals(samples) == [bootstrap_mean_interval(s) for s in samples]


# -- every surface docs/layout.md's "Add a metric and show it on the site" names -------------------------------


DESCRIPTION = "Share of test points whose first retrieved record holds the answer."


@pytest.fixture(scope="module")
def toy_site(tmp_path_factory: pytest.TempPathFactory):
    """Runs of full_history and recency made while hit@1 is declared, and the site built from their store: once,
    for the tests that only read its pages."""
    from evals.site import build_site

    folder = tmp_path_factory.mktemp("toy-site")
    store = folder / "results.duckdb"
    with pytest.MonkeyPatch.context() as patch, hit_at_1_declared():
        patch.setenv("EVALS_CACHE", str(folder / "user-cache.duckdb"))
        for runner in ("full_history", "recency"):
            args = ["run", "--runner", runner, "--corpus", str(FIXTURES / "corpus_small"), "--store", str(store)]
            result = CliRunner().invoke(cli, args, catch_exceptions=False)
            assert result.exit_code == 0, result.output
        build_site(store, folder / "site")
    return folder / "site"


def _table(html: str, marker: str) -> str:
    """The first <table> after ``marker`` in ``html``."""
    return html.split(marker, 1)[1].split("</table>", 1)[0]


def test_declaring_leaves_the_registry_as_it_was():
    """A metric declared inside metrics.declaring() is withdrawn at the block's end; the others stay."""
    before = list(METRICS)
    with metrics.declaring():
        metrics.metric("toy_total", label="toy", kind=PROPORTION, higher_is_better=True, description="x")(_hit_at_1)
        assert "toy_total" in METRICS
    assert list(METRICS) == before


def test_a_declared_metric_is_a_field_of_evals_runs_json_and_csv(evals, corpus_small):
    """`evals runs --format json|csv` carry a metric declared in test code, with its n."""
    with metrics.declaring():
        metrics.point_metric("toy_first", label="toy first", kind=PROPORTION, higher_is_better=True, description="x")(
            lambda point: float(point.score.rank == 1) if point.score.answerable else None
        )
        evals("run", "--runner", "recency", "--corpus", str(corpus_small))
        listed = json.loads(evals("runs", "--format", "json"))
        (row, _) = csv.DictReader(io.StringIO(evals("runs", "--format", "csv")))
    assert listed[0]["metrics"]["toy_first"]["n"] == 4 and "toy_first" not in listed[1]["metrics"]
    assert row["toy_first"] != "" and row["toy_first_n"] == "4"


def test_a_declared_metric_is_a_column_of_the_markdown_leaderboard(toy_metric, evals, corpus_small):
    """`evals leaderboard --format markdown` (the README's table) has the metric's column, with its interval."""
    evals("run", "--runner", "recency", "--corpus", str(corpus_small))
    header = next(line for line in evals("leaderboard", "--format", "markdown").splitlines() if line.startswith("| strategy"))
    assert "| hit@1 [95% CI] |" in header


def test_a_declared_metric_is_a_column_of_the_sites_leaderboard(toy_site):
    """The benchmark's leaderboard page has a hit@1 column heading."""
    (board,) = toy_site.glob("leaderboard-*.html")
    assert "hit@1" in _table(board.read_text(encoding="utf-8"), "<table").split("</thead>", 1)[0]


def test_a_declared_metric_is_a_field_of_the_sites_downloads(toy_site):
    """leaderboard.json and leaderboard.csv carry hit_at_1 with its n and interval."""
    rows = json.loads((toy_site / "leaderboard.json").read_text(encoding="utf-8"))
    table = list(csv.DictReader(io.StringIO((toy_site / "leaderboard.csv").read_text(encoding="utf-8"))))
    assert {r["hit_at_1_n"] for r in rows} == {4} and all(r["hit_at_1_low"] is not None for r in rows)
    assert all(r["hit_at_1"] != "" for r in table)


def test_a_declared_metric_is_a_row_of_the_run_pages_metrics_table(toy_site):
    """Each run page's metrics table has a hit@1 row with its value and description."""
    pages = [p for p in (toy_site / "runs").glob("*.html")]
    assert pages
    for page in pages:
        table = _table(page.read_text(encoding="utf-8"), '<h2 id="metrics">')
        row = next(r for r in table.split("<tr>") if "hit@1" in r)
        assert DESCRIPTION in row and "—" not in row


def test_a_declared_metric_is_a_line_of_the_methodology_page(toy_site):
    """about.html's "Every metric" table lists hit@1, its key and its description."""
    table = _table((toy_site / "about.html").read_text(encoding="utf-8"), '<h2 id="metrics">')
    row = next(r for r in table.split("<tr>") if "hit@1" in r)
    assert "<code>hit_at_1</code>" in row and DESCRIPTION in row


def test_point_values_of_some_metrics_equal_those_of_every_metric():
    """point_values asked for a few metrics (it scores only their levels and cutoffs) gives each the values it has
    among every metric's."""
    result = _evidence_run("bm25")
    run = ScoredRun(result.run, result.scores)
    every = metrics.point_values(run)
    for names in (["turn.recall_any@k"], ["turn.recall_any@3"], ["session.recall_all@k", "turn.ndcg_any@1"]):
        some = metrics.point_values(run, names)
        for name in names:
            if name in every.columns:
                assert some.columns[name] == every.columns[name]
