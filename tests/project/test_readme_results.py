"""README's Results table for the starter corpus is what a fresh run of the strategies gives.

The table is made by hand with ``evals leaderboard --format markdown``; this
test runs the deterministic strategies on ``corpus/`` into a temporary store,
makes the same Markdown, and compares the rows cell by cell, so a change to
the corpus, a strategy or a metric that moves a number fails here until the
README is regenerated. Two things are left out: MiniLM's row (the ``minilm``
extra is 1.5 GB and loading the model alone takes longer than this whole
test), and measured wall-clock columns, which differ from run to run.
"""

from __future__ import annotations

import pytest
from helpers import ROOT

from evals.judge.metrics import METRICS, SECONDS
from evals.model.provenance import Provenance
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store
from evals.views.markdown import leaderboard_markdown
from evals.views.tables import boards

# Every strategy whose numbers depend on nothing but the corpus and the seed (mneme with its default hash embedder),
# as the main job (`python3 tasks.py run`, evals.toml) runs them: the oracle ceiling included.
DETERMINISTIC = ("oracle", "full_history", "summary_buffer", "bm25", "mneme", "random_k", "recency", "no_memory")
CORPUS_LINE = "**Corpus `corpus`**"


def _table(markdown: str) -> tuple[str, list[str], dict[str, list[str]]]:
    """The starter corpus's table: its title line, header cells, and each row's cells by config key
    (without the strategy label, which names the settings that differ between the rows present)."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(CORPUS_LINE))
    header = _cells(lines[start + 2])
    rows: dict[str, list[str]] = {}
    for line in lines[start + 4 :]:
        if not line.startswith("|"):
            break
        cells = _cells(line)
        rows[cells[-1]] = cells[1:]
    return lines[start], header, rows


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split(" | ")]


def _deterministic(header: list[str], cells: list[str]) -> list[str]:
    """``cells`` without the measured columns (latency, ingestion CPU, peak RSS), which no two runs share."""
    measured = {m.label for m in METRICS.values() if m.kind == SECONDS} | {METRICS["peak_rss_mb"].label}
    return [cell for name, cell in zip(header[1:], cells, strict=True) if name not in measured]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The Markdown leaderboard of a fresh run of every deterministic strategy on corpus/."""
    path = tmp_path_factory.mktemp("readme") / "results.duckdb"
    provenance = Provenance(commit="0" * 40, dirty=False, package_version="0", mneme_version="0", python_version="3")
    with Store.open(path) as store:
        for strategy in DETERMINISTIC:
            store.append(evaluate(RunConfig(strategy=strategy, corpus=ROOT / "corpus")), provenance)
        # In `evals leaderboard`'s order: the memories ranked, then the ceilings, unranked.
        return leaderboard_markdown(boards(store.latest_per_configuration())[0])


@pytest.fixture(scope="module")
def readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8").split("## Results", 1)[1]


def test_readme_names_the_corpus_as_a_fresh_run_does(fresh: str, readme: str):
    """The table's title (conversations, test points, corpus digest) and its columns are a fresh run's."""
    assert _table(readme)[:2] == _table(fresh)[:2]


def test_readme_rows_match_a_fresh_run(fresh: str, readme: str):
    """Every deterministic strategy's row in README holds the numbers a fresh run gives, in the same order."""
    _, header, expected = _table(fresh)
    _, _, written = _table(readme)
    shown = [key for key in written if key in expected]
    assert shown == list(expected), "README's rows, without MiniLM's, in the order a fresh run ranks them"
    for key, cells in expected.items():
        assert _deterministic(header, written[key]) == _deterministic(header, cells), key


def test_readme_has_no_row_a_fresh_run_cannot_check_but_minilm(fresh: str, readme: str):
    """The only row left unchecked is mneme with the MiniLM embedder."""
    unchecked = [cells for key, cells in _table(readme)[2].items() if key not in _table(fresh)[2]]
    assert [cells[0] for cells in unchecked] == ["all-MiniLM-L6-v2"]
