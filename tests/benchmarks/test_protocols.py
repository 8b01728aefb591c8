"""The answer protocols, driven through `evals run --protocol` against the local OpenAI-compatible server
(tests/helpers/llm_server.py: real HTTP, every request body logged), on a LongMemEval-format file and LoCoMo's
fixture imported as corpora.

The templates come from stand-in files of the published scripts' shape with our own placeholder
prose (tests/helpers/protocol_sources.py), pinned by their digests in place of the registry's pins, in a
downloads folder laid out as `evals fetch` lays it out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.llm_server import LLMServer, replying
from helpers.protocol_sources import FILES, write_sources, write_tree
from helpers.runs import evals_run, last_run

from evals.benchmarks import protocol_lexical
from evals.benchmarks.longmemeval.protocol import QUESTION_TYPES
from evals.benchmarks.protocols import PINS
from evals.cli import cli
from evals.store import Store

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
MARKERS = {
    "single-session-user": "[JUDGE-GENERAL]",
    "single-session-assistant": "[JUDGE-GENERAL]",
    "multi-session": "[JUDGE-GENERAL]",
    "temporal-reasoning": "[JUDGE-TEMPORAL]",
    "knowledge-update": "[JUDGE-UPDATE]",
    "single-session-preference": "[JUDGE-RUBRIC]",
}


def run(server: LLMServer, store: Path, corpus: Path, *extra: str, runner: str = "full_history", repo: Path | None = None):
    """`evals run` of ``runner`` at k=2 against ``server``, as the protocol tests run it."""
    return evals_run(server, store, corpus, "--k", "2", *extra, runner=runner, repo=repo)


def answers_of(stored) -> list:
    return [a for conv in stored.answers.points for a in conv]


def points_of(stored) -> list:
    return [p for conv in stored.run.conversations for p in conv.test_points]


def bodies(server: LLMServer, marker: str) -> list[dict]:
    return [b for b in server.bodies if b["messages"][0]["content"].lstrip().startswith(marker)]


# -- LongMemEval ----------------------------------------------------------------------------------


def test_longmemeval_judges_each_type_with_its_template_and_abstention_with_its_own(server, sources, lme_corpus, store_path):
    """--protocol longmemeval: each question type's judge request is built from its type's template, the
    `_abs` question from the abstention template; one user message, max_tokens 10, the judge model
    gpt-4o-2024-08-06 by default; every point is judged and counted, abstention included."""
    result = run(server, store_path, lme_corpus, "--protocol", "longmemeval")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    judges = [b for b in server.bodies if b["messages"][0]["content"].startswith("[JUDGE-")]
    assert len(judges) == len(QUESTION_TYPES) + 1
    by_question = {b["messages"][0]["content"].split("\nQuestion: ")[1].split("\n")[0]: b for b in judges}
    for point in points_of(stored):
        body = by_question[point.question]
        marker = "[JUDGE-ABSTENTION]" if not point.answerable else MARKERS[point.category]
        assert body["messages"][0]["content"].startswith(marker), (point.category, point.answerable)
        assert len(body["messages"]) == 1 and body["messages"][0]["role"] == "user"
        assert body["max_tokens"] == 10 and body["temperature"] == 0 and body["model"] == "gpt-4o-2024-08-06"
    answers = answers_of(stored)
    assert all(a.counted is True and a.verdict in ("correct", "wrong") for a in answers)
    assert [a.category for a in answers] == [p.category for p in points_of(stored)]
    assert stored.answers.judged == len(answers)  # the abstention point is in the denominator
    assert stored.summary.judge_model == "gpt-4o-2024-08-06"


def test_longmemeval_answer_prompt_dates_the_sessions_and_the_question(server, sources, lme_corpus, store_path):
    """The answer request fills the answer template with the records grouped by session, sessions sorted by
    date, each written with the per-session format (its date, its turns as JSON), then the question turn's
    date as the current date; one user message, temperature 0, max_tokens 500."""
    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval").exit_code == 0
    asks = bodies(server, "[LME-ANSWER]")
    assert len(asks) == len(QUESTION_TYPES) + 1
    first = next(b for b in asks if "flower number 0 " in b["messages"][0]["content"])
    text = first["messages"][0]["content"]
    assert first["max_tokens"] == 500 and first["temperature"] == 0 and len(first["messages"]) == 1
    assert "\nTODAY: 2023/06/10 (Sat) 09:00\nQ: What flower number 0 did I plant?\nA:" in text
    # full_history gives both sessions; the April one comes first, as LongMemEval sorts by date.
    april, may = text.index("when: 2023/04/01 (Sat) 10:00"), text.index("when: 2023/05/20 (Sat) 02:21")
    assert april < may and "=== part 1 ===\nwhen: 2023/04/01" in text
    session = json.dumps(
        [{"role": "user", "content": "I planted flower number 0: orchid0."}, {"role": "assistant", "content": "Lovely garden."}]
    )
    assert f"when: 2023/05/20 (Sat) 02:21\nlog:\n\n{session}\n" in text


# -- mem0 ---------------------------------------------------------------------------------------------


def test_mem0_skips_category_5_and_names_the_speakers(server, sources, locomo_corpus, store_path):
    """--protocol mem0 on LoCoMo: the answer prompt is one system message naming both speakers, each with
    their memories as "date: text"; no message has role assistant; category 5 is neither judged nor
    counted; the judge asks for a JSON object, gpt-4o-mini by default."""
    result = run(server, store_path, locomo_corpus, "--protocol", "mem0")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    asks = bodies(server, "[MEM0-ANSWER]")
    assert len(asks) == len(points_of(stored))
    for body in asks:
        assert [m["role"] for m in body["messages"]] == ["system"]
    text = next(b for b in asks if "Ann's cat" in b["messages"][0]["content"])["messages"][0]["content"]
    assert "Person Ann:" in text and "Person Bob:" in text
    assert '"1:56 pm on 8 May, 2023: Ann: ' in text and '"7:10 pm on 20 May, 2023: Bob: ' in text
    judges = bodies(server, "[MEM0-JUDGE]")
    categories = [p.category for p in points_of(stored)]
    assert len(judges) == sum(not c.startswith("5") for c in categories)
    assert all(b["response_format"] == {"type": "json_object"} and b["model"] == "gpt-4o-mini" for b in judges)
    for point, answer in zip(points_of(stored), answers_of(stored), strict=True):
        skipped = point.category.startswith("5")
        assert answer.counted is (not skipped)
        assert (answer.verdict is None) is skipped


@pytest.mark.parametrize(("shape", "read"), [("json", True), ("prose", True), ("garbage", False)])
def test_mem0_verdict_is_its_label_or_unparsed(server, sources, locomo_corpus, store_path, shape, read):
    """mem0's verdict is `label == "CORRECT"` in the JSON the reply holds (also after prose); a reply with
    no JSON label is unparsed: counted, not correct, and the run completes."""
    server.verdict_shape = shape
    assert run(server, store_path, locomo_corpus, "--protocol", "mem0").exit_code == 0
    judged = [a for a in answers_of(last_run(store_path)) if a.counted]
    assert judged and all((a.verdict != "unparsed") is read for a in judged)
    assert all((a.correct is not None) is read for a in judged)


# -- LoCoMo ----------------------------------------------------------------------------------------------


def test_locomo_scores_without_a_judge_and_asks_as_the_script(server, sources, locomo_corpus, store_path):
    """--protocol locomo: no judge request; every point counted with a score; category 2 gets the date hint,
    category 5 the two-choice question; the whole history goes in the full-conversation form with the
    speakers named, each session under its date; one user message, max_tokens 32."""
    result = run(server, store_path, locomo_corpus, "--protocol", "locomo")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    assert server.requests["judge"] == 0 and stored.summary.judge_model is None
    answers = answers_of(stored)
    assert all(a.counted and a.score is not None and 0 <= a.score <= 1 and a.verdict is None for a in answers)
    asks = bodies(server, "[LOCOMO-START]")
    assert len(asks) == len(answers)
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" and b["max_tokens"] == 32 for b in asks)
    texts = {
        p.question: next(b["messages"][0]["content"] for b in asks if f"Question: {p.question}" in b["messages"][0]["content"])
        for p in points_of(stored)
    }
    cat = texts["When did Ann adopt her cat?"]
    assert "[LOCOMO-START] Two people talk: Ann and Bob." in cat
    assert "When did Ann adopt her cat? [HINT: use the dates] Answer:" in cat
    assert "WHEN: 1:56 pm on 8 May, 2023\nTALK:\nAnn says <" in cat and "WHEN: 7:10 pm on 20 May, 2023\nTALK:\n" in cat
    assert "Choose: (a) " in texts["What is Ann's dog called?"] and "[LOCOMO-QA5]" in texts["What is Ann's dog called?"]


def test_locomo_category_5_letter_maps_back_and_its_order_is_recorded(server, sources, locomo_corpus, store_path):
    """A category-5 reply of one letter is mapped back to its option (the not-mentioned option scores 1),
    and the order the options were offered in is recorded with the answer."""

    server.rewrite = replying("answer", "(a)")
    assert run(server, store_path, locomo_corpus, "--protocol", "locomo").exit_code == 0
    stored = last_run(store_path)
    ((point, answer),) = [
        (p, a) for p, a in zip(points_of(stored), answers_of(stored), strict=True) if p.category.startswith("5")
    ]
    offered = next(b for b in bodies(server, "[LOCOMO-START]") if point.question in b["messages"][0]["content"])
    first = offered["messages"][0]["content"].split("Choose: (a) ")[1].split(" (b) ")[0]
    assert answer.answer == first and "options (a)" in answer.reason and "replied '(a)'" in answer.reason
    assert answer.score == (1.0 if first == "[NOT IN THE TALK]" else 0.0)


def test_locomo_retrieval_lists_dated_lines_in_rank_order(server, sources, locomo_corpus, store_path):
    """A k-limited retrieval gets LoCoMo's retrieval form: one `date | speaker says <text>` line per record."""
    assert run(server, store_path, locomo_corpus, "--protocol", "locomo", runner="bm25").exit_code == 0
    stored = last_run(store_path)
    asks = [b for b in server.bodies if "\n[LOCOMO-QA" in b["messages"][0]["content"]]
    assert asks and not bodies(server, "[LOCOMO-START]")
    point = points_of(stored)[0]
    text = next(b for b in asks if f"Question: {point.question} Answer:" in b["messages"][0]["content"])["messages"][0]["content"]
    lines = text.split("\n\n\n[LOCOMO-QA")[0].split("\n")
    assert len(lines) == len(point.retrieved_records)
    for line, record in zip(lines, point.retrieved_records, strict=True):
        speaker, said = record.split(": ", 1)
        assert line.endswith(f" | {speaker} says <{said.split(' [shares ')[0]}>") or " with image " in line
        assert line.split(" | ")[0].endswith(", 2023")


