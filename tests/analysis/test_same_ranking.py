"""Say when two memories are one (evals.analysis.same_ranking), and published claims beside runs
(evals.views.claims), on a LoCoMo-format corpus: bm25, a plug-in retrieving exactly as bm25 does under
another name and a name-irrelevant option (tests/plugins/twin_bm25.py), and recency."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, PLUGINS
from helpers.cli import evals_output, run_id_of
from helpers.html import parse

from evals.analysis.same_ranking import same_rankings
from evals.benchmarks.locomo.importer import import_locomo
from evals.model.claims import Claim
from evals.store import Store
from evals.views.claims import board_claims

RUNNERS = {"bm25": ["bm25"], "twin": ["twin_bm25:SPEC", "--option", "label=other"], "recency": ["recency"]}


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A store with the three runs at k=3 on the planted LoCoMo file, and the site built from it."""
    root = tmp_path_factory.mktemp("same")
    corpus, store, site = root / "locomo", root / "results.duckdb", root / "site"
    import_locomo(FIXTURES / "audit" / "locomo_planted.json", corpus)
    ids = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(PLUGINS))
        for name, runner in RUNNERS.items():
            ids[name] = run_id_of(evals_output("run", "--runner", *runner, "--corpus", corpus, "--k", 3, "--store", store))
        leaderboard = evals_output("leaderboard", "--store", store)
        evals_output("build-site", "--store", store, "--out", site)
    with Store.open(store, read_only=True) as opened:
        latest = opened.latest_per_configuration()
        same = same_rankings(opened, latest)
    return {"ids": ids, "same": same, "latest": latest, "leaderboard": leaderboard, "site": site}


def test_identical_retrievers_are_one_ranking(board):
    """bm25 and its twin return the same top-k on every test point, so each names the other."""
    ids, same = board["ids"], board["same"]
    assert [t.other for t in same[ids["bm25"]]] == [ids["twin"]]
    assert [t.other for t in same[ids["twin"]]] == [ids["bm25"]]
    assert same[ids["bm25"]][0].share == 1.0


def test_different_retrievers_are_not_one_ranking(board):
    """recency's top-k differs from bm25's, so it has no twin."""
    assert board["ids"]["recency"] not in board["same"]


def test_the_leaderboard_command_names_a_tie_once(board):
    """evals leaderboard names the tied pair below its table in one line, within its 100 columns."""
    lines = board["leaderboard"].splitlines()
    said = [n for n, line in enumerate(lines) if line.startswith("Tied on")]
    assert max(len(line) for line in lines) <= 100
    assert len(said) == 1 and not any(line.startswith("Same ranking") for line in lines)
    group = " ".join(lines[said[0] : said[0] + 3])
    assert ": bm25, bm25_twin:" in group and "recency" not in group


def test_the_site_board_says_a_tie_once_for_the_group(board):
    """The first row of the tie says the group in full, the other row points to it, recency's row says nothing."""
    notes = [n.text() for n in parse(board["site"] / "index.html").find_all("small", "tie")]
    assert len(notes) == 2
    full = [n for n in notes if "every test point" in n]
    assert len(full) == 1 and full[0].startswith("= bm25")
    assert parse(board["site"] / "index.html").find_all("small", "same-ranking") == []


def test_tied_memories_share_a_rank(board):
    """bm25 and its twin have the same figure, so both carry the same rank on the board; recency ranks below both."""
    links = [a for a in parse(board["site"] / "index.html").find_all("a") if "ranked" in a.classes]
    ranks = {a.text(): int(a.attrs["data-rank"]) for a in links}
    assert ranks["bm25"] == ranks["bm25_twin"] == 1 and ranks["recency"] == 3


def test_a_tie_is_never_called_the_leader(board):
    """The front page names the tie's first memory with the others it is tied with, marked tied."""
    page = parse(board["site"] / "index.html")
    text = " ".join(td.text() for td in page.find_all("td", "leader"))
    assert "tied:" in text and "bm25_twin" in text


