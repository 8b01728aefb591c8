"""`evals benchmarks` and `evals fetch`: pinned downloads through a real local HTTP server.

The server (stdlib ``http.server`` in a thread, on 127.0.0.1) stands in for the benchmarks' hosts
through ``$EVALS_MIRROR``. Stand-in files cannot have the published digests, so each test puts the
stand-in's size and SHA-256 in the registry entry it fetches (data, not code: the download, the
checks and the import are the real ones). Every failure must leave the downloads folder exactly as
it was. Nothing here reaches the network: every test sets a mirror on loopback or a local folder.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT
from helpers.benchmark_server import BenchmarkServer

from evals.benchmarks import BENCHMARKS, FETCHED_NOTE, SourceFile, benchmark
from evals.cli import cli
from evals.model.corpus import load_corpus

FIXTURES = ROOT / "tests" / "fixtures" / "importers"
LOCOMO = (FIXTURES / "locomo_small.json").read_bytes()
LONGMEMEVAL = (FIXTURES / "longmemeval_small.json").read_bytes()
JUDGE = b"# a stand-in for mem0's evaluation/metrics/llm_judge.py\nPROMPT = 'x'\n"
PROMPTS = b"# a stand-in for mem0's evaluation/prompts.py\nANSWER_PROMPT = 'y'\n"
GPT_UTILS = b"# a stand-in for LoCoMo's task_eval/gpt_utils.py\nQA_PROMPT = 'z'\n"
EVALUATION = b"# a stand-in for LoCoMo's task_eval/evaluation.py\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def server() -> Iterator[BenchmarkServer]:
    with BenchmarkServer() as running:
        yield running


def base(server: BenchmarkServer, mode: str = "ok") -> str:
    return server.mirror(mode)


@pytest.fixture
def locomo(monkeypatch, server) -> BenchmarkServer:
    """The locomo entry pinned to the stand-in file, its two mem0 and two LoCoMo sources pinned to stand-ins, all served."""
    entry = BENCHMARKS["locomo"]
    bodies = (JUDGE, PROMPTS, GPT_UTILS, EVALUATION)
    sources = tuple(replace(source, sha256=sha(body)) for source, body in zip(entry.sources, bodies, strict=True))
    monkeypatch.setitem(
        BENCHMARKS, "locomo", replace(entry, data=replace(entry.data, sha256=sha(LOCOMO), size=len(LOCOMO)), sources=sources)
    )
    server.files.update({"locomo10.json": LOCOMO, **{s.relative: body for s, body in zip(sources, bodies, strict=True)}})
    return server


def test_without_a_mirror_the_pinned_url_is_asked_and_nothing_leaves_this_machine(env):
    """No $EVALS_MIRROR: the fetch goes to the pinned URL (here through a proxy that does not exist), fails
    with one line naming it, and leaves nothing behind."""
    result = CliRunner().invoke(cli, ["fetch", "locomo"])
    assert result.exit_code == 1
    assert "Error: https://raw.githubusercontent.com/snap-research/LoCoMo/" in result.output and "cannot connect" in result.output
    assert not env["downloads"].exists()


def invoke(*args: str, mirror: str | None = None):
    extra = {"EVALS_MIRROR": mirror} if mirror is not None else {}
    return CliRunner().invoke(cli, list(args), env=extra, catch_exceptions=False)


def snapshot(folder: Path) -> dict[str, str | None]:
    """Every file (hidden ones too) and folder under ``folder``: a file as its digest, a folder as None."""
    if not folder.exists():
        return {}
    return {
        str(p.relative_to(folder)): (sha(p.read_bytes()) if p.is_file() else None) for p in sorted(folder.rglob("*"))
    }


# -- success ----------------------------------------------------------------------------------------


def test_fetch_locomo_downloads_checks_imports_and_lists_it(locomo, env):
    """fetch stores the file and the mem0 sources at their repository paths, imports the corpus,
    and `evals benchmarks` then says it is fetched, with its license."""
    result = invoke("fetch", "locomo", mirror=base(locomo))
    assert result.exit_code == 0, result.output
    downloads = env["downloads"]
    assert (downloads / "locomo" / "locomo10.json").read_bytes() == LOCOMO
    commit = BENCHMARKS["locomo"].sources[0].commit
    judge = downloads / "sources" / "mem0ai" / "mem0" / commit / "evaluation" / "metrics" / "llm_judge.py"
    assert judge.read_bytes() == JUDGE
    gpt_utils = (
        downloads / "sources" / "snap-research" / "LoCoMo" / BENCHMARKS["locomo"].sources[2].commit / "task_eval" / "gpt_utils.py"
    )
    assert gpt_utils.read_bytes() == GPT_UTILS
    corpus = downloads / "corpora" / "locomo"
    assert len(load_corpus(corpus).conversations) == 2
    assert f"corpus: {corpus}" in result.output and "CC BY-NC 4.0 (non-commercial)" in result.output
    assert "imported" in result.output and "pinned" in result.output

    listing = json.loads(invoke("benchmarks", "--format", "json").output)
    row = next(r for r in listing if r["name"] == "locomo")
    assert row["fetched"] == "yes" and row["corpus"] == str(corpus) and row["non_commercial"] is True
    text = invoke("benchmarks").output
    assert "CC BY-NC 4.0 (non-commercial)" in text and f"corpus {corpus}" in text


def test_a_second_fetch_reuses_the_checked_copy_and_the_corpus(locomo, env):
    assert invoke("fetch", "locomo", mirror=base(locomo)).exit_code == 0
    before = snapshot(env["downloads"])
    locomo.requests.clear()
    result = invoke("fetch", "locomo", mirror=base(locomo))
    assert result.exit_code == 0, result.output
    assert locomo.requests == []  # nothing asked of the server
    assert "already in the downloads folder" in result.output and "imported before from the same file" in result.output
    assert snapshot(env["downloads"]) == before


def test_a_redirect_is_followed(locomo, env):
    result = invoke("fetch", "locomo", mirror=base(locomo, "redirect"))
    assert result.exit_code == 0, result.output
    assert "/redirect/locomo10.json" in locomo.requests and "/ok/locomo10.json" in locomo.requests
    assert (env["downloads"] / "locomo" / "locomo10.json").read_bytes() == LOCOMO


def test_corpus_out_names_the_corpus_folder(locomo, env, tmp_path):
    out = tmp_path / "corpora" / "lc"
    result = invoke("fetch", "locomo", "--corpus-out", str(out), mirror=base(locomo))
    assert result.exit_code == 0, result.output
    assert (out / FETCHED_NOTE).is_file() and len(load_corpus(out).conversations) == 2
    assert not (env["downloads"] / "corpora").exists()


def test_a_local_folder_mirror_serves_by_published_name_or_alias(monkeypatch, env, tmp_path):
    """A folder as the mirror; longmemeval_s is published without an extension, and a copy named
    longmemeval_s.json is found too. Its first download is recorded in the lock (trust on first use)."""
    mirror = tmp_path / "mirror"
    entry = BENCHMARKS["longmemeval_s"]
    for source in entry.sources:
        (mirror / source.relative).parent.mkdir(parents=True, exist_ok=True)
        (mirror / source.relative).write_bytes(b"# stand-in\n")
    monkeypatch.setitem(
        BENCHMARKS, "longmemeval_s", replace(entry, sources=tuple(replace(s, sha256=sha(b"# stand-in\n")) for s in entry.sources))
    )
    (mirror / "longmemeval_s.json").write_bytes(LONGMEMEVAL)
    result = invoke("fetch", "longmemeval_s", mirror=str(mirror))
    assert result.exit_code == 0, result.output
    assert (env["downloads"] / "longmemeval_s" / "longmemeval_s").read_bytes() == LONGMEMEVAL
    lock = json.loads(env["lock"].read_text())
    recorded = lock["files"][entry.data.url]
    assert recorded["size"] == len(LONGMEMEVAL) and recorded["sha256"] == sha(LONGMEMEVAL)
    assert recorded["downloaded_from"] == str(mirror / "longmemeval_s.json")
    assert "trust on first use" in result.output


# -- trust on first use ------------------------------------------------------------------------------


@pytest.fixture
def oracle(monkeypatch, server) -> BenchmarkServer:
    entry = BENCHMARKS["longmemeval_oracle"]
    stand_in = b"# stand-in\n"
    sources = tuple(replace(s, sha256=sha(stand_in)) for s in entry.sources)
    monkeypatch.setitem(BENCHMARKS, "longmemeval_oracle", replace(entry, sources=sources))
    server.files.update({"longmemeval_oracle.json": LONGMEMEVAL, **{s.relative: stand_in for s in sources}})
    return server


def test_a_hub_file_is_locked_on_first_use_and_held_to_afterwards(oracle, env):
    """The first download writes the lock; `evals benchmarks` shows it as trust on first use; a later
    fetch of other bytes (here into a fresh downloads folder) is refused and leaves everything as it was."""
    assert invoke("fetch", "longmemeval_oracle", mirror=base(oracle)).exit_code == 0
    lock_text = env["lock"].read_text()
    assert sha(LONGMEMEVAL) in lock_text
    row = next(r for r in json.loads(invoke("benchmarks", "--format", "json").output) if r["name"] == "longmemeval_oracle")
    assert row["pin"].startswith("locked on first use")

    oracle.files["longmemeval_oracle.json"] = LONGMEMEVAL.replace(b"Border Collie", b"Border Collix")
    fresh = env["downloads"].parent / "fresh"
    result = CliRunner().invoke(
        cli, ["fetch", "longmemeval_oracle", "--downloads", str(fresh)], env={"EVALS_MIRROR": base(oracle)}
    )
    assert result.exit_code != 0 and "does not match the pinned" in result.output
    assert not fresh.exists() and env["lock"].read_text() == lock_text


# -- failures leave the downloads folder as it was ------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("truncated", "truncated"),  # the connection closes halfway through the announced length
        ("corrupt", "does not match the pinned"),  # the right size, other bytes
        ("missing", "HTTP 404"),  # nothing there
        ("loop", "HTTP 302"),  # a redirect to itself: given up, not followed for ever
    ],
)
def test_a_failed_download_leaves_the_downloads_folder_as_it_was(locomo, env, mode, message):
    """Once on an empty downloads folder, once on one holding an earlier fetch: nothing added, nothing changed."""
    first = CliRunner().invoke(cli, ["fetch", "locomo"], env={"EVALS_MIRROR": base(locomo, mode)})
    assert first.exit_code == 1 and message in first.output, first.output
    assert [line for line in first.output.splitlines() if not line.startswith("downloading ")] == [
        f"Error: {first.output.split('Error: ', 1)[1].strip()}"
    ]  # one line says what went wrong
    assert snapshot(env["downloads"]) == {}

    assert invoke("fetch", "locomo", mirror=base(locomo)).exit_code == 0
    (env["downloads"] / "locomo" / "locomo10.json").write_bytes(b"damaged")  # so the next fetch downloads again
    before = snapshot(env["downloads"])
    again = CliRunner().invoke(cli, ["fetch", "locomo"], env={"EVALS_MIRROR": base(locomo, mode)})
    assert again.exit_code == 1 and message in again.output
    assert snapshot(env["downloads"]) == before


def test_a_source_file_with_another_digest_is_refused(locomo, env):
    """The evaluation sources are held to their pinned digests as the data file is (the corpus, imported
    before them, stays: retrieval needs no judge template)."""
    locomo.files[BENCHMARKS["locomo"].sources[1].relative] = PROMPTS + b"# edited\n"
    result = CliRunner().invoke(cli, ["fetch", "locomo"], env={"EVALS_MIRROR": base(locomo)})
    assert result.exit_code == 1 and "prompts.py" in result.output and "does not match the pinned" in result.output
    assert not (
        env["downloads"] / "sources" / "mem0ai" / "mem0" / BENCHMARKS["locomo"].sources[1].commit / "evaluation" / "prompts.py"
    ).exists()
    assert (env["downloads"] / "corpora" / "locomo" / FETCHED_NOTE).is_file()  # the corpus needs no template


def test_a_copy_here_that_does_not_match_is_downloaded_again(locomo, env):
    assert invoke("fetch", "locomo", mirror=base(locomo)).exit_code == 0
    (env["downloads"] / "locomo" / "locomo10.json").write_bytes(b"[]")
    result = invoke("fetch", "locomo", mirror=base(locomo))
    assert result.exit_code == 0 and "does not match its pin" in result.output
    assert (env["downloads"] / "locomo" / "locomo10.json").read_bytes() == LOCOMO


def test_a_corpus_folder_holding_something_else_is_never_overwritten(locomo, env, tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["fetch", "locomo", "--corpus-out", str(out)], env={"EVALS_MIRROR": base(locomo)})
    assert result.exit_code == 1 and "is not the import of this locomo10.json" in result.output
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_a_benchmark_that_is_not_importable_is_refused_before_any_download(server, env):
    result = CliRunner().invoke(cli, ["fetch", "convomem"], env={"EVALS_MIRROR": base(server)})
    assert result.exit_code == 1 and "not importable yet" in result.output and "message text" in result.output
    assert server.requests == [] and not env["downloads"].exists()


def test_an_unknown_name_lists_the_known_ones(env):
    result = CliRunner().invoke(cli, ["fetch", "locomoo"])
    assert result.exit_code == 1 and "no benchmark called 'locomoo'" in result.output and "longmemeval_s_cleaned" in result.output


def test_a_mirror_that_is_neither_a_url_nor_a_folder_is_named(env, tmp_path):
    result = CliRunner().invoke(cli, ["fetch", "locomo"], env={"EVALS_MIRROR": str(tmp_path / "nowhere")})
    assert result.exit_code == 1 and "EVALS_MIRROR" in result.output and "nowhere" in result.output


# -- the registry --------------------------------------------------------------------------------------


def test_the_registry_holds_the_published_pins():
    """LoCoMo's file and the judge sources are pinned as published; the hub files rely on the lock."""
    locomo = benchmark("locomo")
    assert (locomo.data.size, locomo.data.sha256) == (
        2_805_274,
        "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4",
    )
    assert locomo.data.url.startswith("https://raw.githubusercontent.com/snap-research/LoCoMo/")
    assert locomo.non_commercial
    pins = {(s.repo, s.path): (s.commit, s.sha256) for b in BENCHMARKS.values() for s in b.sources}
    assert pins[("xiaowu0162/LongMemEval", "src/evaluation/evaluate_qa.py")] == (
        "9e0b455f4ef0e2ab8f2e582289761153549043fc", "ecce9c4c79dc89d99534ac17b383a5cbb5b9f0c69ee98adaf0684742e3d95251")
    assert pins[("mem0ai/mem0", "evaluation/prompts.py")] == (
        "b3ede5b7c0ac0e847b03786a603c107ac943b3ee", "407bea1c1453dc6832c234bb1ed936d401d796fabcc0b28337a47ba63517d3ba")
    assert pins[("snap-research/LoCoMo", "task_eval/gpt_utils.py")] == (
        "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376", "5fc977375878199735acd28fba5ae6f4d657fa0e000c0d2918a90c07b6035793")
    assert pins[("snap-research/LoCoMo", "task_eval/evaluation.py")] == (
        "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376", "8e3be5d57ff2ff9ec5cd05939592f468c5f3f1fd95d13e431932bdf6bf0fd6fd")
    for name in ("longmemeval_oracle", "longmemeval_s", "longmemeval_s_cleaned", "longmemeval_m_cleaned"):
        assert benchmark(name).importer == "longmemeval" and benchmark(name).data.sha256 is None
    for name in ("convomem",):
        assert benchmark(name).importer is None and benchmark(name).not_importable
    assert isinstance(locomo.sources[0], SourceFile)


def test_the_listing_says_why_a_benchmark_is_not_importable(env):
    text = invoke("benchmarks").output
    assert "convomem" in text and "not importable yet: no importer yet" in text and "message text" in text


def test_a_first_download_with_nowhere_to_record_it_is_refused_before_downloading(oracle, env, tmp_path):
    result = CliRunner().invoke(
        cli, ["fetch", "longmemeval_oracle", "--lock", str(tmp_path / "no" / "such" / "benchmarks.lock")],
        env={"EVALS_MIRROR": base(oracle)},
    )
    assert result.exit_code == 1 and "its folder does not exist" in result.output
    assert oracle.requests == [] and not env["downloads"].exists()