# -- the harness's verdicts ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "read"), [("yes", True), ("label", True), ("string", True), ("prose", True), ("garbage", False)]
)
def test_harness_reads_verdicts_in_several_shapes(server, sources, corpus_small, store_path, shape, read):
    """The harness's judge reply as `yes`, `{"label": "CORRECT"}`, `{"correct": "true"}` or prose then JSON is
    read; one without a verdict is counted unparsed. Never an error."""
    server.verdict_shape = shape
    result = run(server, store_path, corpus_small, "--with-answers", "--judge", runner="mneme")
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    answers = answers_of(stored)
    if read:
        assert [a.correct for a in answers] == [a.keyword_hit for a in answers]
        assert all(a.verdict in ("correct", "wrong") for a in answers)
    else:
        assert all(a.verdict == "unparsed" and a.correct is None and a.reason == "Hard to say." for a in answers)
    assert stored.answers.judged == len(answers)


def test_harness_run_keeps_its_settings_and_keys(server, sources, corpus_small, store_path):
    """Under the default protocol nothing of the protocols enters the settings or the keys: a harness run's
    configuration key is what it was before protocols existed."""
    from evals.store import config_key

    assert run(server, store_path, corpus_small, "--with-answers", "--judge", runner="mneme").exit_code == 0
    stored = last_run(store_path)
    assert "protocols" not in stored.summary.llm_settings and stored.answers.protocol == "harness"
    assert stored.summary.protocol_source is None
    identity = {"answer_model": "gpt-4o-mini", "judge_model": "gpt-4o-mini", "base_url": server.base_url}
    assert stored.summary.config_key == config_key(stored.run.strategy, k=2, model=stored.run.model, answers=identity)


