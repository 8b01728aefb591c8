"""`evals import-corpus locomo|longmemeval`: fixtures in the published formats, imported and run end to end.

tests/fixtures/importers/locomo_small.json: conv-1 has five turns (0-4: Ann's cat
Pixel, Bob's cello, Ann's job in Porto with an image, Bob's teacher Marta, Pixel
and the plant) and five questions (turns 5-9); the second conversation has three
turns (0-2) and two questions (turns 3-4). recency k=2 sees turns 3-4 (conv-1)
and 1-2 (second): conv-1 hits "Pixel" (from turn 4, not the evidence turn 0)
and "cello"/"Marta" (evidence 1, 3: any but not all), misses the temporal
fallback and Porto; the category-5 question is kept apart; the second hits
"2021" (evidence turn 2) and misses the "Yes" fallback. So 3/6 hits, evidence
any 2/6 and all 1/6.

longmemeval_small.json: three questions, each its own haystack; recency k=2
misses both answerable ones; the multi-session one (evidence turns 0 and 2,
answer 5: too short for a keyword) retrieves turn 2, so evidence any 1/2.
"""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.results import categories

from evals.benchmarks.formats import ImportFormatError, answer_keywords, answer_text, import_corpus
from evals.cli import cli
from evals.model.corpus import load_corpus
from evals.run.evaluate import RunConfig, evaluate
from evals.views.report import legacy_json

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
LOCOMO = FIXTURES / "locomo_small.json"
LONGMEMEVAL = FIXTURES / "longmemeval_small.json"


def imported(tmp_path: Path, fmt: str, source: Path) -> Path:
    out = tmp_path / fmt
    import_corpus(fmt, source, out)
    return out


def metrics(corpus: Path, runner: str = "recency") -> dict:
    result = evaluate(RunConfig(strategy=runner, corpus=corpus, k=2))
    return legacy_json(result.run, result.scores)["metrics"]


# -- LoCoMo ------------------------------------------------------------------------------------


