"""Nothing silently wrong: secrets, judges' replies, importers, options, `evals serve`,
output guards and the divergences from the published code.

Each test is named for what must hold. The benchmark registry's and the compare page's cases have their tests
beside their own code (tests/benchmarks/test_benchmark_plugin_faults.py, tests/site/test_compare_js.py).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import CORPUS_SMALL, evals
from helpers.runs import evals_run

from evals.io.cache import cache_path_for

# A key holding every character an encoding changes: / + = % " \ &
KEY = 'sk-h41/key+with=every%char"that\\escapes&9z'


def _json_u(key: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in key)


ENCODINGS = {
    "percent_upper": lambda k: quote(k, safe=""),
    "percent_lower": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "html": lambda k: html.escape(k),
    "html_numeric": lambda k: "".join(f"&#x{ord(c):x};" for c in k),
    "base64": lambda k: base64.b64encode(k.encode()).decode(),
    "base64_shifted": lambda k: base64.b64encode(b"ab" + k.encode()).decode(),
    "base64url": lambda k: base64.urlsafe_b64encode(k.encode()).decode(),
}
# Forms written on the wire as JSON escapes: replaced in the body's text, not in its decoded values.
WIRE_ENCODINGS = {
    "json_u": _json_u,
    "json_slash": lambda k: json.dumps(k)[1:-1].replace("/", "\\/"),
}


def _forms(key: str) -> list[str]:
    """Every form of ``key`` the test looks for (base64 forms by the characters only the key's bits make)."""
    forms = [key, _json_u(key), *(encode(key) for name, encode in ENCODINGS.items() if "base64" not in name)]
    for prefix in (b"", b"a", b"ab"):
        encoded = base64.b64encode(prefix + key.encode()).decode()
        start = -(-8 * len(prefix) // 6)
        core = encoded[start : 8 * (len(prefix) + len(key)) // 6]
        forms += [core, core.replace("+", "-").replace("/", "_")]
    return forms


def _echoing(encoding: str):
    """A ``rewrite`` for the LLM server that puts the key, encoded, in every field a response has."""

    def rewrite(kind: str, text: str, key: str) -> str:
        payload = json.loads(text)
        if kind in ("embedding",):
            return text
        value = ENCODINGS[encoding](key) if encoding in ENCODINGS else key
        payload["id"] = f"chatcmpl-{value}"
        payload["model"] = f"gpt-{value}"
        payload["system_fingerprint"] = f"fp_{value}"
        payload["x_note"] = {value: [value]}
        content = payload["choices"][0]["message"]["content"]
        if kind == "judge":
            verdict = json.loads(content)
            verdict["reason"] = f"{verdict.get('reason', '')} (key {value})"
            content = json.dumps(verdict)
        else:
            content = f"{content} (key {value})"
        payload["choices"][0]["message"]["content"] = content
        out = json.dumps(payload)
        if encoding in WIRE_ENCODINGS:
            out = out.replace(json.dumps(key)[1:-1], WIRE_ENCODINGS[encoding](key))
        return out

    return rewrite


@pytest.mark.parametrize("encoding", [*ENCODINGS, *WIRE_ENCODINGS])
def test_key_echoed_in_any_encoding_in_any_field_is_masked(tmp_path: Path, server, encoding: str):
    """A key holding / + = % " \\ & echoed in each encoding through every field (id, model, fingerprint, an
    extra field, the answer, the judge's reason) reaches no file, cache entry, page or printed line."""
    server.rewrite = _echoing(encoding)
    store = tmp_path / "results.duckdb"
    result = evals_run(
        server, store, CORPUS_SMALL, "--with-answers", "--judge", "--concurrency", "1", "--output", tmp_path / "out.json",
        runner="recency", key=KEY,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = [result.output]
    for args in (["runs", "--store", store], ["leaderboard", "--store", store]):
        listed = evals(*args)
        assert listed.exit_code == 0, listed.output
        shown.append(listed.output)
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    forms = _forms(KEY)
    assert [f for text in shown for f in forms if f in text] == []
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert cache_path_for(store) in files
    assert [(p.name, f) for p in files for f in forms if f.encode() in p.read_bytes()] == []


# -- BEAM's judge replies ---------------------------------------------------------------------------------


def beams_own_reading(reply: str, ordering: bool) -> float | None:
    """The score BEAM's ``evaluate_<ability>`` counts for ``reply`` (src/evaluation/compute_metrics.py, copied with
    json_repair as it pins it); None where that code raises."""
    import re

    from json_repair import repair_json

    def parse_json_response(response: str):
        response = response.strip()
        if response.startswith("```"):
            match = re.search(r"```(?:json)?\s*(\[.*\]|\{.*\})\s*```", response, re.DOTALL)
            if match:
                response = match.group(1).strip()
        try:
            return json.loads(response)
        except json.JSONDecodeError:
            pass
        match = re.search(r"(\{.*?\}|\[.*?\])", response, re.DOTALL)
        if match:
            try:
                return json.loads(match.group(1))
            except Exception as e:
                raise ValueError(f"Found possible JSON but failed to parse it: {e}") from None
        raise ValueError("No valid JSON found in response.")

    response = reply.strip()
    try:
        try:
            data = parse_json_response(response=response)
        except Exception:
            data = json.loads(repair_json(response))
        return float(data["score"]) if ordering else float(int(data["score"]))
    except Exception:
        return None


@pytest.mark.parametrize(
    ("reply", "counted", "ordering"),
    [
        ('{"score": 1e-1, "reason": "barely",}', 0.0, 0.1),
        ('{"partial_score": 1, "score": 0,}', 0.0, 0.0),
        ('{"reason": "a score: 1 would be generous", "score": 0,}', 0.0, 0.0),
        ('I would say "score": 1/2 here', None, None),
        ('```json\n{"score": 1,\n "reason": "all\nthere",}\n```', 1.0, 1.0),
    ],
)
def test_trailing_comma_reply_reads_as_json_repair_does(reply: str, counted, ordering):
    """A reply that is not JSON (a trailing comma) is scored as BEAM's json_repair fallback scores it, never by a
    number found elsewhere in it; where BEAM's code raises, it is unparsed."""
    from evals.benchmarks.beam.protocol import read_score

    assert read_score(reply) == counted and read_score(reply, ordering=True) == ordering


def _judge_replies(draw) -> str:
    """A judge reply as a careless model writes one: prose, fences, trailing commas, odd numbers, several objects."""
    numbers = ["0", "1", "0.5", "1.0", "1e-1", "1.5", "true", "false", '"1"', '"0.5"', "null", "-1", "2", "NaN", ".5", "01"]
    reasons = ["ok", "a score: 1", "x, y", 'q\\"}']
    members = [f'"score": {draw.choice(numbers)}', f'"reason": "{draw.choice(reasons)}"']
    members += draw.sample(['"partial_score": 1', '"Score": 1', '"notes": [1, 2,]', '"n": {"score": 1}'], draw.randint(0, 2))
    draw.shuffle(members)
    comma = draw.choice([",", ", ", ",\n", ""])
    body = "{" + ", ".join(members) + comma + "}"
    if draw.random() < 0.1:
        body = body[:-1]
    if draw.random() < 0.1:
        body = body.replace('"score"', "'score'")
    prefix = draw.choice(["", "Here it is: ", "```json\n", "The [rubric] item: ", 'I say "yes": ', "```\n"])
    suffix = draw.choice(["", " Done.", "\n```", ' {"score": 0}', " [1]", " it's fine"])
    return prefix + body + suffix


def test_every_score_read_is_the_one_beams_code_reads():
    """On 3,000 drawn replies, every score read equals what BEAM's code (json_repair 0.44.1) counts; the rest are unparsed,
    and most of the replies BEAM's code scores are read."""
    pytest.importorskip("json_repair")
    import random

    from evals.benchmarks.beam.protocol import read_score

    draw = random.Random(41)
    read = scored = 0
    for _ in range(3000):
        reply = _judge_replies(draw)
        for ordering in (False, True):
            theirs, ours = beams_own_reading(reply, ordering), read_score(reply, ordering)
            in_range = theirs is not None and 0 <= theirs <= 1
            assert ours == (theirs if in_range else None), (reply, ordering, ours, theirs)
            scored += theirs is not None and 0 <= theirs <= 1
            read += ours is not None
    assert read > 0.6 * scored


@pytest.mark.parametrize(
    ("reply", "counted", "ordering"),
    [
        ('{"score": 1.5}', 1.0, None),
        ('{"score": 0.9}', 0.0, 0.9),
        ('{"score": true}', 1.0, 1.0),
        ('{"score": "1"}', 1.0, 1.0),
        ("Score: 1.0", None, None),
        ('{"Score": 1}', None, None),
        ("[1]", None, None),
        ('[{"score": 1}]', None, None),
        ('The verdict is "score": 1, clearly.', None, None),
        ('{"score": NaN}', None, None),
        ('{"score": 2}', None, None),
    ],
)
def test_scores_are_counted_as_beams_code_counts_them(reply: str, counted, ordering):
    """int(score) for every ability (1.5 is 1, true is 1), float(score) for event ordering; shapes BEAM's code cannot
    score (a bare ``Score:``, a ``"Score"`` key, a list, prose) and numbers outside 0-1 are unparsed."""
    from evals.benchmarks.beam.protocol import read_score

    assert read_score(reply) == counted and read_score(reply, ordering=True) == ordering


def _beam(embed):
    """BEAM's protocol over stand-in templates the LLM server answers, event ordering aligned by ``embed``."""
    from evals.benchmarks.beam.protocol import BeamProtocol

    class Beam(BeamProtocol):
        pass

    Beam.embed = staticmethod(embed)
    judge = "[BEAM-JUDGE]\nCriterion: <rubric_item>\nResponse: <llm_response>\nEnd of response."
    return Beam({"answer": "<context>\nQuestion: <question>?", "judge": judge, "event_ordering_threshold": "0.65"})


def _one_hot(texts: list[str]):
    """Equal texts the same unit vector, different ones (almost always) orthogonal, whatever the call."""
    import zlib

    import numpy as np

    vectors = np.zeros((len(texts), 1 << 16))
    for row, text in enumerate(texts):
        vectors[row, zlib.crc32(text.encode()) & 0xFFFF] = 1.0
    return vectors


EVENTS = ("alpha launch", "beta testing", "gamma release")


def test_event_ordering_embeds_a_bounded_number_of_lines():
    """An answer of 5,000 lines embeds at most MAX_ALIGNED_LINES of them; the rest count as unmatched, the reason says
    so, and the figures are those of the published formula over every line."""
    from evals.benchmarks.beam.protocol import MAX_ALIGNED_LINES
    from evals.benchmarks.protocols import AskedPoint

    sizes: list[int] = []

    def embed(texts: list[str]):
        sizes.append(len(texts))
        return _one_hot(texts)

    point = AskedPoint("c", 3, "In what order?", "", [], [], category="event_ordering", rubric=EVENTS)
    lines = [*EVENTS, *(f"filler {n}" for n in range(5000))]
    grade = _beam(embed).grade(point, "\n".join(lines), ['{"score": 1}'] * 3)
    assert max(sizes) <= MAX_ALIGNED_LINES
    assert f"past the first {MAX_ALIGNED_LINES} were not aligned" in grade.reason
    assert "recall 1.000" in grade.reason and grade.score is not None and grade.score > 0.5


def test_kendall_tau_b_of_long_rankings_is_scipys():
    """Kendall's tau-b of rankings of 3,000 items with ties (what a long answer makes) agrees with scipy's."""
    import random

    scipy = pytest.importorskip("scipy.stats")
    from evals.benchmarks.beam.protocol import kendall_tau_b

    draw = random.Random(7)
    x = [draw.randint(1, 40) for _ in range(3000)]
    y = [draw.randint(1, 3001) for _ in range(3000)]
    assert kendall_tau_b(x, y) == pytest.approx(scipy.kendalltau(x, y, variant="b").statistic, abs=1e-12)


def test_call_timeout_covers_scoring(server):
    """Scoring that never ends (an alignment stuck for a minute) stops at --call-timeout with one line naming the point."""
    import time

    from evals.benchmarks.protocols import AskedPoint
    from evals.run.llm import ChatClient, LLMError, answer_run

    def stuck(texts: list[str]):
        time.sleep(60)

    point = AskedPoint("c", 3, "In what order", "", [], [], category="event_ordering", rubric=EVENTS)
    client = ChatClient(base_url=server.base_url, api_key="sk-test")
    started = time.monotonic()
    try:
        with pytest.raises(LLMError, match=r"conversation 'c', turn 3: scoring by protocol beam gave no result within"):
            answer_run(client, [[point]], answer_model="m", judge_model="j", protocol=_beam(stuck), call_timeout=0.5)
    finally:
        client.close()
    assert time.monotonic() - started < 60


# -- importers ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("gap", ["9999 years later", "99999999999 weeks later"])
def test_locomo_plus_time_gap_that_overflows_is_refused_in_one_line(tmp_path: Path, gap: str):
    """A ``time_gap`` reaching before the year 1 is refused with one line naming the item's field, no traceback."""
    from helpers.errors import one_line_error
    from helpers.graded import PLUS_ITEMS, plus_folder

    folder = plus_folder(tmp_path / "plus")
    items = [dict(item) for item in PLUS_ITEMS]
    items[1]["time_gap"] = gap
    (folder / "locomo_plus.json").write_text(json.dumps(items))
    line = one_line_error(evals("import-corpus", "locomo_plus", folder, "--out", tmp_path / "out"))
    assert "[1].time_gap" in line and "year 1" in line


@pytest.mark.parametrize("name", ["²", "٣"])
def test_beam_folder_named_like_a_digit_is_refused_in_one_line(tmp_path: Path, name: str):
    """A conversation folder whose name Python calls digits but int() refuses (or reads as another number) is refused
    with one line naming it, no traceback."""
    from helpers.errors import one_line_error
    from helpers.graded import beam_tier

    tier = beam_tier(tmp_path / "BEAM")
    (tier / name).mkdir()
    line = one_line_error(evals("import-corpus", "beam", tier, "--out", tmp_path / "out"))
    assert repr(name) in line and "ASCII digits" in line


# -- evals serve --------------------------------------------------------------------------------------------


def _status(port: int, request_line: str) -> str:
    """The status line the server answers ``request_line`` with ("" when it answers nothing)."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(f"{request_line}\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode("latin-1"))
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    return reply.decode("latin-1").split("\r\n", 1)[0]


def test_serve_gives_only_real_files_inside_the_site_and_answers_every_request(tmp_path: Path):
    """`evals serve`: a symlink out of the site (to a file or a folder) is 404, a folder without index.html is not
    listed, a NUL in the path gets a status line; no traceback on stderr. The site's own files are served."""
    import re
    import subprocess
    import sys

    site, outside = tmp_path / "site", tmp_path / "private"
    (site / "empty").mkdir(parents=True)
    outside.mkdir()
    (site / "index.html").write_text("<p>site</p>")
    (outside / "secret.txt").write_text("secret")
    (site / "leak.txt").symlink_to(outside / "secret.txt")
    (site / "away").symlink_to(outside)
    (site / "inside.html").symlink_to(site / "index.html")
    code = "from evals.cli import main; main(['serve', '--dir', %r, '--port', '0'])" % str(site)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r"127\.0\.0\.1:(\d+)/", process.stdout.readline()).group(1))
        asked = {
            "GET /index.html HTTP/1.1": "200",
            "GET /inside.html HTTP/1.1": "200",
            "GET /leak.txt HTTP/1.1": "404",
            "GET /away/secret.txt HTTP/1.1": "404",
            "GET /away/ HTTP/1.1": "404",
            "GET /empty/ HTTP/1.1": "404",
            "GET /index.html%00.txt HTTP/1.1": "404",
            "GET /%ff%fe HTTP/1.1": "404",
            "GET /../private/secret.txt HTTP/1.1": "404",
        }
        answered = {line: _status(port, line) for line in asked}
    finally:
        process.terminate()
        _, err = process.communicate(timeout=30)
    assert {line: status.split(" ")[1] if status else "" for line, status in answered.items()} == asked
    assert "Traceback" not in err


# -- options read ASCII digits only -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--k", "٣"],
        ["run", "--seed", "٤٢"],
        ["run", "--concurrency", "²"],
        ["run", "--max-retries", "١"],
        ["run", "--request-timeout", "٣٠"],
        ["run", "--call-timeout", "٣"],
        ["run", "--max-unparsed", "٠.5"],
        ["serve", "--port", "٨٠٠٠"],
    ],
    ids=lambda args: args[1],
)
def test_options_refuse_digits_that_are_not_ascii(tmp_path: Path, args: list[str]):
    """Every number option reads ASCII digits only, as docs/cli.md says: another script's digits are a usage error."""
    from helpers.errors import usage_error

    store = tmp_path / "s.duckdb"
    extra = ["--corpus", str(CORPUS_SMALL), "--store", str(store)] if args[0] == "run" else ["--dir", str(tmp_path)]
    line = usage_error(evals(*args, *extra))
    assert args[1] in line and "ASCII" in line
    assert not (tmp_path / "s.duckdb").exists()


