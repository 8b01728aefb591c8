"""The graded judge protocols, `--protocol beam` and `--protocol locomo_plus`: their templates read from stand-ins of
BEAM's and LoCoMo-Plus's files (tests/helpers/protocol_sources.py), every request sent to the local OpenAI-compatible
server (tests/helpers/llm_server.py), whose replies the tests script where a score must be pinned."""

from __future__ import annotations

import json
import random
import warnings
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.corpora import imported
from helpers.graded import EVENTS, beam_tier, plus_folder, report_results
from helpers.llm_server import LLMServer
from helpers.protocol_sources import pin_sources
from helpers.runs import evals_run, exported_and_imported, last_run

from evals.benchmarks.beam.protocol import kendall_tau_b
from evals.cli import cli
from evals.model.corpus import corpus_digest, load_corpus

# The answers the server gives (by the question in the answer prompt), and the judge replies pinned by hand.
ANSWERS = {
    "QUESTION:\nWhat is topic 2? (conv 1)": "It is topic 2.",
    "QUESTION:\nWhat is topic 2? (conv 2)": "It is topic 2, detail 2.",
    "QUESTION:\nHow long? (conv 1)": "4 weeks",
    "QUESTION:\nHow long? (conv 2)": "8 weeks",
    "QUESTION:\nIn what order? (conv 1)": "gamma release\nalpha launch\nbeta testing",
    "QUESTION:\nIn what order? (conv 2)": "alpha launch\nbeta testing\nI baked sourdough bread on Sunday",
    "QUESTION:\nWhat is my dog's name? (conv 1)": "There is no information about a dog.",
    "QUESTION:\nWhat is my dog's name? (conv 2)": "I have no information about any dog.",
}
HALF = json.dumps({"score": 0.5, "reason": "partly"})
JUDGED = {
    "Criterion: detail 1\n": HALF,  # conversation 1's second information-extraction item: 0.5, which int() makes 0
    "Criterion: 8 weeks\n": "I cannot decide on this one.",  # conversation 2's temporal item: no score
    "Criterion: beta testing\nResponse: gamma": HALF,  # event ordering keeps a 0.5 in its judge mean (float)
}


def run(server: LLMServer, store: Path, corpus: Path, *extra: str):
    return evals_run(server, store, corpus, "--k", "3", *extra)


@pytest.fixture
def beam_corpus(tmp_path: Path) -> Path:
    return imported("beam", beam_tier(tmp_path / "BEAM"), tmp_path / "beam")


@pytest.fixture
def plus_corpus(tmp_path: Path) -> Path:
    return imported("locomo_plus", plus_folder(tmp_path / "Locomo-Plus"), tmp_path / "plus")


@pytest.fixture(scope="module")
def beam_module(tmp_path_factory: pytest.TempPathFactory):
    """`evals run --protocol beam` of full_history over the stand-in tier, the answers and the pinned replies scripted,
    made once for the tests that only read it (MiniLM aligns event ordering: seconds a run); (the stored run, the
    result JSON, the server it asked, its store)."""
    folder = tmp_path_factory.mktemp("beam")
    corpus = imported("beam", beam_tier(folder / "BEAM"), folder / "beam")
    store, output = folder / "results.duckdb", folder / "result.json"
    with LLMServer() as server:
        with pytest.MonkeyPatch.context() as patch:
            pin_sources(patch, folder / "downloads")
            patch.setenv("EVALS_CACHE", str(folder / "user-cache.duckdb"))
            server.scripted.update(ANSWERS | JUDGED)
            result = run(server, store, corpus, "--protocol", "beam", "--output", str(output))
        assert result.exit_code == 0, result.output
        yield last_run(store), json.loads(output.read_text()), server, store


@pytest.fixture
def beam_run(beam_module):
    """(the stored run, the result JSON) of ``beam_module``."""
    stored, document, _, _ = beam_module
    return stored, document


def answers_by_question(stored) -> dict[str, object]:
    points = [p for conv in stored.run.conversations for p in conv.test_points]
    answers = [a for conv in stored.answers.points for a in conv]
    return {p.question: a for p, a in zip(points, answers, strict=True)}


def judge_bodies(server: LLMServer, marker: str) -> list[dict]:
    return [b for b in server.bodies if marker in b["messages"][0]["content"]]