# -- recording, keys, re-judging ---------------------------------------------------------------------------


def test_run_records_protocol_source_and_template_digests(server, sources, lme_corpus, store_path):
    """The stored run names its protocol, its source (repository, commit, files with sha256) and a digest of
    every template used; `evals runs` JSON carries them."""
    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval").exit_code == 0
    stored = last_run(store_path)
    repo, commit, files = FILES["longmemeval"]
    pins = {p.path: p.sha256 for p in PINS["longmemeval"]}
    assert stored.answers.protocol == "longmemeval" and stored.summary.answer_protocol == "longmemeval"
    assert stored.summary.protocol_source == {"repository": repo, "commit": commit, "files": pins}
    templates = stored.summary.llm_settings["protocols"]["answer"]["templates"]
    assert {"answer", "session", "judge:abstention", "judge:temporal-reasoning"} <= set(templates)
    listed = CliRunner().invoke(cli, ["runs", "--store", str(store_path), "--format", "json"])
    assert listed.exit_code == 0, listed.output
    (row,) = json.loads(listed.output)
    assert row["answer_protocol"] == "longmemeval" and row["protocol_source"]["files"] == pins


def test_another_protocol_or_template_is_another_configuration(server, sources, lme_corpus, store_path, tmp_path, monkeypatch):
    """A different protocol, or the same protocol with a template of other text, is a configuration of its own."""
    assert run(server, store_path, lme_corpus, "--with-answers", "--judge").exit_code == 0
    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval").exit_code == 0
    tree = tmp_path / "other"
    pins = write_tree(tree, "longmemeval")
    text = (tree / "src/evaluation/evaluate_qa.py").read_text().replace("[JUDGE-UPDATE]", "[JUDGE-UPDATE] (reworded)")
    (tree / "src/evaluation/evaluate_qa.py").write_text(text)
    import hashlib

    pins = tuple(
        p if "evaluate" not in p.path else type(p)(p.repo, p.commit, p.path, hashlib.sha256(text.encode()).hexdigest())
        for p in pins
    )
    monkeypatch.setitem(PINS, "longmemeval", pins)
    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval", "--protocol-source", str(tree)).exit_code == 0
    with Store.open(store_path, read_only=True) as opened:
        keys = [s.config_key for s in opened.runs()]
    assert len(set(keys)) == 3