# -- the --output guards, and their bounded reads ------------------------------------------------------------------------


def test_output_guard_estimates_bytes_as_written_escapes_included(tmp_path: Path):
    """Turns of control characters (six bytes each once JSON-escaped) and of other scripts: full_history's document as
    written is within a fifth of what the guard estimates, where it was 6x the estimate."""
    from helpers.corpora import conversation

    from evals.run.evaluate import RunConfig, evaluate
    from evals.views.compact import texts_bytes

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    data = conversation("c1")
    data["turns"] = [{"role": "user", "content": ("\x01\x02\x1f" * 300) + ("é漢" * 100)} for _ in range(40)] + data["turns"]
    (corpus / "c1.json").write_text(json.dumps(data))
    output = tmp_path / "out.json"
    result = evals("run", "--runner", "full_history", "--corpus", corpus, "--store", tmp_path / "s.duckdb", "--output", output)
    assert result.exit_code == 0, result.output
    estimate = texts_bytes(evaluate(RunConfig(strategy="full_history", corpus=corpus)).run)
    assert 0.8 < output.stat().st_size / estimate < 1.2


def _bytes_read() -> int:
    """The bytes this process has read so far (Linux's /proc/self/io ``rchar``: every read and pread)."""
    text = Path("/proc/self/io").read_text()
    return int(next(line.split()[1] for line in text.splitlines() if line.startswith("rchar:")))


