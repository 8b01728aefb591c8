"""The site's pure parts: highlighting, slugs, charts, drop flags, number formats, page contexts."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime

import jinja2
import jinja2.meta
import jinja2.nodes
import pytest
from helpers import ROOT

from evals.judge.metrics import MetricValue
from evals.judge.scoring import match
from evals.model.formatting import number as num
from evals.model.formatting import percent as pct
from evals.model.formatting import short_commit
from evals.site import DEFAULT_TEMPLATES
from evals.site._charts import CostPoint, SeriesPoint, cost_chart, pareto_front, series_chart
from evals.site._drilldown import ConversationText
from evals.site._history import drop_reason
from evals.site._registry import PUBLISHERS
from evals.site._render import make_environment
from evals.site._text import Segment, highlight
from evals.site._views import settings_text
from evals.store import RunSummary
from evals.views.site_paths import slug, unique_slugs

# -- highlighting --------------------------------------------------------------------------------


def test_highlight_marks_every_case_insensitive_occurrence():
    """Each occurrence of a keyword, in any case, becomes a marked segment; the text is unchanged."""
    segments = highlight("Teal walls, teal door", ["TEAL"])
    assert segments == [Segment("Teal", True), Segment(" walls, ", False), Segment("teal", True), Segment(" door", False)]


def test_highlight_merges_overlapping_matches():
    """Overlapping keywords give one marked segment, not nested or repeated ones."""
    assert highlight("gate code 4417", ["code 44", "4417"]) == [Segment("gate ", False), Segment("code 4417", True)]


def test_highlight_keeps_markup_as_plain_text():
    """Markup in text or keyword stays a plain string; escaping is left to the template."""
    segments = highlight("close with </td> now", ["</td>"])
    assert segments[1] == Segment("</td>", True)
    env = make_environment()
    rendered = env.from_string('{% import "_partials.html" as p %}{{ p.text(s) }}').render(s=segments)
    assert rendered == "close with <mark>&lt;/td&gt;</mark> now"


def test_highlight_maps_positions_when_lowercasing_changes_length():
    """A character whose lower case is longer (İ) does not shift the marked span."""
    text = "İstanbul code zorvex"
    assert highlight(text, ["zorvex"])[-1] == Segment("zorvex", True)
    assert "".join(s.text for s in highlight(text, ["zorvex"])) == text


def test_turns_holding_finds_keywords_only_before_the_point():
    """Evidence search looks only at turns before the test point, case-insensitively."""
    text = ConversationText([("user", "Code is ZORVEX"), ("assistant", "ok"), ("user", "zorvex again")])
    assert text.turns_holding(["zorvex"], 2) == [0]
    assert text.turns_holding(["zorvex"], 3) == [0, 2]
    assert text.turns_holding(["absent"], 3) == []


def test_turns_holding_agrees_with_the_hit_rule():
    """A turn is evidence exactly when evals.judge.metrics would count it, as one record, as holding the answer."""
    turns = [("user", "İstanbul gate CODE 4417"), ("assistant", "noted"), ("user", "the code? 44"), ("user", "4417 again")]
    text = ConversationText(turns)
    for needles in (["code 4417"], ["4417", "noted"], ["absent"], ["İstanbul"]):
        expected = [i for i, (_, content) in enumerate(turns) if match(needles, "", [content]).hit]
        assert text.turns_holding(needles, len(turns)) == expected, needles


# -- names and numbers ---------------------------------------------------------------------------


def test_slug_keeps_safe_names_and_hashes_unsafe_ones():
    """Safe names are kept; names with unsafe characters get a safe name plus a hash."""
    assert slug("01_colour") == "01_colour"
    unsafe = slug("a/b c?.json")
    assert re.fullmatch(r"[A-Za-z0-9._-]+", unsafe) and unsafe != slug("a_b c?.json")


def test_unique_slugs_differ_on_case_insensitive_file_systems():
    """Names differing only in case get slugs that differ in more than case."""
    slugs = unique_slugs(["Chat", "chat"])
    assert slugs["Chat"].lower() != slugs["chat"].lower()


def test_empty_numbers_render_as_a_dash():
    """None is shown as a dash, never 0."""
    assert (pct(None), num(None)) == ("\u2014", "\u2014")
    assert (pct(0.0), num(1234.5), num(1234)) == ("0.0%", "1,234.5", "1,234")


def test_short_commit_and_settings_text():
    """Full hashes shorten to 7 characters; placeholders stay; settings omit the name, in key order."""
    assert short_commit("0123456789abcdef0123456789abcdef01234567") == "0123456"
    assert short_commit("no-git") == "no-git"
    assert (
        settings_text({"name": "mneme", "embedder": "HashEmbedder", "dimensions": 16}) == "dimensions=16, embedder=HashEmbedder"
    )


# -- charts --------------------------------------------------------------------------------------


def test_pareto_front():
    """A point is on the frontier unless another is no costlier and no worse, and better in one."""
    assert pareto_front([(0, 0.0), (10, 0.5), (20, 0.5), (30, 0.9), (5, 0.4)]) == [True, True, False, True, True]


def _cost_point(tokens: float, recall: float, label: str) -> CostPoint:
    return CostPoint(tokens=tokens, recall=recall, low=None, high=None, label=label, title=label, href=f"{label}.html")


def test_cost_chart_puts_zero_tokens_on_the_axis():
    """A configuration with 0 tokens (no_memory) sits on the left edge, not at minus infinity."""
    chart = cost_chart([_cost_point(0, 0.0, "none"), _cost_point(2500, 1.0, "all")], title="t", tokens_label="x")
    assert chart.marks[0].cx == chart.left
    assert chart.marks[1].cx <= chart.right
    assert [t.label for t in chart.x_ticks] == ["0", "10", "100", "1k", "10k"]


def test_cost_chart_marks_and_steps_the_frontier():
    """Dominated configurations are not frontier marks; the frontier path visits the others."""
    chart = cost_chart(
        [_cost_point(0, 0.0, "a"), _cost_point(50, 0.8, "b"), _cost_point(500, 0.7, "c")], title="t", tokens_label="x"
    )
    assert [m.kind for m in chart.marks] == ["frontier", "frontier", ""]
    assert [cls for cls, _ in chart.paths] == ["frontier"]


def test_chart_labels_do_not_overlap():
    """Labels of points at the same place are moved apart."""
    chart = cost_chart([_cost_point(100, 0.5, f"strategy{i}") for i in range(3)], title="t", tokens_label="x")
    spots = {(m.label_x, m.label_y) for m in chart.marks}
    assert len(spots) == 3


def test_series_chart_flags_drops_and_skips_empty_values():
    """Flagged runs are drawn as drops; runs without a value get no mark."""
    points = [
        SeriesPoint(value=v, low=None, high=None, label=str(i), title="", href="r.html", flagged=f)
        for i, (v, f) in enumerate([(0.9, False), (None, False), (0.4, True)])
    ]
    chart = series_chart(points, title="t", y_label="y", recall=True)
    assert [m.kind for m in chart.marks] == ["", "drop"]


# -- drops ---------------------------------------------------------------------------------------


def _summary(hits: int, total: int, low: float | None = None, high: float | None = None) -> RunSummary:
    recall = hits / total if total else None
    return RunSummary(
        run_id="r", commit="c", dirty=False, model="none", date="2025-01-01",
        timestamp=datetime(2025, 1, 1, tzinfo=UTC), strategy="s", strategy_config={"name": "s"}, config_key="s-k5-x",
        k=5, seed=42, corpus_name="c", corpus_dir="c", corpus_digest="d", tokenizer="cl100k_base",
        package_version="0", mneme_version=None, python_version="3.11", duration_s=0.0, conversation_count=1,
        hits=hits, total=total, recall=recall, context_tokens=0, tokens_per_test_point=0.0 if total else None,
        metrics={"recall": MetricValue(recall, total, low, high)},
    )  # fmt: skip


def test_drop_when_recall_falls_below_previous_interval():
    """Recall under the previous run's interval is a drop."""
    assert "below the previous run's 95% interval" in drop_reason(_summary(90, 100, 0.83, 0.94), _summary(70, 100))