def test_the_pair_page_says_same_ranking(board):
    """The compare page of bm25 and its twin says they are one retriever; bm25 against recency does not."""
    pages = {p.name: parse(p) for p in (board["site"] / "compare").glob("*.html")}
    said = {name for name, page in pages.items() if page.find_all("p", "same-ranking")}
    assert said == {next(n for n in pages if board["ids"]["bm25"] in n and board["ids"]["twin"] in n)}


def test_the_site_board_shows_the_claims_greyed_and_unranked(board):
    """The LoCoMo board lists its published claims (MemPalace's session figure among them) as reference
    rows in their own table, none of them ranked."""
    claims = parse(board["site"] / "index.html").find("section", "claims")
    rows = claims.find_all("tr", "reference")
    assert any("Session, no rerank" in r.text() and "60.3%" in r.text() for r in rows)
    assert not [a for a in claims.find_all("a") if "ranked" in a.classes]


def test_the_leaderboard_command_lists_the_claims(board):
    """evals leaderboard prints the corpus's published claims below its table, marked published."""
    assert "published 60.3%  MemPalace raw, session documents" in board["leaderboard"]


def _claim(**fields) -> Claim:
    base = dict(
        benchmark="locomo", corpus="locomo", system="Example", version="1", figure="R@3", value=0.5,
        metric="recall_any", k=3, level="turn", population="every question with evidence", questions=9,
        measured_by="Example (self-reported)",
        source={"repository": "example/example", "commit": "0" * 40, "path": "README.md"},
    )  # fmt: skip
    return Claim.model_validate({**base, **fields})


def test_a_claim_measured_the_same_way_stands_beside_the_run(board):
    """A claim of turn recall_any@3 over the 9 questions with evidence gets the closest such run and the difference."""
    (view,) = board_claims(board["latest"], [_claim(value=0.6)])
    bm25 = next(s for s in board["latest"] if s.run_id == board["ids"]["bm25"])
    assert view.run_value == bm25.metric("turn.recall_any@3").value
    assert view.difference == pytest.approx(view.run_value - 0.6)


def test_a_claim_over_another_population_stands_alone(board):
    """A claim over a different number of questions gets no run beside it, and says the counts."""
    (view,) = board_claims(board["latest"], [_claim(questions=1986)])
    assert view.run_value is None and "over 1,986 questions; runs here count 9" in view.why_not


def test_a_claim_of_another_corpus_is_not_on_the_board(board):
    """A claim measured on another corpus of the benchmark is not shown on this one."""
    assert board_claims(board["latest"], [_claim(benchmark="longmemeval", corpus="longmemeval_s_cleaned")]) == []


def test_retrieval_claims_join_the_papers_published_rows(board):
    """MemPalace's dialog figure (turn recall_frac@10, LoCoMo's own metric) sits in the board's published
    rows beside the LoCoMo paper's DRAGON figures, greyed like them."""
    labels = [
        r.find("th").text() for r in parse(board["site"] / "index.html").find("tfoot", "references").find_all("tr", "reference")
    ]
    assert any(label.startswith("LoCoMo paper, DRAGON") for label in labels)
    assert any(label.startswith("MemPalace raw, dialog documents") for label in labels)


def test_a_claim_counting_questions_without_evidence_is_set_beside_the_run_over_every_question(board):
    """A claim that counts each question without evidence as 1.0 (MemPalace's LoCoMo population) gets the run's
    figure over every question the run played, those counted the same way, not the figure over the rest."""
    bm25 = next(s for s in board["latest"] if s.run_id == board["ids"]["bm25"])
    played, measured = bm25.metric("test_points").n, bm25.metric("turn.recall_frac@3")
    assert played > measured.n  # the planted file has questions without evidence
    claim = _claim(metric="recall_frac", questions=played, without_evidence=1.0)
    (view,) = board_claims([bm25], [claim])
    assert view.run_value == pytest.approx((measured.value * measured.n + (played - measured.n)) / played)
    (alone,) = board_claims([bm25], [_claim(metric="recall_frac", questions=played)])
    assert alone.run_value is None  # left out, the run's count is not the claim's