def test_output_check_reads_a_bounded_prefix_of_each_file(tmp_path: Path):
    """The --output check of a folder holding 60 MB *.json files (one naming ``turns`` and ``schema_version`` up
    front) reads only their first bytes, and still tells a large conversation from another JSON file."""
    if not Path("/proc/self/io").exists():
        pytest.skip("needs /proc/self/io (Linux)")
    from evals.errors import EvalsError
    from evals.io.outputs import check_output

    folder = tmp_path / "folder"
    folder.mkdir()
    filler = ", ".join(["1"] * 10_000_000)
    (folder / "a.json").write_text('{"results": [' + filler + "]}")
    (folder / "b.json").write_text('{"note": "\\"turns\\": and \\"schema_version\\": quoted", "n": [' + filler + "]}")
    before = _bytes_read()
    check_output(folder / "out.json", option="--output")
    assert _bytes_read() - before < 5_000_000
    long = tmp_path / "long"
    long.mkdir()
    data = {"schema_version": "1", "id": "c", "description": "d", "turns": [{"role": "user", "content": "x" * 100}] * 2000}
    (long / "c.json").write_text(json.dumps(data))
    with pytest.raises(EvalsError, match="conversation"):
        check_output(long / "out.json", option="--output")


def test_a_folder_of_large_exports_is_no_corpus(tmp_path: Path):
    """A large *.json naming ``turns`` up front but no ``schema_version`` (an export, a result document) does not
    make its folder a corpus: a second output may be written beside it."""
    from evals.io.outputs import check_output

    turns = [{"role": "user", "content": "x" * 100}] * 2000
    (tmp_path / "run-a.json").write_text(json.dumps({"format": "export", "conversations": [{"turns": turns}]}))
    check_output(tmp_path / "run-b.json", option="--output")


