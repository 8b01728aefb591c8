"""One rule for every breakdown and download: on a LoCoMo-shaped corpus, the per-category rows
count the headline rule and add up to the headline, in `evals leaderboard --by-category` and on the run
page; every test point of `evals run --output`, `runs/<id>.json.gz` and `evals export` carries the
drill-down's verdict; leaderboard.json names keyword recall `keyword_hit_at_k`.
"""

from __future__ import annotations

import gzip
import json
import re

import pytest
from click.testing import CliRunner
from helpers import FIXTURES

from evals.benchmarks.locomo.importer import import_locomo
from evals.cli import cli
from evals.site import build_site
from evals.store import Store

FIXTURE = FIXTURES / "importers" / "locomo_small.json"
STRATEGIES = ("bm25", "recency")


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """LoCoMo's small fixture imported; bm25 and recency at k=2, each with --output; the site built."""
    root = tmp_path_factory.mktemp("one_rule")
    import_locomo(FIXTURE, root / "corpus")
    store = root / "results.duckdb"
    outputs = {}
    for name in STRATEGIES:
        outputs[name] = root / f"{name}.json"
        args = ("--corpus", root / "corpus", "--k", "2", "--store", store, "--repo", root, "--output", outputs[name])
        invoke("run", "--runner", name, *args)
    with Store.open(store, read_only=True) as opened:
        runs = {s.strategy: s.run_id for s in opened.runs()}
    build_site(store, root / "site")
    return {"root": root, "store": store, "outputs": outputs, "runs": runs, "site": root / "site"}


def headlines(built: dict) -> dict[str, tuple[int, int]]:
    board = json.loads(invoke("leaderboard", "--store", built["store"], "--format", "json"))
    return {row["run_id"]: (row["headline"]["hits"], row["headline"]["total"]) for row in board}


def drilldown_verdicts(built: dict, run_id: str) -> dict[tuple[str, int], str]:
    found = {}
    for page in (built["site"] / "runs" / run_id).glob("*.html"):
        text = page.read_text(encoding="utf-8")
        conversation = re.search(r"<h1>\s*(\S+)", text).group(1)
        for attrs in re.findall(r"<section([^>]*data-verdict[^>]*)>", text):
            turn = int(re.search(r'id="tp-(\d+)"', attrs).group(1))
            found[(conversation, turn)] = re.search(r'data-verdict="([a-z]+)"', attrs).group(1)
    return found


def document_verdicts(document: dict) -> dict[tuple[str, int], str]:
    return {(c["conversation_id"], p["turn_index"]): p["verdict"] for c in document["conversations"] for p in c["test_points"]}


def test_by_category_rows_add_up_to_the_headline_in_cli_json(built):
    """`evals leaderboard --by-category --format json`: each run's categories' headline hits and totals sum to its headline."""
    records = json.loads(invoke("leaderboard", "--by-category", "--store", built["store"], "--format", "json"))
    for run_id, (hits, total) in headlines(built).items():
        rows = [r for r in records if r["run_id"] == run_id]
        assert rows and {r["headline_metric"] for r in rows} == {"turn.recall_any@k"}
        assert (sum(r["headline_hits"] for r in rows), sum(r["headline_total"] for r in rows)) == (hits, total)


def test_by_category_rows_add_up_to_the_headline_on_the_run_page(built):
    """The run page's "By category" table: its hits / total cells sum to the run's headline."""
    for run_id, (hits, total) in headlines(built).items():
        page = (built["site"] / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
        table = page.split('<h2 id="categories">', 1)[1].split("</table>", 1)[0]
        cells = [(int(h), int(t)) for h, t in re.findall(r'<td class="num" data-sort="\d+">(\d+) / (\d+)</td>', table)]
        assert len(cells) > 1
        assert (sum(h for h, _ in cells), sum(t for _, t in cells)) == (hits, total)


def test_run_output_carries_the_drilldowns_verdict(built):
    """Every test point of `evals run --output` has `verdict`, the drill-down's."""
    for name, run_id in built["runs"].items():
        document = json.loads(built["outputs"][name].read_text(encoding="utf-8"))
        assert document_verdicts(document) == drilldown_verdicts(built, run_id)


def test_published_run_json_carries_the_drilldowns_verdict(built):
    """Every test point of the site's runs/<id>.json.gz has `verdict`, the drill-down's."""
    for run_id in built["runs"].values():
        document = json.loads(gzip.decompress((built["site"] / "runs" / f"{run_id}.json.gz").read_bytes()))
        assert document_verdicts(document) == drilldown_verdicts(built, run_id)


def test_export_carries_the_drilldowns_verdict_and_imports_back(built, tmp_path):
    """`evals export`: every test point has `verdict`, the drill-down's; the file imports into another store."""
    run_id = built["runs"]["bm25"]
    out = tmp_path / "export.json"
    invoke("export", run_id, "--store", built["store"], "--output", out)
    document = json.loads(out.read_text(encoding="utf-8"))
    verdicts = document_verdicts(document)
    assert verdicts == drilldown_verdicts(built, run_id) and {"hit", "miss"} <= set(verdicts.values())
    invoke("import", out, "--store", tmp_path / "other.duckdb")


def test_leaderboard_json_names_keyword_recall_apart(built):
    """leaderboard.json: keyword recall is `keyword_hit_at_k` (with hits and total), no top-level `recall`."""
    rows = json.loads((built["site"] / "leaderboard.json").read_text(encoding="utf-8"))
    assert rows and all("recall" not in row and "keyword_hit_at_k" in row for row in rows)
    assert all(row["keyword_hit_at_k_hits"] <= row["keyword_hit_at_k_total"] for row in rows)
