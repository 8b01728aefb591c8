"""The front page of a store with several benchmarks: each benchmark's ranked memories, up to
ten a benchmark, with a link to the rest; ceilings are not among them.

The store holds the starter corpus (corpus/) with five memories at three k each (fifteen memories) and a
ceiling, and a LoCoMo-shaped corpus (bench/gen_locomo.py) with two memories.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers import ROOT
from helpers.html import parse

from evals.benchmarks.formats import import_corpus
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import build_site
from evals.store import Store

sys.path.insert(0, str(ROOT / "bench"))
from gen_locomo import generate  # noqa: E402

MEMORIES = ("bm25", "recency", "random_k", "no_memory", "mneme")
FRONT_SITE: list[Path] = []  # the front fixture's site folder


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("front")
    generate(root / "locomo.json", conversations=1, sessions=2, turns=6, questions=5)
    import_corpus("locomo", root / "locomo.json", root / "locomo")
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(root / "results.duckdb") as store:
        for strategy in MEMORIES:
            for k in (1, 2, 3):
                store.append(evaluate(RunConfig(strategy=strategy, corpus=ROOT / "corpus", k=k)), provenance)
        store.append(evaluate(RunConfig(strategy="full_history", corpus=ROOT / "corpus")), provenance)
        for strategy in ("bm25", "recency"):
            store.append(evaluate(RunConfig(strategy=strategy, corpus=root / "locomo", k=2)), provenance)
    build_site(root / "results.duckdb", root / "site")
    FRONT_SITE[:] = [root / "site"]
    return parse(root / "site" / "index.html")


def _boards(page) -> dict[str, object]:
    return {section.find("h2").find("a").attrs["href"]: section for section in page.find_all("section", "front-board")}


def test_each_benchmark_lists_its_ranked_memories_up_to_ten(front):
    """The starter corpus shows ten of its fifteen memories, each with its rank; LoCoMo shows both of its own."""
    boards = _boards(front)
    starter, locomo = boards["leaderboard-corpus.html"], boards["leaderboard-locomo.html"]
    assert len(starter.find("tbody").find_all("tr")) == 10
    assert len(locomo.find("tbody").find_all("tr")) == 2
    ranks = [tr.find_all("td")[0].text() for tr in starter.find("tbody").find_all("tr")]
    assert ranks[0] == "1" and all(r.isdigit() for r in ranks)


def test_the_rest_are_one_link_away(front):
    """Past ten, a link names how many more there are and goes to the benchmark's leaderboard."""
    starter = _boards(front)["leaderboard-corpus.html"]
    (more,) = [a for a in starter.find_all("a") if "more on its leaderboard" in a.text()]
    assert more.text().startswith("5 more") and more.attrs["href"] == "leaderboard-corpus.html"


def test_ceilings_are_not_among_the_ranked(front):
    """full_history, a ceiling, is never listed among a benchmark's ranked memories."""
    starter = _boards(front)["leaderboard-corpus.html"]
    assert "full_history" not in starter.find("tbody").text()


def test_ceilings_are_shown_apart_for_scale_unranked(front):
    """As the intro says, the ceilings are shown for scale: in a body of their own after the memories, with no rank."""
    starter = _boards(front)["leaderboard-corpus.html"]
    (ceilings,) = starter.find_all("tbody", "ceilings")
    rows = [tr for tr in ceilings.find_all("tr") if "group" not in tr.attrs.get("class", "")]
    assert [tr.find_all("td")[1].find("a").text() for tr in rows] == ["full_history"]
    assert rows[0].find_all("td")[0].text() == "—"


def test_each_memory_shows_its_tokens_per_test_point(front):
    """Each row of a front board shows the run's tokens per test point beside its headline, as its run page gives them."""
    boards = _boards(front)
    checked = 0
    for board in boards.values():
        headings = [th.text() for th in board.find("thead").find_all("th")]
        at = headings.index("tokens / test point")
        assert headings[at - 1] == board.find("thead").find_all("th")[3].text()  # right after the headline
        for tr in board.find_all("tr"):
            cells = tr.find_all("td")
            if not cells:
                continue
            run = parse(FRONT_SITE[0] / cells[1].find("a").attrs["href"])
            assert f"{cells[at].text().strip()} tokens per test point" in " ".join(run.text().split())
            checked += 1
    assert checked