# -- divergences from the published code ---------------------------------------------------------------


def test_locomo_answer_keeps_its_leading_whitespace(tmp_path: Path):
    """conv-30's ' 23 July, 2023': the imported expected fact is the answer as the file writes it (the published
    prompts put it in so), and the corpus validates."""
    from helpers import FIXTURES

    from evals.benchmarks.locomo.importer import import_locomo
    from evals.model.corpus import load_corpus

    data = json.loads((FIXTURES / "importers" / "locomo_small.json").read_text())
    data[0]["qa"][2]["answer"] = " 23 July, 2023"
    (tmp_path / "locomo.json").write_text(json.dumps(data))
    import_locomo(tmp_path / "locomo.json", tmp_path / "corpus")
    points = [p for c in load_corpus(tmp_path / "corpus").conversations for _, p in c.test_points()]
    (point,) = [p for p in points if p.question == data[0]["qa"][2]["question"]]
    assert point.expected_fact == " 23 July, 2023"
    assert evals("validate", tmp_path / "corpus").exit_code == 0


def _plus_protocol():
    from evals.benchmarks.locomo_plus.protocol import LoCoMoPlusProtocol

    templates = {f"judge:{name}": f"[{name}] gold=<{{gold}}> pred=<{{pred}}>" for name in
                 ("multi-hop", "temporal", "common-sense", "single-hop", "adversarial", "Cognitive", "default")}  # fmt: skip
    return LoCoMoPlusProtocol({**templates, "CONV_START_PROMPT": "{} and {}: "})