def test_locomo_cli_reports_counts(tmp_path):
    """The command prints conversations, questions, unanswerable and with-keyword counts, and notes skipped ids."""
    result = CliRunner().invoke(cli, ["import-corpus", "locomo", str(LOCOMO), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert (
        f"-> {tmp_path / 'c'}: 2 conversations, 7 questions (1 unanswerable, 4 with keywords, 7 with evidence turns)"
        in result.stdout
    )
    assert "note: conv-1 ([0]): 1 evidence id names no turn (skipped)" in result.stderr  # by its sample id


def test_locomo_layout(tmp_path):
    """Sessions in order, speakers and image captions in the text, questions after the history, never recorded."""
    conversation = load_corpus(imported(tmp_path, "locomo", LOCOMO)).conversations[0]
    assert conversation.id == "000_conv-1"
    assert [t.content for t in conversation.turns[:5]] == [
        "Ann: I adopted a cat named Pixel last week.",
        "Bob: Congrats! I started learning the cello.",
        "Ann: I work as a nurse in Porto. [shares a photo of a hospital]",
        "Bob: My cello teacher is called Marta.",
        "Ann: Pixel knocked over my plant.",
    ]
    assert [t.record for t in conversation.turns] == [True] * 5 + [False] * 5
    assert "session 2: 7:10 pm on 20 May, 2023" in conversation.description


def test_locomo_test_points(tmp_path):
    """Evidence ids become turns, categories keep their number, answers become keywords only where evidence holds them."""
    conversation = load_corpus(imported(tmp_path, "locomo", LOCOMO)).conversations[0]
    got = [
        (i, t.evidence_turns, t.category, t.answerable, t.expected_keywords, t.expected_fact)
        for i, t in conversation.test_points()
    ]
    assert got == [
        (5, [0], "4 single-hop", True, ["Pixel"], "Pixel"),
        (6, [1, 3], "1 multi-hop", True, ["cello", "Marta"], "cello, Marta"),
        (7, [0], "2 temporal", True, [], "The week before 8 May 2023"),
        (8, [0], "5 adversarial", False, [], "no answer in the conversation (adversarial answer: Pixel)"),
        (9, [2], "4 single-hop", True, ["Porto"], "Porto"),
    ]


def test_locomo_numeric_answer_becomes_text(tmp_path):
    """An answer given as a number (a year) is matched as text."""
    conversation = load_corpus(imported(tmp_path, "locomo", LOCOMO)).conversations[1]
    assert conversation.turns[3].test_at.expected_keywords == ["2021"]


def test_locomo_end_to_end_numbers(tmp_path):
    """recency k=2 on the import: recall 3/6, evidence any 2/6, all 1/6, one unanswerable kept apart."""
    block = metrics(imported(tmp_path, "locomo", LOCOMO))
    assert (block["recall_at_k"]["hits"], block["recall_at_k"]["total"]) == (3, 6)
    assert (block["evidence_recall_at_k"]["any"]["hits"], block["evidence_recall_at_k"]["all"]["hits"]) == (2, 1)
    assert block["unanswerable"]["count"] == 1


def test_locomo_category_breakdown(tmp_path):
    """Per category (hits, total, evidence any, evidence all, unanswerable), worked out by hand."""
    assert categories(metrics(imported(tmp_path, "locomo", LOCOMO))) == [
        ("1 multi-hop", 1, 1, 1, 0, 0),
        ("2 temporal", 1, 2, 1, 1, 0),
        ("3 open-domain", 0, 1, 0, 0, 0),
        ("4 single-hop", 1, 2, 0, 0, 0),
        ("5 adversarial", 0, 0, None, None, 1),
    ]


def test_locomo_full_history_finds_every_evidence_turn(tmp_path):
    """full_history sees the whole history at every question, so evidence recall is complete."""
    block = metrics(imported(tmp_path, "locomo", LOCOMO), "full_history")
    assert block["evidence_recall_at_k"]["all"]["hits"] == block["evidence_recall_at_k"]["all"]["total"] == 6


def test_locomo_sessions_and_dates(tmp_path):
    """History turns carry their session key and its date verbatim; the questions belong to no session."""
    conversation = load_corpus(imported(tmp_path, "locomo", LOCOMO)).conversations[0]
    assert [(t.session, t.date) for t in conversation.turns] == [
        ("session_1", "1:56 pm on 8 May, 2023"),
        ("session_1", "1:56 pm on 8 May, 2023"),
        ("session_1", "1:56 pm on 8 May, 2023"),
        ("session_2", "7:10 pm on 20 May, 2023"),
        ("session_2", "7:10 pm on 20 May, 2023"),
    ] + [(None, None)] * 5


def test_locomo_evidence_sessions(tmp_path):
    """Each question's evidence sessions are its evidence turns' sessions, in conversation order (adversarial too)."""
    conversation = load_corpus(imported(tmp_path, "locomo", LOCOMO)).conversations[0]
    assert [(i, t.evidence_sessions) for i, t in conversation.test_points()] == [
        (5, ["session_1"]),
        (6, ["session_1", "session_2"]),
        (7, ["session_1"]),
        (8, ["session_1"]),
        (9, ["session_1"]),
    ]


def test_locomo_session_without_a_date(tmp_path):
    """A session with no session_N_date_time gives its turns a session and no date."""
    path = broken(tmp_path, LOCOMO, lambda d: d[1]["conversation"].pop("session_1_date_time"))
    conversation = load_corpus(imported(tmp_path, "locomo", path)).conversations[1]
    assert [(t.session, t.date) for t in conversation.turns[:3]] == [("session_1", None)] * 3


def test_locomo_writes_the_papers_retrieval_row(tmp_path):
    """references.json holds Table 3's DRAGON dialog-level recall at 5/10/25/50, and is not in the digest."""
    corpus = load_corpus(imported(tmp_path, "locomo", LOCOMO))
    assert [(r.metric, r.level, r.k, r.value) for r in corpus.references] == [
        ("recall_frac", "turn", 5, 0.588),
        ("recall_frac", "turn", 10, 0.675),
        ("recall_frac", "turn", 25, 0.799),
        ("recall_frac", "turn", 50, 0.848),
    ]
    assert {r.label for r in corpus.references} == {"LoCoMo paper, DRAGON retriever (dialog level)"}
    assert {r.citation for r in corpus.references} == {
        "Maharana et al. 2024, Evaluating Very Long-Term Conversational Memory of LLM Agents, Table 3"
    }
    assert all("not re-run here" in r.note for r in corpus.references)
    (corpus.directory / "references.json").unlink()
    assert load_corpus(corpus.directory).digest == corpus.digest


# -- LongMemEval -------------------------------------------------------------------------------


def test_longmemeval_cli_reports_counts(tmp_path):
    """One conversation per question; abstention questions are counted as unanswerable."""
    result = CliRunner().invoke(cli, ["import-corpus", "longmemeval", str(LONGMEMEVAL), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "3 conversations, 3 questions (1 unanswerable, 1 with keywords, 2 with evidence turns)" in result.stdout


def test_longmemeval_test_points(tmp_path):
    """has_answer turns are the evidence, question_type the category, *_abs unanswerable, the question unrecorded."""
    conversations = load_corpus(imported(tmp_path, "longmemeval", LONGMEMEVAL)).conversations
    got = [
        (c.id, i, t.evidence_turns, t.category, t.answerable, t.expected_keywords, c.turns[i].record)
        for c in conversations
        for i, t in c.test_points()
    ]
    assert got == [
        ("000_q_single_1", 6, [2], "single-session-user", True, ["Border Collie"], False),
        ("001_q_multi_2", 4, [0, 2], "multi-session", True, [], False),
        ("002_q_pref_3_abs", 2, [], "single-session-preference", False, [], False),
    ]


def test_longmemeval_end_to_end_numbers(tmp_path):
    """recency k=2: 0/2 hits, evidence any 1/2 (turn 2 of the multi-session haystack), all 0/2."""
    block = metrics(imported(tmp_path, "longmemeval", LONGMEMEVAL))
    assert (block["recall_at_k"]["hits"], block["recall_at_k"]["total"]) == (0, 2)
    assert categories(block) == [
        ("multi-session", 0, 1, 1, 0, 0),
        ("single-session-preference", 0, 0, None, None, 1),
        ("single-session-user", 0, 1, 0, 0, 0),
    ]


def test_longmemeval_fallback_needs_the_answer_verbatim(tmp_path):
    """Without keywords the answer must be in one record: full_history retrieves both evidence turns and still misses "5"."""
    block = metrics(imported(tmp_path, "longmemeval", LONGMEMEVAL), "full_history")
    assert block["recall_at_k"]["per_conversation"]["001_q_multi_2"]["hits"] == 0
    assert block["evidence_recall_at_k"]["all"]["hits"] == 2


def test_longmemeval_sessions_and_dates(tmp_path):
    """Turns carry haystack_session_ids and haystack_dates verbatim; the question turn carries question_date."""
    conversation = load_corpus(imported(tmp_path, "longmemeval", LONGMEMEVAL)).conversations[0]
    assert [(t.session, t.date) for t in conversation.turns] == [
        ("s0", "2023/05/01 (Mon) 09:00"),
        ("s0", "2023/05/01 (Mon) 09:00"),
        ("s1", "2023/05/02 (Tue) 09:00"),
        ("s1", "2023/05/02 (Tue) 09:00"),
        ("s2", "2023/05/03 (Wed) 09:00"),
        ("s2", "2023/05/03 (Wed) 09:00"),
        (None, "2023/05/30 (Tue) 10:00"),
    ]


def test_longmemeval_answer_session_ids_are_evidence_sessions(tmp_path):
    """answer_session_ids become evidence_sessions; without haystack ids there are no sessions to name."""
    conversations = load_corpus(imported(tmp_path, "longmemeval", LONGMEMEVAL)).conversations
    assert [c.turns[-1].test_at.evidence_sessions for c in conversations] == [["s1"], [], []]
    assert conversations[1].sessions == [None] * 5


def test_longmemeval_unknown_answer_session_is_noted(tmp_path):
    """Answer session ids that name no session are skipped and counted in a note."""
    result = CliRunner().invoke(cli, ["import-corpus", "longmemeval", str(LONGMEMEVAL), "--out", str(tmp_path / "c")])
    assert result.exit_code == 0, result.output
    assert "note: [1]: 2 answer session ids name no session with turns (skipped)" in result.stderr


def test_longmemeval_answer_sessions_in_haystack_order(tmp_path):
    """Several answer sessions are listed in the order the haystack holds them, whatever order the file gives."""
    def mutate(d):
        d[1].update(haystack_session_ids=["a", "b"], answer_session_ids=["b", "a"])

    conversation = load_corpus(imported(tmp_path, "longmemeval", broken(tmp_path, LONGMEMEVAL, mutate))).conversations[1]
    assert conversation.turns[-1].test_at.evidence_sessions == ["a", "b"]
    assert conversation.sessions == ["a", "a", "b", "b", None]


def test_longmemeval_writes_the_papers_bm25_row(tmp_path):
    """references.json holds the paper's BM25 session-level figures for _m, marked as computed on _m only."""
    corpus = load_corpus(imported(tmp_path, "longmemeval", LONGMEMEVAL))
    assert [(r.metric, r.level, r.k, r.value) for r in corpus.references] == [
        ("recall_any", "session", 5, 0.634),
        ("recall_any", "session", 10, 0.710),
        ("ndcg_any_lme", "session", 5, 0.516),
        ("ndcg_any_lme", "session", 10, 0.540),
    ]
    assert {(r.label, r.citation, r.note) for r in corpus.references} == {
        (
            "LongMemEval paper, BM25 (session level, _m)",
            "Wu et al. 2025, LongMemEval, Table (retrieval)",
            "computed on longmemeval_m only; not re-run here",
        )
    }


# -- the keyword rule --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "evidence", "keywords"),
    [
        ("Border Collie", "my dog is a border collie", ["Border Collie"]),
        ("cello, Marta", "I play the cello. Marta teaches me.", ["cello", "Marta"]),
        ("Paris and Rome", "we flew to Rome", ["Rome"]),
        ("Yes", "yes, I am", []),
        ("\"Becoming Nicole\".", "she read Becoming Nicole", ["Becoming Nicole"]),
        ("next summer", "some other text", []),
    ],
)
def test_answer_keywords(answer, evidence, keywords):
    """Whole answer if in the evidence, else its parts that are; four characters at least."""
    assert answer_keywords(answer, evidence) == keywords


@pytest.mark.parametrize(
    ("answer", "text"), [(2022, "2022"), (3.0, "3"), (["cello", "piano"], "cello, piano"), (" Paris ", "Paris")]
)
def test_answer_text_of_numbers_and_lists(answer, text):
    """Numbers read as they print; a list answer becomes its parts joined, for the keyword rule to split."""
    assert answer_text(answer) == text


# -- malformed input ---------------------------------------------------------------------------


def broken(tmp_path: Path, source: Path, mutate) -> Path:
    data = json.loads(source.read_text())
    mutate(data)
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data))
    return path


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d[0]["qa"][1].pop("question"), "[0].qa[1].question: required field is missing"),
        (
            lambda d: d[0]["conversation"]["session_2"][1].update(text=7),
            "[0].conversation.session_2[1].text: expected a string, got integer",
        ),
        (lambda d: d[1]["qa"][0].update(evidence=[3]), '[1].qa[0].evidence[0]: expected a dia_id string such as "D3:5", got int'),
        (lambda d: d[1]["qa"][0].update(category="two"), "[1].qa[0].category: expected an integer, got string"),
        (lambda d: d[1].pop("conversation"), "[1].conversation: required field is missing"),
        (lambda d: d[0]["qa"][0].pop("answer"), "[0].qa[0].answer: required field is missing"),
    ],
)
def test_locomo_malformed_input_names_file_and_path(tmp_path, mutate, message):
    """A malformed LoCoMo file fails with file and JSON path, and writes nothing."""
    path = broken(tmp_path, LOCOMO, mutate)
    with pytest.raises(ImportFormatError) as info:
        import_corpus("locomo", path, tmp_path / "out")
    assert str(info.value) == f"{path}: {message}"
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d[0]["haystack_sessions"][1][0].pop("role"), "[0].haystack_sessions[1][0].role: required field is missing"),
        (
            lambda d: d[1]["haystack_sessions"][0][0].update(has_answer="yes"),
            "[1].haystack_sessions[0][0].has_answer: expected true or false, got string",
        ),
        (lambda d: d[2].update(haystack_sessions={}), "[2].haystack_sessions: expected an array, got object"),
        (lambda d: d[2].pop("question_type"), "[2].question_type: required field is missing"),
        (
            lambda d: d[0]["haystack_session_ids"].pop(),
            "[0].haystack_session_ids: 2 entries for 3 sessions; expected one per session",
        ),
        (lambda d: d[0]["haystack_dates"].append("x"), "[0].haystack_dates: 4 entries for 3 sessions; expected one per session"),
        (
            lambda d: d[0]["haystack_session_ids"].__setitem__(1, " "),
            "[0].haystack_session_ids[1]: expected a non-empty string, got a blank string",
        ),
        (
            lambda d: d[0]["haystack_dates"].__setitem__(2, 20230503),
            "[0].haystack_dates[2]: expected a non-empty string, got integer",
        ),
        (lambda d: d[0].update(haystack_session_ids="s0"), "[0].haystack_session_ids: expected an array, got string"),
        (lambda d: d[0].update(answer_session_ids=[1]), "[0].answer_session_ids[0]: expected a non-empty string, got integer"),
    ],
)
def test_longmemeval_malformed_input_names_file_and_path(tmp_path, mutate, message):
    """A malformed LongMemEval file fails with file and JSON path, and writes nothing."""
    path = broken(tmp_path, LONGMEMEVAL, mutate)
    with pytest.raises(ImportFormatError) as info:
        import_corpus("longmemeval", path, tmp_path / "out")
    assert str(info.value) == f"{path}: {message}"
    assert not (tmp_path / "out").exists()


