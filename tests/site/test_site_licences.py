"""A benchmark's text (turns, questions, answer keys) is on a page only where its unit's declared licence allows
redistribution (evals.benchmarks.text_withheld); otherwise the pages show the benchmark's own turn ids and say why."""

from __future__ import annotations

import gzip
import html
import json
import re
import shutil
from pathlib import Path

import pytest
from helpers import FIXTURES

from evals.benchmarks import redistributable, text_withheld
from evals.model.corpus import load_corpus
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

PROVENANCE = Provenance(commit="d" * 40, dirty=False, package_version="0", mneme_version=None, python_version="3")


@pytest.mark.parametrize(
    ("licence", "allowed"),
    [
        ("CC BY 4.0", True),
        ("CC BY-SA 4.0", True),
        ("CC BY-NC 4.0 (non-commercial)", True),
        ("MIT", True),
        ("Apache-2.0", True),
        ("CC BY-NC-ND 4.0", False),
        ("none stated (no LICENSE file in the repository at the pinned commit)", False),
        ("not stated in the repository; its locomo10.json is LoCoMo's (CC BY-NC 4.0, non-commercial)", False),
        ("see the dataset card", False),
        ("", False),
    ],
)
def test_the_licences_that_allow_a_benchmarks_text_on_a_page(licence: str, allowed: bool):
    assert redistributable(licence) is allowed


def test_which_benchmarks_text_is_withheld_and_why():
    """LoCoMo (CC BY-NC) and LongMemEval (MIT) are shown; BEAM and LoCoMo-Plus (no licence of their own) are not,
    and the reason names the licence; a corpus declaring no benchmark (the starter corpus, a user's own) is shown."""
    assert text_withheld("locomo") == text_withheld("longmemeval") == text_withheld(None) == ""
    assert "none stated" in text_withheld("beam") and "evals fetch" in text_withheld("beam")
    assert "not stated" in text_withheld("locomo_plus")


def _site(tmp_path: Path, benchmark: str | None) -> tuple[Path, Path]:
    corpus = tmp_path / f"corpus-{benchmark}"
    shutil.copytree(FIXTURES / "sessions_corpus", corpus)
    if benchmark:
        (corpus / "benchmark.json").write_text(json.dumps({"name": benchmark}), encoding="utf-8")
    store = tmp_path / f"{benchmark}.duckdb"
    with Store.open(store) as opened:
        opened.append(evaluate(RunConfig(strategy="bm25", corpus=corpus, k=2)), PROVENANCE)
    site = tmp_path / f"site-{benchmark}"
    build_site(store, site)
    return corpus, site


def _texts(corpus: Path) -> set[str]:
    """Every turn the memory holds (a test point's own turn is the question it asks), question and answer key."""
    texts = set()
    for conversation in load_corpus(corpus).conversations:
        for turn in conversation.turns:
            if turn.test_at is None:
                texts.add(turn.content)
            else:
                texts.update((turn.test_at.question, turn.test_at.expected_fact))
    return {t for t in texts if len(t) >= 8}


def _files(site: Path) -> dict[str, str]:
    out = {}
    for path in sorted(p for p in site.rglob("*") if p.is_file() and p.name != "results.duckdb"):
        data = path.read_bytes()
        text = (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8", "replace")
        out[path.relative_to(site).as_posix()] = html.unescape(re.sub(r"<[^>]+>", "", text))  # keywords are marked up
    return out


@pytest.mark.slow
def test_no_file_of_the_site_holds_the_text_of_a_benchmark_whose_licence_withholds_it(tmp_path: Path):
    corpus, site = _site(tmp_path, "beam")
    files = _files(site)
    for text in _texts(corpus):
        holding = [name for name, content in files.items() if text in content]
        assert not holding, f"{text!r} is in {holding}"
    drilldowns = [name for name in files if name.startswith("runs/") and name.count("/") == 2 and name.endswith(".html")]
    assert drilldowns
    for name in drilldowns:
        assert "Text not shown: BEAM" in files[name] and "none stated" in files[name]
    transcripts = [name for name in files if "/c/" in name and name.endswith(".html")]
    assert transcripts and all("Text not shown: BEAM" in files[name] for name in transcripts)


@pytest.mark.slow
def test_the_text_of_a_corpus_of_ones_own_is_shown(tmp_path: Path):
    corpus, site = _site(tmp_path, None)
    files = _files(site)
    missing = [text for text in _texts(corpus) if not any(text in content for content in files.values())]
    assert not missing
    assert not any("Text not shown" in content for content in files.values())