@pytest.mark.parametrize(
    ("category", "template"),
    [("1 multi-hop", "multi-hop"), ("2 temporal", "temporal"), ("3 open-domain", "common-sense"),
     ("4 single-hop", "single-hop"), ("5 adversarial", "adversarial"), ("Cognitive", "Cognitive"), ("other", "default")],
)  # fmt: skip
def test_locomo_plus_judges_locomo_categories_by_unified_inputs_map(category: str, template: str):
    """`--protocol locomo_plus` on a LoCoMo corpus: a question's category number picks LoCoMo-Plus's template as
    data/unified_input.py names it (2 -> temporal, 3 -> common-sense), not the default one."""
    from evals.benchmarks.protocols import AskedPoint

    point = AskedPoint("c", 3, "When?", "May 2023", [], [], category=category)
    (message,) = _plus_protocol().judge_request(point, "in May").messages
    assert message["content"].startswith(f"A and B: [{template}]")


def test_locomo_plus_sends_an_adversarial_question_an_empty_gold():
    """A LoCoMo category-5 question has no "answer" in unified_input.py, so its gold is empty, not the importer's
    "no answer in the conversation (adversarial answer: …)"."""
    from evals.benchmarks.protocols import AskedPoint

    fact = "no answer in the conversation (adversarial answer: a red bike)"
    point = AskedPoint("c", 3, "What bike?", fact, [], [], answerable=False, category="5 adversarial")
    (message,) = _plus_protocol().judge_request(point, "Not mentioned.").messages
    assert "gold=<>" in message["content"] and "red bike" not in message["content"]