def test_drop_when_hits_fall_on_the_same_test_points():
    """Fewer hits of the same number of test points is a drop even inside the interval."""
    assert drop_reason(_summary(9, 10, 0.6, 0.98), _summary(8, 10)) == "keyword hit@k hits fell from 9 to 8 of 10"


def test_drop_is_judged_by_the_headline_not_keyword_hits():
    """On a corpus with evidence the drop flag reads the headline: fewer keyword hits with the same
    evidence recall is no drop, and fewer evidence hits is one."""
    evidence = lambda hits: MetricValue(hits / 10, 10, None, None)  # noqa: E731
    before = dataclasses.replace(_summary(9, 10), metrics={**_summary(9, 10).metrics, "evidence_recall_any": evidence(5)})
    keyword_fell = dataclasses.replace(_summary(8, 10), metrics={**_summary(8, 10).metrics, "evidence_recall_any": evidence(5)})
    evidence_fell = dataclasses.replace(_summary(9, 10), metrics={**_summary(9, 10).metrics, "evidence_recall_any": evidence(4)})
    assert drop_reason(before, keyword_fell) == ""
    assert drop_reason(before, evidence_fell) == "recall_any@k hits fell from 5 to 4 of 10"


def test_no_drop_when_nothing_fell():
    """Equal or better runs, and runs without test points, are not drops."""
    assert drop_reason(_summary(8, 10, 0.49, 0.94), _summary(9, 10)) == ""
    assert drop_reason(_summary(0, 0), _summary(0, 0)) == ""


# -- templates and their documented contexts ----------------------------------------------------


PAGE_CLASSES = [cls for publisher in PUBLISHERS for cls in publisher.pages]  # each page kind's models, in its own module


def _undeclared(env: jinja2.Environment, name: str) -> set[str]:
    """Names a template reads from its context (macro imports such as ``p`` are its own)."""
    tree = env.parse(env.loader.get_source(env, name)[0])
    imported = {node.target for node in tree.find_all(jinja2.nodes.Import)}
    return jinja2.meta.find_undeclared_variables(tree) - imported