def rank_lists(reference: list[str], system: list[str]) -> tuple[list[int], list[int]]:
    """The ranks event_ordering_score compares: each item of the union, by its place in each list (absent: tied last)."""
    union = list(dict.fromkeys(reference + system))

    def ranks(items: list[str]) -> list[int]:
        found = {item: i + 1 for i, item in enumerate(items)}
        return [found.get(u, len(union) + 1) for u in union]

    return ranks(reference), ranks(system)


# -- BEAM: the rubric ------------------------------------------------------------------------------------------


def test_the_beam_importer_keeps_the_rubric_and_a_corpus_without_one_keeps_its_digest(beam_corpus, tmp_path):
    """Each question's rubric becomes its test point's, in order; imported without rubrics, the corpus has the digest
    it had before the field existed (the field is left out of the digest when empty)."""
    points = {p.question: p for c in load_corpus(beam_corpus).conversations for _, p in c.test_points()}
    assert points["What is topic 2? (conv 2)"].rubric == ["topic 2", "detail 2"]
    assert points["In what order? (conv 1)"].rubric == EVENTS
    loaded = load_corpus(imported("beam", beam_tier(tmp_path / "BEAM-bare", rubrics=False), tmp_path / "bare"))
    dumped = [c.model_dump_json(exclude_defaults=True) for c in loaded.conversations]
    assert all('"rubric"' not in d for d in dumped)
    assert corpus_digest(loaded.conversations, "beam") != corpus_digest(load_corpus(beam_corpus).conversations, "beam")


def test_beam_sends_its_rubric_prompt_once_per_item_with_the_codes_substitutions(beam_module):
    """One judge request per rubric item (14 items in 8 questions), one user message to gpt-4.1-mini: the item and
    the answer put in, ``<question>`` left as the published code leaves it; the answer prompt holds the question."""
    stored, _, server, _ = beam_module
    asks = judge_bodies(server, "[BEAM-JUDGE]")
    assert len(asks) == server.requests["judge"] == 14
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" and b["model"] == "gpt-4.1-mini" for b in asks)
    texts = [b["messages"][0]["content"] for b in asks]
    assert all("Question: <question>\n" in t for t in texts)
    assert sum("Criterion: topic 2\nResponse: It is topic 2, detail 2.\nEnd of response." in t for t in texts) == 1
    assert [t.split("Criterion: ")[1].split("\n")[0] for t in texts if "Response: gamma release" in t] == EVENTS
    answers = [b for b in server.bodies if b["messages"][0]["content"].startswith("[BEAM-ANSWER]")]
    assert len(answers) == 8 and all("<context>" not in b["messages"][0]["content"] for b in answers)
    assert stored.summary.judge_model == "gpt-4.1-mini" and stored.answers.protocol == "beam"


def test_beam_answer_context_is_the_records_as_turn_chunks(beam_module):
    """The context is the retrieved records, each written as BEAM's turn_chunk writes a message, joined as
    handling_context joins them (no separator beyond the chunk's own)."""
    _, _, server, _ = beam_module
    text = next(
        b["messages"][0]["content"] for b in server.bodies if "QUESTION:\nHow long? (conv 1)" in b["messages"][0]["content"]
    )
    context = text.split("CONTEXT:\n")[1].split("\nQUESTION:")[0]
    assert context.startswith("USER: message 0 about topic 0 \n\nASSISTANT: message 1 about topic 0 \n\n")
    assert context.count(" \n\n") == 8  # full_history: every one of the eight messages


def test_beam_question_score_truncates_a_partial_item_as_the_code_does(beam_run):
    """Items scored 1.0 and 0.5 make 0.5, not 0.75: every ability but event ordering takes int(score). The raw grades
    are kept, the verdict is partial."""
    stored, _ = beam_run
    answer = answers_by_question(stored)["What is topic 2? (conv 1)"]
    assert answer.grades == [1.0, 0.5] and answer.score == 0.5 and answer.verdict == "partial"
    assert "int(score)" in answer.reason
    full = answers_by_question(stored)["What is topic 2? (conv 2)"]
    assert full.grades == [1.0, 1.0] and full.score == 1.0 and full.verdict == "correct" and full.correct is True