@pytest.mark.parametrize("extra", [("--protocol", "longmemeval"), ("--protocol", "locomo", "--judge-protocol", "mem0")])
def test_rerun_under_a_protocol_on_a_clean_commit_is_a_cached_run(server, sources, lme_corpus, store_path, clean_repo, extra):
    """The planned key (templates read before the run) is the stored one: a rerun is answered from the store."""
    assert run(server, store_path, lme_corpus, *extra, repo=clean_repo).exit_code == 0
    before = server.total
    result = run(server, store_path, lme_corpus, *extra, repo=clean_repo)
    assert result.exit_code == 0 and result.output.startswith("cached: run "), result.output
    assert server.total == before


def test_rejudging_under_another_protocol_serves_the_answers_from_the_cache(server, sources, lme_corpus, store_path):
    """--judge-protocol mem0 after a LongMemEval run: the answers come from the cache (the answer model is
    not asked again), each point is judged by mem0's judge, and the run is a configuration of its own."""
    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval").exit_code == 0
    answers_before = server.requests["answer"]
    server.reset_counts()
    result = run(server, store_path, lme_corpus, "--protocol", "longmemeval", "--judge-protocol", "mem0")
    assert result.exit_code == 0, result.output
    assert server.requests["answer"] == 0 and answers_before == len(QUESTION_TYPES) + 1
    assert len(bodies(server, "[MEM0-JUDGE]")) == len(QUESTION_TYPES) + 1 and not bodies(server, "[JUDGE-")
    stored = last_run(store_path)
    block = stored.summary.llm_settings["protocols"]
    assert (block["answer"]["name"], block["judge"]["name"]) == ("longmemeval", "mem0")
    assert stored.summary.judge_model == "gpt-4o-mini"