@pytest.mark.parametrize("page_class", PAGE_CLASSES, ids=lambda c: c.__name__)
def test_templates_use_only_documented_context(page_class):
    """A page template (with base.html) refers only to fields of its page dataclass."""
    env = make_environment()
    documented = {f.name for f in dataclasses.fields(page_class)}
    used = _undeclared(env, page_class.template) | _undeclared(env, "base.html")
    assert used <= documented, f"{page_class.template} uses undocumented {sorted(used - documented)}"


def test_partials_read_nothing_from_the_page_context():
    """The macros in _partials.html take every value as an argument."""
    assert _undeclared(make_environment(), "_partials.html") == set()


def test_every_page_template_has_a_page_class():
    """Each page template in site_templates/ is documented by a page dataclass."""
    templates = {p.name for p in DEFAULT_TEMPLATES.glob("*.html") if not p.name.startswith("_") and p.name != "base.html"}
    assert templates == {cls.template for cls in PAGE_CLASSES}


# -- publishing and docs -------------------------------------------------------------------------


def test_pages_workflow_is_valid_yaml_with_the_pages_actions():
    """The Pages workflow parses and builds, uploads and deploys the site."""
    import yaml  # a test extra: this test must not skip silently

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text())
    steps = [step.get("uses", step.get("run", "")) for job in workflow["jobs"].values() for step in job["steps"]]
    text = "\n".join(steps)
    assert "evals build-site" in text
    assert "actions/upload-pages-artifact" in text and "actions/deploy-pages" in text
    assert workflow["permissions"]["pages"] == "write" and workflow["permissions"]["id-token"] == "write"


def test_pages_workflow_builds_from_board_files_and_this_push_s_runs():
    """The workflow installs the field, verifies board/, fetches its benchmarks, runs the suite (evals.toml: every
    registered strategy) and builds from board/ beside those runs; no store is restored from an earlier deploy."""
    text = (ROOT / ".github" / "workflows" / "pages.yml").read_text()
    steps = [text.index(s) for s in (".[field]", "evals verify board", "evals fetch", 'evals run-suite --suite "$SUITE"')]
    assert steps == sorted(steps)
    assert "evals build-site --from board" in text and "'evals.toml'" in text
    assert "curl" not in text  # history is the git history of board/, not a file a deploy left


def test_site_docs_cover_publishing_and_preview():
    """docs/site.md says how to enable Pages and how to preview locally."""
    text = (ROOT / "docs" / "site.md").read_text()
    assert "evals build-site && python -m http.server -d site" in text
    assert "GitHub Actions" in text and "Settings" in text


def test_speakers_are_shown_by_the_names_the_dataset_gives():
    """Turns written as "Name: text" (LoCoMo's speakers under user and assistant) are labelled by the name;
    a turn without the name (an inserted question) and a corpus without names keep the role."""
    from evals.site._text import speaker_labels

    roles = ["user", "assistant", "user", "assistant", "user"]
    contents = ["Caroline: hi", "Melanie: hello", "Caroline: how are you", "Melanie: fine", "When did Melanie paint?"]
    assert speaker_labels(roles, contents) == ["Caroline", "Melanie", "Caroline", "Melanie", "user"]
    assert speaker_labels(["user", "assistant"], ["Note: buy milk", "ok"]) == ["user", "assistant"]


# -- the retrieval cutoff tables ------------------------------------------------------------------


def test_longmemeval_reference_ndcg_sits_beside_ndcg_any_lme(tmp_path):
    """After import-corpus longmemeval and a run, the paper's NDCG rows are in the session ndcg_any_lme cutoff table
    (stored as run_metrics rows like the other metrics), and none is in trec_eval's ndcg_any table."""
    from click.testing import CliRunner
    from helpers import FIXTURES

    from evals.cli import cli
    from evals.site._retrieval import cutoff_tables
    from evals.store import Store

    fixture = FIXTURES / "importers" / "longmemeval_small.json"
    corpus, store_path = tmp_path / "lme", tmp_path / "s.duckdb"
    assert CliRunner().invoke(cli, ["import-corpus", "longmemeval", str(fixture), "--out", str(corpus)]).exit_code == 0
    args = ["run", "--runner", "bm25", "--corpus", str(corpus), "--store", str(store_path), "--repo", str(tmp_path)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    with Store.open(store_path, read_only=True) as store:
        (summary,) = store.runs()
        published = store.references(summary.corpus_digest)
    assert "session.ndcg_any_lme@5" in summary.metrics and "turn.ndcg_any_lme@50" in summary.metrics
    tables = {(t.level, t.metric): t for t in cutoff_tables([("bm25", "", summary)], published)}
    lme = [
        (row.label, [c.value for c in row.cells if c is not None])
        for row in tables["session", "ndcg_any_lme"].rows
        if row.reference
    ]
    assert lme == [("LongMemEval paper, BM25 (session level, _m)", [0.516, 0.540])]
    assert not [row for row in tables["session", "ndcg_any"].rows if row.reference]