def test_beam_reply_without_a_score_is_unparsed_and_counts_zero(beam_run):
    """A judge reply with no readable score: that item is None among the grades, counts 0, and the point is unparsed
    (counted, in the unparsed share)."""
    stored, document = beam_run
    answer = answers_by_question(stored)["How long? (conv 2)"]
    assert answer.grades == [None] and answer.score == 0.0 and answer.verdict == "unparsed" and answer.counted
    unparsed = document["metrics"]["answers"]["figures"]["unparsed"]
    assert (unparsed["count"], unparsed["of"]) == (1, 8)


def test_beam_event_ordering_scores_tau_norm_of_kendalls_tau_b(beam_run):
    """Event ordering: the answer's lines aligned to the rubric by MiniLM, F1 over the canonical lists, tau-b (as
    scipy's) over the union's ranks; the point's figure is tau_norm; the judge's mean keeps a 0.5 (float)."""
    scipy = pytest.importorskip("scipy.stats")
    stored, _ = beam_run
    found = answers_by_question(stored)
    reversed_ = found["In what order? (conv 1)"]
    tau = scipy.kendalltau(*rank_lists(EVENTS, ["gamma release", "alpha launch", "beta testing"]), variant="b").statistic
    assert tau == pytest.approx(-1 / 3)
    assert reversed_.score == pytest.approx((tau + 1) / 2) and reversed_.verdict == "partial"
    assert "F1 1.000" in reversed_.reason and "llm_judge_score 0.833" in reversed_.reason
    assert reversed_.grades == [1.0, 0.5, 1.0]
    extra = found["In what order? (conv 2)"]
    system = ["alpha launch", "beta testing", "I baked sourdough bread on Sunday"]  # the third matches no event
    tau = scipy.kendalltau(*rank_lists(EVENTS, system), variant="b").statistic
    assert extra.score == pytest.approx((tau + 1) / 2)
    assert "precision 0.667, recall 0.667, F1 0.667" in extra.reason
    assert f"final_score {(tau + 1) / 2 * 2 / 3:.3f}" in extra.reason


def test_beam_figures_per_ability_and_overall(beam_run):
    """Per ability the mean of its questions' figures (event ordering's tau_norm), which is report_results.py's mean
    per conversation then across conversations; overall the mean of the abilities' figures."""
    stored, document = beam_run
    found = answers_by_question(stored)
    by_conversation = {
        n: {
            "information_extraction": [found[f"What is topic 2? (conv {n})"].score],
            "temporal_reasoning": [found[f"How long? (conv {n})"].score],
            "event_ordering": [found[f"In what order? (conv {n})"].score],
            "abstention": [found[f"What is my dog's name? (conv {n})"].score],
        }
        for n in (1, 2)
    }
    published = report_results(by_conversation)
    assert published["information_extraction"] == 0.75 and published["temporal_reasoning"] == 0.5
    figures = document["metrics"]["answers"]["figures"]
    rows = {row["category"]: row for row in figures["by_category"]}
    assert {name: rows[name]["value"] for name in published} == pytest.approx(published)
    assert all(row["interval"] == "bootstrap" and row["n"] == 2 for row in rows.values())
    overall = figures["task_averaged"]
    assert overall["value"] == pytest.approx(sum(published.values()) / 4) and overall["categories"] == 4
    assert stored.summary.metric("answer_task_averaged").value == pytest.approx(overall["value"])
    assert stored.summary.metric("answer_accuracy") is None and stored.summary.metric("answer_score") is not None


def test_beam_without_a_rubric_is_refused_before_any_request(server, sources, store_path, tmp_path):
    """A corpus imported without rubrics: the run stops in one line saying what to do, before any request."""
    bare = imported("beam", beam_tier(tmp_path / "BEAM", rubrics=False), tmp_path / "bare")
    result = run(server, store_path, bare, "--protocol", "beam")
    assert result.exit_code == 1 and "has none" in result.output and "import again" in result.output
    assert server.total == 0


