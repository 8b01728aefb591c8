"""One leaderboard per benchmark, a front page, licenses and pins, and the "label suspect" mark.

A two-benchmark suite runs through `evals run-suite` against a local stand-in of the benchmarks'
hosts: a LoCoMo-format file (tests/fixtures/audit/locomo_planted.json, whose planted wrong labels the
label audit flags; pinned by its digest, as LoCoMo is) and a LongMemEval-format one
(tests/fixtures/importers/longmemeval_small.json as LongMemEval oracle, pinned by trust on first use in
the lock file). `evals build-site` then gives a front page listing both, a leaderboard each, and a page
of label suspects each, checked as HTML and in headless Chromium.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, ROOT
from helpers.audit import PLANTED
from helpers.benchmark_server import BenchmarkServer
from helpers.browser import chromium, problems_on
from helpers.html import parse

from evals.analysis.compare import headline_outcomes
from evals.benchmarks import BENCHMARKS
from evals.benchmarks.audit import MISSES, audit_corpus
from evals.cli import cli
from evals.model.corpus import load_corpus
from evals.model.formatting import percent
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.site import _suspects, build_site
from evals.store import Store
from evals.views.site_paths import benchmark_key

LONGMEMEVAL = FIXTURES / "importers" / "longmemeval_small.json"
STRATEGIES = ("bm25", "full_history", "no_memory")
# The planted wrong labels the content-word rule finds from the corpus alone (tests/benchmarks/test_audit.py).
PLANTED_QUESTIONS = {"Which composer does Bob play?", "What does Cy bake?"}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True,
        capture_output=True,
    )


def _invoke(*args: str, env: dict[str, str] | None = None):
    result = CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


STAND_IN = b"# stand-in\n"  # each evaluation source a fetch also downloads


def _stand_in_registry(patch: pytest.MonkeyPatch) -> list[str]:
    """The registry's LoCoMo pinned to the stand-in's digest (as LoCoMo is pinned to its file's), and the
    evaluation sources to the stand-in's; returns the sources' paths on a mirror."""
    served = []
    for name in ("locomo", "longmemeval_oracle"):
        entry = BENCHMARKS[name]
        sources = tuple(replace(s, sha256=hashlib.sha256(STAND_IN).hexdigest()) for s in entry.sources)
        data = entry.data
        if name == "locomo":
            data = replace(data, sha256=hashlib.sha256(PLANTED.read_bytes()).hexdigest(), size=len(PLANTED.read_bytes()))
        patch.setitem(BENCHMARKS, name, replace(entry, data=data, sources=sources))
        served += [s.relative for s in sources]
    return served


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The store and site of a two-benchmark suite run from a clean commit (stand-in files served locally)."""
    root = tmp_path_factory.mktemp("benchmarks")
    repo = root / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    with pytest.MonkeyPatch.context() as patch, BenchmarkServer() as server:
        patch.chdir(repo)
        for source in _stand_in_registry(patch):
            server.files[source] = STAND_IN
        server.files.update({"locomo10.json": PLANTED.read_bytes(), "longmemeval_oracle.json": LONGMEMEVAL.read_bytes()})
        (repo / "benchmarks.toml").write_text(
            f'[[matrix]]\nbenchmarks = ["locomo", "longmemeval_oracle"]\nstrategies = {json.dumps(list(STRATEGIES))}\nk = 3\n'
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "suite")
        store, downloads, lock = root / "results.duckdb", root / "downloads", root / "benchmarks.lock"
        env = {"EVALS_MIRROR": server.mirror(), "EVALS_DOWNLOADS": str(downloads), "EVALS_BENCHMARKS_LOCK": str(lock)}
        result = _invoke("run-suite", "--suite", "benchmarks.toml", "--store", str(store), env=env)
        assert "6 runs, 6 made now" in result.output
        site = root / "site"
        _invoke("build-site", "--store", str(store), "--out", str(site), "--lock", str(lock))
    return {"root": root, "store": store, "site": site, "lock": lock, "corpora": downloads / "corpora"}


def _runs(store: Path) -> list:
    with Store.open(store, read_only=True) as opened:
        return opened.runs()


def _hrefs(page: Path) -> set[str]:
    return {a.attrs["href"] for a in parse(page).find_all("a") if a.attrs.get("href")}


def _front_rows(site: Path) -> dict[str, object]:
    """The front page's rows by their benchmark link."""
    table = parse(site / "index.html").find("table", "benchmarks")
    return {next(a.attrs["href"] for a in tr.find_all("a")): tr for tr in table.find("tbody").find_all("tr")}


# -- the front page and a leaderboard per benchmark ------------------------------------------------


def test_the_front_page_lists_each_benchmark_with_leader_runs_and_license(suite):
    """Each benchmark's row names its first memory (a ceiling never), its run count and its licence."""
    rows = _front_rows(suite["site"])
    assert set(rows) == {"leaderboard-locomo.html", "leaderboard-longmemeval_oracle.html"}
    locomo, lme = rows["leaderboard-locomo.html"], rows["leaderboard-longmemeval_oracle.html"]
    cells = {td.attrs["data-label"]: td for td in locomo.find_all("td")}
    # The leader is the first memory by the headline (full_history is a ceiling, never the leader).
    with Store.open(suite["store"], read_only=True) as opened:
        latest = [s for s in opened.latest_per_configuration() if Path(s.corpus_dir).name == "locomo"]
    bm25 = next(s for s in latest if s.strategy == "bm25")
    assert cells["first memory"].find("a").attrs["href"] == f"runs/{bm25.run_id}.html"
    assert f"{bm25.headline.hits} / {bm25.headline.total}" in cells["first memory"].text()
    assert cells["runs"].text().startswith("3")
    assert "CC BY-NC 4.0" in cells["license"].text() and "Non-commercial" in cells["license"].text()
    lme_cells = {td.attrs["data-label"]: td for td in lme.find_all("td")}
    assert "MIT" in lme_cells["license"].text() and "Non-commercial" not in lme_cells["license"].text()
    assert cells["label suspects"].find("a").text() == "2"  # the two planted labels the corpus alone shows


def test_each_leaderboard_shows_only_its_own_runs(suite):
    runs = _runs(suite["store"])
    for name in ("locomo", "longmemeval_oracle"):
        page = suite["site"] / f"leaderboard-{name}.html"
        linked = {
            h.removeprefix("runs/").removesuffix(".html") for h in _hrefs(page) if h.startswith("runs/") and "/" not in h[5:]
        }
        assert linked == {s.run_id for s in runs if Path(s.corpus_dir).name == name}, name
        table_rows = parse(page).find("table", "leaderboard").find_all("tr")
        assert len([tr for tr in table_rows if tr.find_all("td")]) == len(STRATEGIES)


def test_licenses_and_pins_are_stated_on_each_leaderboard(suite):
    site = suite["site"]
    locomo = parse(site / "leaderboard-locomo.html").find("div", "benchmark-facts").text()
    assert "CC BY-NC 4.0" in locomo and "non-commercial" in locomo
    assert (
        "pinned: " in locomo and hashlib.sha256(PLANTED.read_bytes()).hexdigest() in locomo and "trust on first use" not in locomo
    )
    lme = parse(site / "leaderboard-longmemeval_oracle.html").find("div", "benchmark-facts").text()
    recorded = json.loads(suite["lock"].read_text())["files"][BENCHMARKS["longmemeval_oracle"].data.url]
    assert "by trust on first use" in lme and recorded["sha256"] in lme and "non-commercial" not in lme
    assert recorded["downloaded_from"] not in lme  # where the bytes came from (a mirror's location) stays private


def test_downloads_carry_a_benchmark_column(suite):
    records = json.loads((suite["site"] / "leaderboard.json").read_text())
    assert {(r["benchmark"], r["corpus_name"]) for r in records} == {
        ("locomo", "locomo"),
        ("longmemeval_oracle", "longmemeval_oracle"),
    }
    header = (suite["site"] / "leaderboard.csv").read_text().splitlines()[0].split(",")
    assert header[:3] == ["benchmark", "corpus_name", "corpus_digest"]


def test_the_old_leaderboard_anchors_still_land(suite):
    """index.html#corpus-<digest> (the one-page leaderboard's sections) lands on that corpus on the front page,
    and the same anchor names the corpus's board on its benchmark's page."""
    front = parse(suite["site"] / "index.html")
    for s in _runs(suite["store"]):
        anchor = f"corpus-{s.corpus_digest[:10]}"
        assert front.find(id=anchor)
        assert parse(suite["site"] / f"leaderboard-{Path(s.corpus_dir).name}.html").find("section", id=anchor)


# -- label suspects ----------------------------------------------------------------------------------


def test_the_suspects_are_the_label_audits_flags(suite):
    """The site's flags, from the stored corpus, are the CLI audit's content-word flags on the corpus folder."""
    corpus = load_corpus(suite["corpora"] / "locomo")
    expected = {(f.conversation, f.turn) for f in audit_corpus(corpus).flags if f.kind == MISSES}
    document = json.loads(next((suite["site"] / "transcripts").glob(f"{corpus.digest[:16]}/label-suspects.json")).read_text())
    assert {(s["conversation"], s["turn"]) for s in document["suspects"]} == expected
    assert {s["question"] for s in document["suspects"]} == PLANTED_QUESTIONS
    lme = json.loads(
        next(
            p for p in (suite["site"] / "transcripts").glob("*/label-suspects.json") if p.parent.name != corpus.digest[:16]
        ).read_text()
    )
    assert lme["suspects"] == [] and lme["checked"] > 0


def test_the_suspects_page_lists_each_with_its_runs_verdicts(suite):
    site = suite["site"]
    page = parse(site / "suspects-locomo.html")
    rows = page.find("table", "suspects").find("tbody").find_all("tr")
    assert {tr.find_all("td")[2].children[0].strip() for tr in rows} == PLANTED_QUESTIONS
    runs = {s.run_id: s for s in _runs(suite["store"])}
    for tr in rows:
        links = tr.find("td", "verdicts").find_all("a")
        assert len(links) == len(STRATEGIES)
        for a in links:
            path, _, anchor = a.attrs["href"].partition("#")
            run_id = path.split("/")[1]
            assert path.startswith("runs/") and (site / path).is_file() and run_id in runs
            assert parse(site / path).find("section", id=anchor)  # the test point's own section
        no_memory = next(a for a in links if a.text().startswith("no_memory"))
        assert no_memory.text() == "no_memory: miss"
    assert "0 flagged" in parse(site / "suspects-longmemeval_oracle.html").text()


def test_the_mark_is_on_the_drilldown_and_the_run_pages_misses(suite):
    site = suite["site"]
    no_memory = next(s for s in _runs(suite["store"]) if s.strategy == "no_memory" and Path(s.corpus_dir).name == "locomo")
    misses = parse(site / f"runs/{no_memory.run_id}.html").find("h2", id="misses").parent
    marked = [tr for tr in misses.find_all("tr") if tr.find_all("details", cls="suspect")]
    assert {tr.find_all("td")[3].children[0].strip() for tr in marked} == PLANTED_QUESTIONS
    sections = [
        section
        for page in (site / "runs" / no_memory.run_id).glob("*.html")
        for section in parse(page).find_all("section", cls="point")
    ]
    suspect = [s for s in sections if s.find_all("details", cls="suspect")]
    assert len(suspect) == 2 and len(sections) > 2
    assert all("evidence misses the answer" in s.find("details", cls="suspect").text() for s in suspect)


def test_a_rebuild_reads_the_suspects_back_instead_of_auditing_again(suite, monkeypatch):
    """Over an earlier build, a corpus whose pages are all reused is not audited again (its texts are not
    read): its flags come from its reused label-suspects.json, and the site is byte-identical."""
    site = suite["root"] / "rebuild"
    shutil.copytree(suite["site"], site)
    _stand_in_registry(monkeypatch)  # the benchmark pages state the registry's pins, as the first build saw them
    calls = []
    original = _suspects.audit_stored
    monkeypatch.setattr(_suspects, "audit_stored", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    report = build_site(suite["store"], site, lock=suite["lock"])
    assert report.rendered == 0 and calls == []
    for path in suite["site"].rglob("*"):
        if path.is_file():
            assert (site / path.relative_to(suite["site"])).read_bytes() == path.read_bytes(), path


def test_a_runs_outcomes_give_the_same_verdicts_as_the_whole_run(suite):
    """The compare and suspects pages read runs without their texts (Store.get_run_outcomes); on LoCoMo,
    whose headline reads the ranking kept past k, those outcomes carry the ranking, so every verdict is
    the drill-down's (they were all "not counted", and the compare page paired no test point)."""
    with Store.open(suite["store"], read_only=True) as opened:
        for s in opened.runs():
            outcomes = headline_outcomes(opened.get_run_outcomes(s.run_id))
            assert outcomes == headline_outcomes(opened.get_run(s.run_id)), (s.strategy, s.corpus_name)
            assert any(v is not None for conversation in outcomes for v in conversation)


# -- corpora of their own ------------------------------------------------------------------------------


def test_an_ad_hoc_corpus_renders_under_its_name(tmp_path: Path, corpus_small: Path):
    """A corpus without benchmark.json is a benchmark of its own, named after its folder; one that bears a
    benchmark's name without declaring it keeps its digest beside the name, apart from that benchmark."""
    mine, named = tmp_path / "my-notes", tmp_path / "locomo"
    shutil.copytree(corpus_small, mine)
    shutil.copytree(corpus_small, named)
    first = sorted(named.glob("*.json"))[0]
    first.write_text(first.read_text().replace("?", "??", 1))  # another corpus (digest) under that name
    store = tmp_path / "results.duckdb"
    provenance = Provenance(commit="c" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(store) as opened:
        for corpus in (mine, named):
            opened.append(evaluate(RunConfig(strategy="bm25", corpus=corpus)), provenance)
    digest = next(s.corpus_digest for s in _runs(store) if s.corpus_name == "locomo")
    build_site(store, tmp_path / "site")
    rows = _front_rows(tmp_path / "site")
    assert len(rows) == 2 and "leaderboard-my-notes.html" in rows and "leaderboard-locomo.html" not in rows
    assert "my-notes" in rows["leaderboard-my-notes.html"].text()
    other = next(tr for href, tr in rows.items() if href != "leaderboard-my-notes.html")
    assert f"locomo ({digest[:10]})" in other.text()
    facts = parse(tmp_path / "site" / "leaderboard-my-notes.html").find("div", "benchmark-facts").text()
    assert "A corpus of its own" in facts and "license" in facts
    assert benchmark_key("", None, "f" * 64) == "f" * 16  # no name at all: the digest


# -- in Chromium ----------------------------------------------------------------------------------------


@pytest.mark.browser
def test_in_chromium_front_page_to_leaderboard_to_a_suspect(serve, suite):
    """Front page: both benchmarks with leader, run count and LoCoMo's non-commercial note; a benchmark's
    leaderboard shows its own runs only; the suspects page leads to the drill-down, where the mark opens
    with a tap. No console error, no failed request."""
    served = serve(suite["site"])
    with chromium() as browser:
        page = browser.new_page()
        problems = problems_on(page)
        page.goto(served + "index.html")
        rows = page.locator("table.benchmarks tbody tr")
        assert rows.count() == 2
        locomo = rows.filter(has=page.locator('a[href="leaderboard-locomo.html"]'))
        assert locomo.locator("td.leader a").first.inner_text() == "bm25"
        assert locomo.locator('td[data-label="runs"]').inner_text().startswith("3")
        assert locomo.locator(".license-note").is_visible() and "Non-commercial" in locomo.locator(".license-note").inner_text()
        other = rows.filter(has=page.locator('a[href="leaderboard-longmemeval_oracle.html"]'))
        assert other.locator(".license-note").count() == 0 and other.locator("td.leader a").first.is_visible()

        locomo.locator('a[href="leaderboard-locomo.html"]').click()
        page.wait_for_url("**/leaderboard-locomo.html")
        own = {s.run_id for s in _runs(suite["store"]) if Path(s.corpus_dir).name == "locomo"}
        linked = page.locator("table.leaderboard td.commit a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
        assert {h.removeprefix("runs/").removesuffix(".html") for h in linked} == own
        assert "non-commercial" in page.locator(".benchmark-facts").inner_text()

        page.locator(".benchmark-facts a", has_text="2 test points").click()
        page.wait_for_url("**/suspects-locomo.html")
        page.locator("table.suspects td.verdicts a", has_text="no_memory").first.click()
        page.wait_for_url("**/runs/**#tp-*")
        section = page.locator("section.point:target")
        mark = section.locator("details.suspect")
        assert mark.is_visible() and mark.locator("summary").inner_text().startswith("label suspect")
        mark.locator("summary").click()
        assert "evidence misses the answer" in mark.locator(".tip-text").inner_text()

        # A link into the one-page leaderboard of before goes on to the corpus's board on its benchmark's page.
        digest = next(s.corpus_digest for s in _runs(suite["store"]) if Path(s.corpus_dir).name == "locomo")
        page.goto(served + f"index.html#corpus-{digest[:10]}-cutoffs")
        page.wait_for_url(f"**/leaderboard-locomo.html#corpus-{digest[:10]}-cutoffs")
        assert page.locator(f"#corpus-{digest[:10]}-cutoffs").count() == 1
        assert problems == []


# -- the field across benchmarks (across.html) ---------------------------------------------------


def test_the_across_page_ranks_each_memory_on_every_benchmark(suite):
    """across.html has one table at k=3 with a column per benchmark and a row per memory (ceilings left out),
    each cell the run's headline linking its run page with its rank there."""
    page = parse(suite["site"] / "across.html")
    (table,) = page.find_all("table", "across")
    heads = [th.text() for th in table.find("thead").find_all("th")]
    assert len(heads) == 3 and any("LoCoMo" in h for h in heads)
    rows = {tr.find("th").text(): tr.find_all("td") for tr in table.find("tbody").find_all("tr")}
    assert set(rows) == {"bm25", "no_memory"}
    by_run = {s.run_id: s for s in _runs(suite["store"])}
    for cell in rows["bm25"]:
        run_id = cell.find("a").attrs["href"].removeprefix("runs/").removesuffix(".html")
        assert cell.text().startswith(percent(by_run[run_id].headline.recall)) and "rank 1" in cell.text()


def test_the_across_table_is_published_as_data_and_printed_as_markdown_alike(suite):
    """data/across.json holds across.html's table, and tools/across_markdown.py prints the same figures and ranks."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "across_markdown.py"), str(suite["site"])], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    (data,) = json.loads((suite["site"] / "data" / "across.json").read_text())["tables"]
    page = parse(suite["site"] / "across.html")
    (table,) = page.find_all("table", "across")
    shown = {tr.find("th").text(): [td.text() for td in tr.find_all("td")] for tr in table.find("tbody").find_all("tr")}
    assert [row["system"] for row in data["rows"]] == list(shown)
    for row in data["rows"]:
        line = next(line for line in done.stdout.splitlines() if line.startswith(f"| `{row['system']}` |"))
        for found, text in zip(row["cells"], shown[row["system"]], strict=True):
            assert text.startswith(percent(found["recall"])) and f"rank {found['rank']}" in text
            assert f"{found['recall']:.3f} [{found['low']:.3f}, {found['high']:.3f}] (#{found['rank']})" in line


def test_the_front_page_links_the_across_page(suite):
    """The front page and the navigation both link across.html."""
    page = parse(suite["site"] / "index.html")
    assert "across.html" in {a.attrs.get("href") for a in page.find_all("a")}


def test_an_order_that_flips_between_benchmarks_is_noted_only_when_both_hold_up():
    """A pair ahead on one benchmark and behind on another is noted when each order has p < 0.05, not otherwise."""
    from evals.analysis.across import flip_notes

    titles = {"locomo": "LoCoMo", "beam": "BEAM"}
    flipped = {("dense", "bm25"): {"locomo": (-1, 0.001), "beam": (1, 0.007)}}
    (note,) = flip_notes(flipped, titles)
    assert note == "dense is ahead of bm25 on BEAM (paired p = 0.0070) and behind it on LoCoMo (p = 0.0010)."
    assert flip_notes({("dense", "bm25"): {"locomo": (-1, 0.001), "beam": (1, 0.2)}}, titles) == []
    assert flip_notes({("dense", "bm25"): {"locomo": (1, 0.001), "beam": (1, 0.001)}}, titles) == []