def test_export_and_import_keep_protocol_verdicts_and_scores(server, sources, locomo_corpus, store_path, tmp_path):
    """An export carries the protocol, its source, and each answer's category, counted flag, verdict and score."""
    assert run(server, store_path, locomo_corpus, "--protocol", "locomo").exit_code == 0
    stored = last_run(store_path)
    out = tmp_path / "export.json"
    assert (
        CliRunner().invoke(cli, ["export", stored.summary.run_id, "--store", str(store_path), "--output", str(out)]).exit_code
        == 0
    )
    other = tmp_path / "other.duckdb"
    imported = CliRunner().invoke(cli, ["import", str(out), "--store", str(other)])
    assert imported.exit_code == 0, imported.output
    again = last_run(other)
    assert again.answers.protocol == "locomo" and again.summary.protocol_source == stored.summary.protocol_source
    assert answers_of(again) == answers_of(stored)


# -- refusals -------------------------------------------------------------------------------------------------


def test_changed_source_file_is_refused_naming_file_and_digests(server, sources, lme_corpus, store_path):
    """A source file whose bytes are not the pinned ones is refused in one line naming it, the expected and
    the actual digest; nothing is asked, nothing stored."""
    path = sources / "sources" / "xiaowu0162/LongMemEval" / FILES["longmemeval"][1] / "src/evaluation/evaluate_qa.py"
    path.write_text(path.read_text() + "\n# edited\n")
    import hashlib

    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    expected = next(p.sha256 for p in PINS["longmemeval"] if p.path.endswith("evaluate_qa.py"))
    result = run(server, store_path, lme_corpus, "--protocol", "longmemeval")
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert str(path) in line and f"sha256 {actual}, expected {expected}" in line
    assert server.total == 0 and not store_path.exists()


def test_missing_sources_name_the_fetch_command(server, tmp_path, lme_corpus, store_path, monkeypatch):
    """Without --protocol-source and without fetched files, the error says which command fetches them."""
    monkeypatch.setenv("EVALS_DOWNLOADS", str(tmp_path / "empty"))
    result = run(server, store_path, lme_corpus, "--protocol", "longmemeval")
    assert result.exit_code == 1
    (line,) = result.output.splitlines()
    assert "does not exist" in line and "`evals fetch longmemeval_oracle`" in line and "--protocol-source" in line
    result = run(server, store_path, lme_corpus, "--protocol", "locomo")
    assert "`evals fetch locomo`" in result.output


def test_protocol_source_reads_a_repository_tree(server, sources, locomo_corpus, store_path, tmp_path, monkeypatch):
    """--protocol-source DIR reads the files at their repository paths under DIR (not the downloads folder)."""
    monkeypatch.setenv("EVALS_DOWNLOADS", str(tmp_path / "empty"))
    tree = tmp_path / "LoCoMo"
    monkeypatch.setitem(PINS, "locomo", write_tree(tree, "locomo"))
    result = run(server, store_path, locomo_corpus, "--protocol", "locomo", "--protocol-source", str(tree))
    assert result.exit_code == 0, result.output


def test_file_of_another_shape_is_refused_naming_what_is_missing(tmp_path):
    """A pinned file that lacks what the protocol reads (here: no abstention template) is refused in one line."""
    from evals.benchmarks.protocols import ProtocolError, load_protocol

    tree = tmp_path / "lme"
    pins = write_tree(tree, "longmemeval")
    path = tree / "src/evaluation/evaluate_qa.py"
    text = path.read_text().replace('template = "[JUDGE-ABSTENTION]', 'other = "[JUDGE-ABSTENTION]')
    path.write_text(text)
    import hashlib

    pins = tuple(
        type(p)(p.repo, p.commit, p.path, hashlib.sha256(path.read_bytes()).hexdigest()) if p.path.endswith("qa.py") else p
        for p in pins
    )
    with pytest.raises(ProtocolError, match=r"evaluate_qa\.py: get_anscheck_prompt's templates for abstention not found"):
        load_protocol("longmemeval", source=tree, pins=pins)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--protocol", "locomo", "--judge"), "has no judge"),
        (("--protocol-source", "."), "--protocol-source goes with a published --protocol"),
    ],
)
def test_contradictory_protocol_options_are_refused(server, sources, locomo_corpus, store_path, extra, message):
    result = run(server, store_path, locomo_corpus, *extra)
    assert result.exit_code == 2 and message in result.output
    assert server.total == 0