def test_wrong_format_is_refused(tmp_path):
    """A LongMemEval file given as LoCoMo fails with a message that says what was expected."""
    with pytest.raises(ImportFormatError, match=r"\[0\].conversation: required field is missing"):
        import_corpus("locomo", LONGMEMEVAL, tmp_path / "out")


def test_invalid_json_is_one_line_error(tmp_path):
    """Invalid JSON: the CLI prints one line naming the file and position, exit 1."""
    path = tmp_path / "bad.json"
    path.write_text("[{")
    result = CliRunner().invoke(cli, ["import-corpus", "locomo", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: {path}: invalid JSON at line 1, column 3: Expecting property name enclosed in double quotes"
    ]


def test_non_empty_output_folder_is_left_alone(tmp_path):
    """An output folder that already holds files is refused untouched."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.json").write_text("{}")
    with pytest.raises(ImportFormatError, match="exists and is not empty"):
        import_corpus("locomo", LOCOMO, out)
    assert [p.name for p in out.iterdir()] == ["keep.json"]


def _without_source(corpus: Path) -> dict[str, bytes]:
    """Each file of an imported corpus, but for where it says it was imported from (the file's own name)."""
    found = {p.name: p.read_bytes() for p in corpus.iterdir()}
    for name in ("benchmark.json", "references.json"):
        text = found[name].decode()
        for source in ("locomo10.zip", "locomo10.json", "locomo_small.json"):
            text = text.replace(source, "FILE")
        found[name] = text.encode()
    return found


def test_locomo_zip_archive_imports_like_its_json(tmp_path):
    """Some LoCoMo revisions ship data/locomo10.zip: the one JSON inside imports exactly as the file itself."""
    import zipfile

    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(LOCOMO, "locomo10.json")
    from_zip, from_json = imported(tmp_path / "z", "locomo", archive), imported(tmp_path / "j", "locomo", LOCOMO)
    assert sorted(p.name for p in from_zip.iterdir()) == sorted(p.name for p in from_json.iterdir())
    assert _without_source(from_zip) == _without_source(from_json)


def test_zip_with_several_json_is_refused_for_longmemeval(tmp_path):
    """LongMemEval reads one JSON file: an archive holding several is one error naming the archive and them."""
    import zipfile

    archive = tmp_path / "two.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("a.json", "[]")
        zipped.writestr("b.json", "[]")
    with pytest.raises(
        ImportFormatError, match=r"two.zip: a zip archive must hold exactly one .json file; it holds a.json, b.json"
    ):
        import_corpus("longmemeval", archive, tmp_path / "out")


def test_zip_without_json_is_refused(tmp_path):
    """An archive holding no .json file is one error naming the archive."""
    import zipfile

    archive = tmp_path / "none.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("README.md", "no data here")
    with pytest.raises(ImportFormatError) as info:
        import_corpus("locomo", archive, tmp_path / "out")
    assert str(info.value) == f"{archive}: a zip archive must hold a .json file; it holds none"
    assert not (tmp_path / "out").exists()


MEMBERS = "data/multimodal_dialog/locomo10_v2"


def conversation_files(tmp_path: Path, mutate=lambda members: None) -> Path:
    """locomo_small.json as snap-research/locomo's zip lays it out: one file per conversation, its
    fields and qa at top level, no sample id; written 10.json before 2.json to test the order."""
    import zipfile

    samples = json.loads(LOCOMO.read_text())
    members = {
        f"{MEMBERS}/{stem}.json": {**sample["conversation"], "qa": sample["qa"]}
        for stem, sample in zip(("2", "10"), samples, strict=True)
    }
    mutate(members)
    archive = tmp_path / "locomo10.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(f"{MEMBERS}/", "")
        for name in reversed(list(members)):
            zipped.writestr(name, json.dumps(members[name]))
    return archive


def test_locomo_zip_of_conversation_files_imports_like_locomo10_json(tmp_path):
    """A zip of one file per conversation imports exactly as locomo10.json with those conversations, in numeric order."""
    import zipfile

    archive = conversation_files(tmp_path)
    with zipfile.ZipFile(archive) as zipped:
        flat = []
        for stem in ("2", "10"):
            conversation = json.loads(zipped.read(f"{MEMBERS}/{stem}.json"))
            flat.append({"sample_id": f"conv-{stem}", "qa": conversation.pop("qa"), "conversation": conversation})
    (tmp_path / "locomo10.json").write_text(json.dumps(flat))
    from_zip, from_json = (
        imported(tmp_path / "z", "locomo", archive),
        imported(tmp_path / "j", "locomo", tmp_path / "locomo10.json"),
    )
    assert sorted(p.name for p in from_zip.iterdir()) == [
        "000_conv-2.json",
        "001_conv-10.json",
        "benchmark.json",
        "references.json",
    ]
    assert _without_source(from_zip) == _without_source(from_json)


@pytest.mark.parametrize(
    ("mutate", "member", "message"),
    [
        (
            lambda m: m.__setitem__(f"{MEMBERS}/10.json", []),
            "10.json",
            "(top level): expected one LoCoMo conversation object (speaker_a, session_N, …, qa)",
        ),
        (
            lambda m: m.__setitem__(f"{MEMBERS}/2.json", {"qa": []}),
            "2.json",
            "(top level): no session_N lists; expected LoCoMo's conversation object",
        ),
        (
            lambda m: m[f"{MEMBERS}/2.json"]["session_2"][1].update(text=7),
            "2.json",
            "session_2[1].text: expected a string, got integer",
        ),
        (lambda m: m[f"{MEMBERS}/2.json"].update(session_1={}), "2.json", "session_1: expected an array, got object"),
        (lambda m: m[f"{MEMBERS}/10.json"].pop("qa"), "10.json", "qa: required field is missing"),
        (
            lambda m: m[f"{MEMBERS}/10.json"]["qa"][0].update(category="two"),
            "10.json",
            "qa[0].category: expected an integer, got string",
        ),
    ],
)
def test_locomo_zip_member_not_a_conversation_is_refused(tmp_path, mutate, member, message):
    """A malformed member of a conversation-per-file zip fails naming the archive, the member and the JSON path."""
    archive = conversation_files(tmp_path, mutate)
    with pytest.raises(ImportFormatError) as info:
        import_corpus("locomo", archive, tmp_path / "out")
    assert str(info.value) == f"{archive}!{MEMBERS}/{member}: {message}"
    assert not (tmp_path / "out").exists()