@pytest.mark.slow
def test_beam_judge_repeats_ask_every_item_again_and_a_rerun_is_served_from_the_cache(server, sources, beam_corpus, store_path):
    """--judge-repeats 2: every rubric item asked twice, each point's judge tokens summed over all; the same run again
    sends nothing (its replies cached), with the same scores."""
    server.scripted.update(ANSWERS | JUDGED)
    assert run(server, store_path, beam_corpus, "--protocol", "beam", "--judge", "--judge-repeats", "2").exit_code == 0
    assert server.requests["judge"] == 28
    first = last_run(store_path)
    answers = [a for conv in first.answers.points for a in conv]
    assert all(len(a.repeat_verdicts) == 2 for a in answers)
    assert first.answers.usage["judge"].per == 8 and first.answers.usage["judge"].sent == 28
    server.reset_counts()
    assert run(server, store_path, beam_corpus, "--protocol", "beam", "--judge", "--judge-repeats", "2").exit_code == 0
    assert server.total == 0
    again = [a for conv in last_run(store_path).answers.points for a in conv]
    assert [a.score for a in again] == [a.score for a in answers] and all(a.judge_cached for a in again)


def test_beam_export_and_import_keep_rubrics_grades_and_scores(beam_module, tmp_path):
    """An export carries each point's rubric (its corpus digest covers it) and each answer's grades; it imports whole."""
    stored, _, _, store_path = beam_module
    exported, other = exported_and_imported(store_path, stored.summary.run_id, tmp_path)
    document = json.loads(exported.read_text())
    assert any(p.get("rubric") == EVENTS for c in document["run"]["conversations"] for p in c["test_points"])
    again = last_run(other)
    assert again.summary.corpus_digest == stored.summary.corpus_digest
    assert [a for conv in again.answers.points for a in conv] == [a for conv in stored.answers.points for a in conv]