# -- speakers and records that are no turn ----------------------------------------------------------------


def test_harness_sends_locomo_speaker_b_as_a_named_user_turn(server, sources, locomo_corpus, store_path):
    """Under the harness's own prompts too, LoCoMo's second speaker reaches the answer model as a user message
    opening with the name ("Bob: …"), never as the assistant's own words."""
    assert run(server, store_path, locomo_corpus, "--with-answers").exit_code == 0
    asks = [b for b in server.bodies if b["messages"][0]["role"] == "system"]
    assert asks
    for body in asks:
        context = body["messages"][1:-1]
        assert context and all(m["role"] == "user" for m in context)
    assert any(m["content"].startswith("Bob: ") for b in asks for m in b["messages"])


def test_records_that_are_no_turn_go_undated(server, sources, lme_corpus, store_path):
    """summary_buffer's summary is no turn: under LongMemEval it is a session of its own with an empty date,
    sorted first; the turns it holds verbatim keep their session dates."""
    result = run(server, store_path, lme_corpus, "--protocol", "longmemeval", "--k", "3", runner="summary_buffer")
    assert result.exit_code == 0, result.output
    texts = [b["messages"][0]["content"] for b in bodies(server, "[LME-ANSWER]")]
    assert texts and all('=== part 1 ===\nwhen: \nlog:\n\n"' in t for t in texts)
    assert all("when: 2023/05/20 (Sat) 02:21" in t or "when: 2023/04/01 (Sat) 10:00" in t for t in texts)


def test_a_suite_may_set_the_protocol(server, tmp_path, locomo_corpus, store_path, monkeypatch):
    """A suite's matrix may set `protocol`; its files are read from the suite's --downloads folder."""
    downloads = tmp_path / "suite-downloads"
    for name, pinned in write_sources(downloads).items():
        monkeypatch.setitem(PINS, name, pinned)
    monkeypatch.delenv("EVALS_DOWNLOADS", raising=False)
    suite = tmp_path / "suite.toml"
    suite.write_text(
        f'[[matrix]]\ncorpora = ["{locomo_corpus}"]\nstrategies = ["bm25"]\nk = 2\nprotocol = "mem0"\n'
        f'base_url = "{server.base_url}"\n',
        encoding="utf-8",
    )
    args = [
        "run-suite",
        "--suite",
        str(suite),
        "--store",
        str(store_path),
        "--downloads",
        str(downloads),
        "--repo",
        str(tmp_path),
    ]
    result = CliRunner().invoke(
        cli, args, env={"OPENAI_API_KEY": "sk-test", "EVALS_LLM_BACKOFF": "0.01", "EVALS_DOWNLOADS": None}
    )
    assert result.exit_code == 0, result.output
    stored = last_run(store_path)
    assert stored.answers.protocol == "mem0" and bodies(server, "[MEM0-JUDGE]")


def test_run_page_shows_protocol_source_link_and_digests(server, sources, lme_corpus, store_path, tmp_path):
    """The site's run page names the protocol, links each source file at the pinned commit, and lists each
    file's sha256 and each template's digest."""
    from evals.site import build_site

    assert run(server, store_path, lme_corpus, "--protocol", "longmemeval").exit_code == 0
    stored = last_run(store_path)
    build_site(store_path, tmp_path / "site")
    (page,) = [p for p in (tmp_path / "site" / "runs").glob("*.html")]
    html = page.read_text(encoding="utf-8")
    assert 'protocol <strong id="protocol">longmemeval</strong>' in html
    repo, commit, _ = FILES["longmemeval"]
    for pin in PINS["longmemeval"]:
        assert f'href="https://github.com/{repo}/blob/{commit}/{pin.path}"' in html and pin.sha256 in html
    for name, digest in stored.summary.llm_settings["protocols"]["answer"]["templates"].items():
        assert f"template longmemeval: {name}</td><td><code>{digest}</code>" in html