def _longmemeval_turn2session(rankings, correct_docs, corpus_ids, k):
    """LongMemEval's evaluate_retrieval_turn2session (src/retrieval/eval_utils.py), copied (numpy's asfarray as
    np.asarray(float), which numpy 2 dropped)."""
    import numpy as np

    def dcg(relevances, k):
        relevances = np.asarray(relevances, dtype=float)[:k]
        if relevances.size:
            return relevances[0] + np.sum(relevances[1:] / np.log2(np.arange(2, relevances.size + 1)))
        return 0.0

    def ndcg(rankings, correct_docs, corpus_ids, k=10):
        relevances = [1 if doc_id in correct_docs else 0 for doc_id in corpus_ids]
        sorted_relevances = [relevances[idx] for idx in rankings[:k]]
        ideal_relevance = sorted(relevances, reverse=True)
        ideal_dcg = dcg(ideal_relevance, k)
        return 0.0 if ideal_dcg == 0 else dcg(sorted_relevances, k) / ideal_dcg

    def evaluate_retrieval(rankings, correct_docs, corpus_ids, k=10):
        recalled_docs = set(corpus_ids[idx] for idx in rankings[:k])
        recall_any = float(any(doc in recalled_docs for doc in correct_docs))
        recall_all = float(all(doc in recalled_docs for doc in correct_docs))
        return recall_any, recall_all, ndcg(rankings, correct_docs, corpus_ids, k)

    def strip_turn_id(docid):
        return "_".join(docid.split("_")[:-1])

    correct_docs = list(set([strip_turn_id(x) for x in correct_docs]))
    corpus_ids = [strip_turn_id(x) for x in corpus_ids]
    effective_k = k
    unique_docids = set(corpus_ids[idx] for idx in rankings[:effective_k])
    while effective_k <= len(corpus_ids) and len(unique_docids) < k:
        effective_k += 1
        unique_docids = set(corpus_ids[idx] for idx in rankings[:effective_k])
    return evaluate_retrieval(rankings, correct_docs, corpus_ids, k=effective_k)