def probe_beam(server, corpus: Path, store_path: Path) -> dict[str, dict]:
    """`evals probe-judge --protocol beam` on ``corpus`` against the local LLM ``server``: its report's kinds, by kind."""
    result = CliRunner().invoke(
        cli,
        ["probe-judge", "--protocol", "beam", "--corpus", str(corpus), "--store", str(store_path),
         "--base-url", server.base_url, "--format", "json"],
        env={"OPENAI_API_KEY": "sk-test", "EVALS_LLM_BACKOFF": "0.01"},
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {k["kind"]: k for k in json.loads(result.output)["kinds"]}


def test_probe_judge_asks_beams_judge_per_rubric_item(server, sources, beam_corpus, store_path):
    """`evals probe-judge --protocol beam`: each canned answer graded by every rubric item of its point; the mean
    score per kind is reported, the gold answer's above "I don't know"'s."""
    kinds = probe_beam(server, beam_corpus, store_path)
    assert kinds["gold"]["sent"] == 6 and kinds["gold"]["mean_score"] is not None
    assert kinds["gold"]["mean_score"] > kinds["dont_know"]["mean_score"]
    assert server.requests["judge"] == len(judge_bodies(server, "[BEAM-JUDGE]")) > 12


def test_kendall_tau_b_is_scipys():
    """Kendall's tau-b on rankings with ties agrees with scipy's variant b; where scipy gives NaN, None."""
    scipy = pytest.importorskip("scipy.stats")
    draw = random.Random(33)
    for _ in range(300):
        n = draw.randint(1, 8)
        x, y = [draw.randint(1, 4) for _ in range(n)], [draw.randint(1, 4) for _ in range(n)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scipy warns where it gives NaN (one item)
            theirs = scipy.kendalltau(x, y, variant="b").statistic
        ours = kendall_tau_b(x, y)
        assert (ours is None and theirs != theirs) or ours == pytest.approx(theirs, abs=1e-12)


# -- LoCoMo-Plus --------------------------------------------------------------------------------------------------

LABELS = {
    "Ann：I learned to say no.\nBob：Good for you.": json.dumps({"label": "correct", "reason": "it remembers"}),
    "：I sprained my ankle.": "The prediction is partial at best.",
    "Bob：I plan to learn Greek.": json.dumps({"label": "maybe", "reason": "unsure"}),
}


def test_locomo_plus_scores_its_labels_and_averages_them(server, sources, plus_corpus, store_path, tmp_path):
    """Correct 1, partial 0.5 (read from the reply's words, as _parse_judge_response falls back), an unknown label 0 and
    unparsed; the overall figure is their mean (overall_avg), the category's the same (by_category)."""
    server.scripted.update(LABELS)
    output = tmp_path / "plus.json"
    result = run(server, store_path, plus_corpus, "--protocol", "locomo_plus", "--output", str(output))
    assert result.exit_code == 0, result.output
    answers = [a for conv in last_run(store_path).answers.points for a in conv]
    assert [(a.verdict, a.score, a.grades) for a in answers] == [
        ("correct", 1.0, [1.0]), ("partial", 0.5, [0.5]), ("unparsed", 0.0, [None])
    ]  # fmt: skip
    figures = json.loads(output.read_text())["metrics"]["answers"]["figures"]
    assert figures["overall"]["value"] == pytest.approx(0.5) and figures["overall"]["n"] == 3
    assert [(r["category"], r["value"]) for r in figures["by_category"]] == [("Cognitive", pytest.approx(0.5))]
    assert figures["unparsed"]["count"] == 1


def test_locomo_plus_asks_and_judges_as_its_scripts(server, sources, plus_corpus, store_path):
    """The answer: the prefix naming A and B, the Cognitive instruction, each record as `<speaker> said, "<text>"`, the
    trigger last; the judge: the Cognitive template after the same prefix, the cue dialogue as its evidence with
    full-width colons, no gold, the prediction; one user message each, at most 1,024 and 512 tokens, to gpt-4o-mini."""
    assert run(server, store_path, plus_corpus, "--protocol", "locomo_plus").exit_code == 0
    asks = [b for b in server.bodies if "[PLUS-COGNITIVE]" in b["messages"][0]["content"]]
    assert len(asks) == 3 and all(b["max_tokens"] == 1024 and len(b["messages"]) == 1 for b in asks)
    first = next(b["messages"][0]["content"] for b in asks if "I am overwhelmed" in b["messages"][0]["content"])
    assert first.startswith("[PLUS-START] A and B talk. Dates first.\n\n[PLUS-COGNITIVE] Reply, remembering.\n\n")
    assert 'Ann said, "I learned to say no."\nBob said, "Good for you."' in first
    assert first.endswith('\nAnn said, "I am overwhelmed."')
    judged = judge_bodies(server, "[PLUS-JUDGE-COGNITIVE]")
    assert len(judged) == 3 and all(b["max_tokens"] == 512 and b["model"] == "gpt-4o-mini" for b in judged)
    text = next(b["messages"][0]["content"] for b in judged if "I learned" in b["messages"][0]["content"])
    assert text.startswith("[PLUS-START] A and B talk. Dates first.\n\n[PLUS-JUDGE-COGNITIVE]\n")
    assert "Evidence:\nAnn：I learned to say no.\nBob：Good for you.\nPrediction: " in text


def test_locomo_plus_on_locomo_uses_the_default_template_per_category(server, sources, locomo_corpus, store_path, tmp_path):
    """On a corpus of other categories (LoCoMo's numbers): the "default" template with the gold answer, and a figure
    per category (by_category) beside the overall mean."""
    output = tmp_path / "locomo.json"
    assert run(server, store_path, locomo_corpus, "--protocol", "locomo_plus", "--output", str(output)).exit_code == 0
    judged = judge_bodies(server, "[PLUS-JUDGE-DEFAULT]")
    points = [p for conv in last_run(store_path).run.conversations for p in conv.test_points]
    assert len(judged) == len(points)
    assert any(f"Gold: {points[0].expected_fact}\n" in b["messages"][0]["content"] for b in judged)
    figures = json.loads(output.read_text())["metrics"]["answers"]["figures"]
    assert len(figures["by_category"]) == len({p.category for p in points}) > 1
    assert all(row["value"] == 1.0 for row in figures["by_category"])  # the stand-in judge says correct


def test_drilldown_shows_a_graded_score_and_a_partial_verdict(beam_module, tmp_path):
    """The run's drill-down shows each graded answer's score and a partial verdict as such, not as incorrect."""
    from helpers.html import parse

    from evals.site import build_site

    build_site(beam_module[3], tmp_path / "site")
    # BEAM's licence withholds its text (evals.benchmarks.text_withheld): the points are found by their grade.
    sections = [
        section
        for page in (tmp_path / "site").rglob("*.html")
        for section in parse(page).find_all("section", cls="point")
        if any(span.text() == "0.500" for span in section.find_all("span", cls="graded"))
    ]
    assert sections
    assert not any("What is topic 2? (conv 1)" in section.text() for section in sections)
    answer = sections[0].find("div", cls="answer")
    assert "partial" in answer.find("h4").text() and "incorrect" not in answer.find("h4").text()


def test_the_run_page_leads_with_the_graded_score(beam_module, tmp_path):
    """A graded run's page leads with its mean grade and says who graded it; partial answers are listed as not fully
    correct, never as "judged incorrect"."""
    from helpers.html import parse

    from evals.site import build_site

    build_site(beam_module[3], tmp_path / "site")
    page = parse(next((tmp_path / "site" / "runs").glob("*.html")))
    card = page.find("div", id="answer-score")
    assert "QA score" in card.text() and "the protocol's mean grade, by gpt-4.1-mini" in card.text()
    assert page.find("h3", id="wrong-answers").text().startswith("Answers not judged fully correct (")
    assert "graded by its judge" in page.find("table", id="answer-summary").text()


def _one_hot(texts: list[str]):
    """An embedding in which equal texts are the same unit vector and different texts are orthogonal."""
    import numpy as np

    names = sorted(set(texts))
    return np.array([[1.0 if name == text else 0.0 for name in names] for text in texts])


def test_beam_event_ordering_with_an_undefined_tau_is_left_out_of_the_figures():
    """One event in the rubric and the same one answered: tau-b is undefined (scipy's NaN, which the published average
    would carry); the point is kept with its reason but counted in no figure."""
    from evals.benchmarks.beam.protocol import BeamProtocol, event_ordering
    from evals.benchmarks.protocols import AskedPoint

    alone = event_ordering(["alpha launch"], ["alpha launch"], _one_hot, 0.65)
    assert (alone.f1, alone.tau_b, alone.tau_norm, alone.final_score) == (1.0, None, None, None)

    class Beam(BeamProtocol):
        embed = staticmethod(_one_hot)

    protocol = Beam(
        {"answer": "<context> <question>", "judge": "<rubric_item> <llm_response>", "event_ordering_threshold": "0.65"}
    )
    point = AskedPoint("c", 3, "In what order?", "alpha launch", [], [], category="event_ordering", rubric=("alpha launch",))
    grade = protocol.grade(point, "alpha launch", ['{"score": 1.0, "reason": "listed"}'])
    assert grade.counted is False and grade.score is None and grade.grades == (1.0,)
    assert "tau-b undefined" in grade.reason and "left out of the figures" in grade.reason
    in_order = replace(point, rubric=tuple(EVENTS))
    graded = protocol.grade(in_order, "\n".join(EVENTS), ['{"score": 1}'] * len(EVENTS))
    assert graded.counted is None and graded.score == 1.0  # the same events in the same order: tau_norm 1


# -- graded figures that contradict or hide -----------------------------------------------------


def _single_event_corpus(tmp_path: Path) -> Path:
    """The stand-in tier with each event-ordering rubric cut to one event: its tau-b is undefined when answered."""
    tier = beam_tier(tmp_path / "BEAM-one")
    for questions in tier.glob("*/probing_questions/probing_questions.json"):
        data = json.loads(questions.read_text())
        data["event_ordering"][0]["rubric"] = ["alpha launch"]
        questions.write_text(json.dumps(data))
    return imported("beam", tier, tmp_path / "beam-one")


def test_beam_run_line_shows_the_protocols_score(server, sources, beam_corpus, store_path):
    """The `evals run` line of a BEAM run carries the protocol's own score, the figure the leaderboard's QA column shows."""
    server.scripted.update(ANSWERS | JUDGED)
    result = run(server, store_path, beam_corpus, "--protocol", "beam")
    assert result.exit_code == 0, result.output
    score = last_run(store_path).summary.metric("answer_score")
    assert score is not None and f" score {score.value:.3f} ({score.n})" in result.output.splitlines()[-1]
    board = CliRunner().invoke(cli, ["leaderboard", "--store", str(store_path)])
    assert f" {score.value:.3f} [" in board.output and "†" in board.output


def test_an_ability_that_counts_no_point_is_named_beside_the_task_average(server, sources, store_path, tmp_path):
    """Event ordering whose every tau-b is undefined counts no point: the figures and the run page name it as left out
    of the task average."""
    corpus = _single_event_corpus(tmp_path)
    server.scripted.update({f"QUESTION:\nIn what order? (conv {n})": "alpha launch" for n in (1, 2)})
    output = tmp_path / "result.json"
    result = run(server, store_path, corpus, "--protocol", "beam", "--output", str(output))
    assert result.exit_code == 0, result.output
    averaged = json.loads(output.read_text())["metrics"]["answers"]["figures"]["task_averaged"]
    assert [label for label in averaged["left_out"] if "event" in label] and averaged["categories"] == 3
    site = tmp_path / "site"
    assert CliRunner().invoke(cli, ["build-site", "--store", str(store_path), "--out", str(site)]).exit_code == 0
    pages = [p.read_text() for p in site.rglob("*.html") if 'id="left-out"' in p.read_text()]
    assert pages and "event" in pages[0].split('id="left-out"')[1].split("</span>")[0]


def test_probe_judge_counts_an_undefined_score_as_undefined(server, sources, store_path, tmp_path):
    """`probe-judge --protocol beam`: a gold answer whose tau-b is undefined is counted as undefined, out of the mean,
    not as a score of 0."""
    corpus = _single_event_corpus(tmp_path)
    gold = probe_beam(server, corpus, store_path)["gold"]
    assert gold["undefined_scores"] >= 1 and gold["mean_score"] is not None and gold["mean_score"] > 0


def test_question_with_an_empty_rubric_is_refused_with_advice_that_helps(server, sources, store_path, tmp_path):
    """A question whose source rubric is ``[]``: the import says so, and the run's refusal says that BEAM's own code
    cannot score it (not only to import again, which cannot help)."""
    tier = beam_tier(tmp_path / "BEAM-empty")
    questions = tier / "1" / "probing_questions" / "probing_questions.json"
    data = json.loads(questions.read_text())
    data["temporal_reasoning"][0]["rubric"] = []
    questions.write_text(json.dumps(data))
    imported = CliRunner().invoke(cli, ["import-corpus", "beam", str(tier), "--out", str(tmp_path / "empty")])
    assert imported.exit_code == 0 and "temporal_reasoning[0] has no rubric" in imported.output
    result = run(server, store_path, tmp_path / "empty", "--protocol", "beam")
    assert result.exit_code == 1 and "BEAM's own code cannot score it" in result.output


# -- BEAM's Mem0 profile (--protocol beam_mem0): nugget-only -----------------------------------------------------------


@pytest.fixture
def beam_mem0_run(server, sources, beam_corpus, store_path, tmp_path, monkeypatch):
    """`evals run --protocol beam_mem0` over the stand-in tier: BEAM's stand-in files, the same scripted replies."""
    from evals.benchmarks.protocols import PINS

    monkeypatch.setitem(PINS, "beam_mem0", PINS["beam"])
    server.scripted.update(ANSWERS | JUDGED)
    output = tmp_path / "result.json"
    result = run(server, store_path, beam_corpus, "--protocol", "beam_mem0", "--output", str(output))
    assert result.exit_code == 0, result.output
    return last_run(store_path), json.loads(output.read_text())


def test_beam_mem0_keeps_a_partial_item_and_scores_event_ordering_by_its_rubric(beam_mem0_run):
    """Mem0's nugget-only profile: items 1.0 and 0.5 make 0.75 (not BEAM's 0.5), and event ordering is the mean of
    its rubric items' scores, with no alignment and no Kendall tau."""
    stored, _ = beam_mem0_run
    found = answers_by_question(stored)
    assert found["What is topic 2? (conv 1)"].score == 0.75 and found["What is topic 2? (conv 1)"].verdict == "partial"
    ordering = found["In what order? (conv 1)"]
    assert ordering.grades == [1.0, 0.5, 1.0] and ordering.score == pytest.approx(2.5 / 3)
    assert "tau" not in ordering.reason and "nugget-only" in ordering.reason


def test_beam_mem0_figures_say_their_profile(beam_mem0_run, store_path, tmp_path):
    """The run records protocol beam_mem0 with the profile it follows (Mem0's page, pinned), and its run page names it."""
    from evals.site import build_site

    stored, _ = beam_mem0_run
    answer = stored.summary.llm_settings["protocols"]["answer"]
    assert answer["name"] == "beam_mem0"
    assert "nugget-only" in answer["profile"] and "docs/core-concepts/memory-evaluation.mdx" in answer["profile"]
    build_site(store_path, tmp_path / "site")
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site" / "runs").rglob("*.html")]
    assert any('protocol <strong id="protocol">beam_mem0</strong>' in page for page in pages)