# -- verdict readers, on their own ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "label"),
    [
        ('{"correct": true, "reason": "x"}', "correct"),
        ('```json\n{"correct": false, "reason": "x"}\n```', "wrong"),
        ("Yes.", "correct"),
        ("no", "wrong"),
        ('{"label": "CORRECT"}', "correct"),
        ('{"label": "wrong"}', "wrong"),
        ('{"correct": "true"}', "correct"),
        ('{"correct": "False"}', "wrong"),
        ('The answer names teal. {"correct": true, "reason": "teal"}', "correct"),
        ('{"note": {"x": 1}} then {"correct": false}', "wrong"),
        ('{"correct": false, "correct": true}', "unparsed"),
        ('{"correct": "maybe"}', "unparsed"),
        ("I cannot decide.", "unparsed"),
        ("", "unparsed"),
    ],
)
def test_harness_verdict_reader(reply, label):
    from evals.benchmarks.protocols import read_json_verdict

    verdict = read_json_verdict(reply)
    assert verdict.label == label
    if label == "unparsed":
        assert verdict.correct is None and verdict.reason == reply[:300]


def test_published_verdict_rules(sources):
    """LongMemEval: "yes" anywhere in the reply, lower-cased. mem0: `label == "CORRECT"` in the JSON the reply
    holds (fenced, or first `{` to last `}`), any other label wrong, no label unparsed."""
    from evals.benchmarks.protocols import load_protocol

    lme, mem0 = load_protocol("longmemeval"), load_protocol("mem0")
    assert [lme.read_verdict(r).label for r in ("Yes.", "YES", "eyes", "No.", "")] == [
        "correct",
        "correct",
        "correct",
        "wrong",
        "wrong",
    ]
    replies = [
        '{"label": "CORRECT"}',
        'Reasoning.\n```json\n{"label": "CORRECT"}\n```',
        'x {"label": "correct"} y',
        '{"label": "WRONG"}',
        "CORRECT",
        '{"verdict": 1}',
    ]
    assert [mem0.read_verdict(r).label for r in replies] == ["correct", "correct", "wrong", "wrong", "unparsed", "unparsed"]


def test_drilldown_f1_is_the_runs_under_the_locomo_protocol(server, sources, locomo_corpus, store_path, tmp_path):
    """--protocol locomo: each drill-down's answer F1 is the run's per-point answer_f1 (LoCoMo's stemmed F1),
    not the harness's F1; here they differ ("weeks" stems to the gold's "week")."""
    import re

    from evals.judge.metrics import ScoredRun, answer_scores, point_values
    from evals.site import build_site

    server.rewrite = replying("answer", "The weeks before 8 May 2023")
    assert run(server, store_path, locomo_corpus, "--protocol", "locomo").exit_code == 0
    stored = last_run(store_path)
    values = point_values(
        ScoredRun(stored.run, stored.scores, stored.answers, protocol_lexical(stored.answers.protocol)), ["answer_f1"]
    ).columns["answer_f1"]
    expected = {p.turn_index: v for p, v in zip(points_of(stored), values, strict=True) if v is not None}
    pairs = zip(points_of(stored), answers_of(stored), strict=True)
    harness = {p.turn_index: answer_scores(p, a, protocol_lexical("harness"))["f1"] for p, a in pairs}
    differs = [turn for turn, value in expected.items() if harness[turn] != value]
    assert differs  # the fixture tells the two rules apart
    build_site(store_path, tmp_path / "site")
    shown = {}
    for page in (tmp_path / "site" / "runs" / stored.summary.run_id).glob("*.html"):
        for turn, f1 in re.findall(r'<section[^>]*id="tp-(\d+)".*?<span class="f1">([^<]*)</span>', page.read_text(), re.S):
            shown[int(turn)] = f1
    assert {turn: shown[turn] for turn in expected} == {turn: f"{value:.3f}" for turn, value in expected.items()}