def test_turn2session_is_longmemevals_own_form():
    """On 500 drawn haystacks (turn ids as run_retrieval.py names them: answer_…, noans_…), the turn2session metric
    gives what LongMemEval's evaluate_retrieval_turn2session gives, recall and NDCG, at k 1, 5 and 10."""
    import random

    from evals.judge.retrieval import turn2session
    from evals.model.results import TestPointResult

    draw = random.Random(17)
    for _ in range(500):
        sessions = [f"answer_{n}" if n < draw.randint(1, 2) else f"s{n}" for n in range(draw.randint(2, 8))]
        turns, ids, evidence = [], [], []
        for session in sessions:
            for number in range(1, draw.randint(2, 5)):
                has_answer = session.startswith("answer") and (number == 1 or draw.random() < 0.3)
                turn = len(turns)
                turns.append(session)
                named = session if has_answer or "answer" not in session else session.replace("answer", "noans")
                ids.append(f"{named}_{number}")
                evidence += [turn] if has_answer else []
        ranking = list(range(len(turns)))
        draw.shuffle(ranking)
        point = TestPointResult(
            turn_index=0, question="q", expected_fact="f", expected_keywords=[], retrieved_records=[],
            evidence_turns=evidence, evidence_sessions=sorted({turns[t] for t in evidence}),
            ranked_turns=ranking, ranked_sessions=[turns[t] for t in ranking],
        )  # fmt: skip
        correct = [ids[t] for t in evidence]
        for k in (1, 5, 10):
            theirs = _longmemeval_turn2session(ranking, correct, ids, k)
            assert turn2session(point, k) == pytest.approx(theirs, abs=1e-12), (ids, ranking, k)
