"""`evals gate`: paired tests between two refs' runs, latency thresholds, exit codes and the Markdown report.

Stores are real: runs are played and appended with provenance naming the
commits of a throwaway git repository. A regression at a new commit is made
the way a code change makes one: the head's runs are played with a strategy
broken for some conversations (same configuration, fewer hits).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from helpers import FIXTURES, ROOT
from helpers.stores import provenance
from markdown_it import MarkdownIt

from evals.analysis.gate import LATENCY_METRIC, LATENCY_MIN_CALLS, NOISE, REGRESSION, WALL_LATENCY_METRIC, gate
from evals.cli import cli
from evals.judge import metrics
from evals.judge.metrics import MEAN, Metric, MetricValue
from evals.run.evaluate import RunConfig, evaluate
from evals.store import Store
from evals.strategies.full_history import FullHistory
from evals.views.gate_report import gate_markdown, text
from evals.views.site_paths import links_to_test_points

SPECIAL_QUESTION = "which code | is *member 0*'s <locker> & `why`?"
SPECIAL_FACT = "member_0 uses [kz00qx] _now_"


def question(i: int) -> str:
    return SPECIAL_QUESTION if i == 0 else f"what is the locker code of member {i}?"


@pytest.fixture
def lockers(tmp_path: Path) -> Path:
    """Twelve conversations, each a locker code at turn 0 and its question at turn 8.

    full_history finds every code, recency (k=5) and no_memory none: twelve
    discordant pairs, all one way, are far past chance (p = 2/4096).
    """
    folder = tmp_path / "lockers"
    folder.mkdir()
    for i in range(12):
        code = f"kz{i:02d}qx"
        turns = [{"role": "user", "content": f"Member {i} has locker code {code}."}]
        turns += [
            {"role": "user" if j % 2 else "assistant", "content": f"Small talk number {j} about the weather."}
            for j in range(1, 8)
        ]
        fact = SPECIAL_FACT if i == 0 else f"member {i} has locker code {code}"
        turns.append(
            {
                "role": "user",
                "content": question(i),
                "test_at": {"question": question(i), "expected_fact": fact, "expected_keywords": [code]},
            }
        )
        document = {"schema_version": "1", "id": f"locker_{i:02d}", "description": f"Locker {i}.", "turns": turns}
        (folder / f"locker_{i:02d}.json").write_text(json.dumps(document))
    return folder


@pytest.fixture(autouse=True)
def no_ci_environment(monkeypatch):
    """Runs as on a developer's machine: no step summary file, no store from the environment."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("EVALS_STORE", raising=False)


def append(store_path: Path, strategy: str, corpus: Path, commit: str = "c0ffee" * 6 + "abcd") -> str:
    with Store.open(store_path) as store:
        return store.append(evaluate(RunConfig(strategy=strategy, corpus=corpus)), provenance(commit))


def run_gate(store_path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["gate", *args, "--store", str(store_path)], catch_exceptions=False)


def git(repo: Path, *args: str) -> str:
    base = ["git", "-C", str(repo), "-c", "user.name=evals tests", "-c", "user.email=tests@example.invalid"]
    return subprocess.run([*base, *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, message: str) -> str:
    git(repo, "commit", "-q", "--allow-empty", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def branches(clean_repo: Path) -> tuple[Path, str, str]:
    """The repository with branch ``main`` at its first commit and ``feature`` one commit on."""
    git(clean_repo, "branch", "-M", "main")
    base = git(clean_repo, "rev-parse", "HEAD")
    git(clean_repo, "checkout", "-q", "-b", "feature")
    return clean_repo, base, commit(clean_repo, "feature work")


def break_full_history(monkeypatch, conversations: int) -> None:
    """full_history retrieves nothing for the first ``conversations`` lockers' questions (a bug at the head)."""
    broken = {question(i) for i in range(conversations)}
    original = FullHistory.retrieve

    def retrieve(self, query: str, k: int = 5) -> list[str]:
        return [] if query in broken else original(self, query, k)

    monkeypatch.setattr(FullHistory, "retrieve", retrieve)


# -- the verdicts and exit codes -----------------------------------------------------------------


def test_a_significant_loss_of_hits_fails(store_path, lockers):
    """full_history as base, no_memory as head (run ids): twelve hit->miss, exit 1, each lost question listed."""
    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    result = run_gate(store_path, "--base", base, "--head", head)
    assert result.exit_code == 1, result.output
    assert "## evals gate: failed" in result.output and "**regression**" in result.output
    assert "| base full_history `full_history-k5-" in result.output  # two configurations, each named
    assert all(text(question(i)) in result.output for i in range(12))


def test_the_same_configuration_rerun_at_a_new_commit_passes(store_path, lockers, branches):
    """Branch names resolve through git; the same two configurations at a new commit: no change, exit 0."""
    repo, base, head = branches
    for sha in (base, head):
        for strategy in ("recency", "bm25"):
            append(store_path, strategy, lockers, sha)
    result = run_gate(store_path, "--base", "main", "--head", "feature", "--repo", str(repo))
    assert result.exit_code == 0, result.output
    assert "## evals gate: passed" in result.output and result.output.count("| no change |") == 2


def test_a_difference_inside_the_noise_passes_and_says_so(store_path, corpus_small):
    """full_history -> mneme on the small corpus: 2 hit->miss of 4 (p = 0.5) passes, labelled within noise."""
    base, head = append(store_path, "full_history", corpus_small), append(store_path, "mneme", corpus_small)
    result = run_gate(store_path, "--base", base, "--head", head)
    assert result.exit_code == 0, result.output
    assert "| within noise |" in result.output and "| 2 | 0 | 0.5000 |" in result.output


def test_an_improvement_never_fails(store_path, lockers):
    """no_memory as base, full_history as head: significant, but better, so exit 0 and reported as an improvement."""
    base, head = append(store_path, "no_memory", lockers), append(store_path, "full_history", lockers)
    result = run_gate(store_path, "--base", base, "--head", head)
    assert result.exit_code == 0, result.output
    assert "| improvement |" in result.output


@pytest.mark.parametrize("broken, expected", [(6, NOISE), (7, REGRESSION)])
def test_holm_adjusts_across_the_configurations_compared(store_path, lockers, branches, monkeypatch, broken, expected):
    """Two configurations: 6 of 12 lost (raw p 0.031, Holm 0.063) is noise; 7 lost (Holm 0.031) regresses."""
    repo, base, head = branches
    for strategy in ("full_history", "bm25"):
        append(store_path, strategy, lockers, base)
    break_full_history(monkeypatch, broken)
    for strategy in ("full_history", "bm25"):
        append(store_path, strategy, lockers, head)
    with Store.open(store_path, read_only=True) as store:
        result = gate(store, "main", "feature", repo=repo)
    row = next(r for r in result.rows if r.head.strategy == "full_history")
    assert row.p < 0.05 and row.p_holm == pytest.approx(2 * row.p)
    assert row.paired == expected and result.failed == (expected == REGRESSION)


@pytest.fixture
def latency(monkeypatch):
    """The retrieve p95 latency metric, declared for one test; set ``latency["s"]`` (and the calls it
    is over, ``latency["n"]``) before each append."""
    value = {"s": None, "n": 100}

    def compute(run):
        return None if value["s"] is None else MetricValue(value["s"], value["n"])

    monkeypatch.setitem(
        metrics.METRICS, LATENCY_METRIC, Metric(LATENCY_METRIC, "retrieve p95", MEAN, False, "p95 seconds.", compute)
    )
    return value


@pytest.mark.parametrize(
    "base_s, head_s, exit_code, shown",
    [
        (0.010, 0.020, 1, "**×2.00** (10.0 ms → 20.0 ms)"),
        (0.010, 0.014, 0, "×1.40 (10.0 ms → 14.0 ms)"),
        (0.0001, 0.0003, 0, "×3.00 (0.1 ms → 0.3 ms)"),  # under the 1 ms floor: timing noise, not a failure
        (0.0000068, 0.00001, 0, "×1.47 (6.8 µs → 10 µs)"),  # µs, not "0.0 ms → 0.0 ms": the times explain the ratio
    ],
)
def test_latency_past_the_factor_fails(store_path, corpus_small, latency, base_s, head_s, exit_code, shown):
    """Same hits, retrieve p95 latency (unqueued) doubled: exit 1; within x1.5, or under the floor: exit 0."""
    latency["s"] = base_s
    append(store_path, "recency", corpus_small, "a" * 40)
    latency["s"] = head_s
    append(store_path, "recency", corpus_small, "b" * 40)
    result = run_gate(store_path, "--base", "aaaaaaa", "--head", "bbbbbbb")
    assert result.exit_code == exit_code, result.output
    assert f"| {shown} |" in result.output
    assert ("slower (latency past ×1.5)" in result.output) == (exit_code == 1)


@pytest.fixture
def wall_latency(monkeypatch):
    """The wall-clock retrieve p95, declared for one test as ``latency`` declares the judged one."""
    value = {"s": None, "n": 100}

    def compute(run):
        return None if value["s"] is None else MetricValue(value["s"], value["n"])

    monkeypatch.setitem(
        metrics.METRICS,
        WALL_LATENCY_METRIC,
        Metric(WALL_LATENCY_METRIC, "retrieve p95", MEAN, False, "p95 seconds.", compute),
    )
    return value


@pytest.mark.parametrize("base_s", [0.010, None])
def test_wall_clock_latency_is_shown_not_judged(store_path, corpus_small, latency, wall_latency, base_s):
    """Where a run lacks the unqueued p95 (a run stored before it), the wall-clock ratio is shown and never fails."""
    latency["s"], wall_latency["s"] = base_s, 0.010
    append(store_path, "recency", corpus_small, "a" * 40)
    latency["s"], wall_latency["s"] = None, 0.030
    append(store_path, "recency", corpus_small, "b" * 40)
    result = run_gate(store_path, "--base", "aaaaaaa", "--head", "bbbbbbb")
    assert result.exit_code == 0, result.output
    assert "| ×3.00 (10.0 ms → 30.0 ms), wall clock: not judged |" in result.output


def test_no_latency_recorded_is_said(store_path, corpus_small, latency, wall_latency):
    """Runs that recorded no latency at all show "not recorded", and pass."""
    append(store_path, "recency", corpus_small, "a" * 40)
    append(store_path, "recency", corpus_small, "b" * 40)
    result = run_gate(store_path, "--base", "aaaaaaa", "--head", "bbbbbbb")
    assert result.exit_code == 0, result.output
    assert "| not recorded |" in result.output


def test_latency_over_too_few_calls_never_fails(store_path, corpus_small, latency):
    """A p95 over a handful of calls is the slowest call: a doubling there is reported, not failed."""
    latency["n"] = LATENCY_MIN_CALLS - 1
    latency["s"] = 0.010
    append(store_path, "recency", corpus_small, "a" * 40)
    latency["s"] = 0.020
    append(store_path, "recency", corpus_small, "b" * 40)
    result = run_gate(store_path, "--base", "aaaaaaa", "--head", "bbbbbbb")
    assert result.exit_code == 0 and "| **×2.00** (10.0 ms → 20.0 ms) |" not in result.output and "×2.00" in result.output


def test_allow_accepts_a_known_regression_and_records_it(store_path, lockers):
    """--allow names the head's strategy: the regression is reported as allowed and the gate passes."""
    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    result = run_gate(store_path, "--base", base, "--head", head, "--allow", "no_memory")
    assert result.exit_code == 0, result.output
    assert "allowed (`--allow no_memory`)" in result.output and "### Allowed regression" in result.output


def test_the_evidence_corpus_is_gated_on_evidence_recall(store_path):
    """Where the corpus labels evidence turns, the paired test is on evidence recall (any): recency (k=5) keeps
    every keyword hit of full_history but misses 01_family's evidence turn 0, so one test point flips."""
    corpus = FIXTURES / "evidence_corpus"
    base, head = append(store_path, "full_history", corpus), append(store_path, "recency", corpus)
    with Store.open(store_path, read_only=True) as store:
        (row,) = gate(store, base, head).rows
    assert row.metric == "evidence_recall_any" and (len(row.lost), row.gained) == (1, 0)


# -- usage errors: exit 2 ------------------------------------------------------------------------


def test_an_unknown_ref_is_a_one_line_usage_error(store_path, corpus_small):
    """A ref that is no run, no stored commit and no git ref: exit 2 and one line naming it."""
    head = append(store_path, "recency", corpus_small)
    result = run_gate(store_path, "--base", "no-such-branch", "--head", head)
    assert result.exit_code == 2
    assert result.output.startswith("Error: unknown ref 'no-such-branch'") and result.output.count("\n") == 1


def test_nothing_comparable_says_what_each_side_has(store_path, corpus_small):
    """Base and head share no configuration: exit 2, listing each side's configurations."""
    append(store_path, "bm25", corpus_small, "a" * 40)
    append(store_path, "recency", corpus_small, "b" * 40)
    result = run_gate(store_path, "--base", "aaaa", "--head", "bbbb")
    assert result.exit_code == 2
    assert "nothing comparable" in result.output and "bm25-k5" in result.output and "recency-k5" in result.output


def test_run_ids_on_different_corpora_are_refused(store_path, corpus_small, lockers):
    """Two run ids on different corpora: exit 2, nothing to pair."""
    base, head = append(store_path, "recency", corpus_small), append(store_path, "recency", lockers)
    result = run_gate(store_path, "--base", base, "--head", head)
    assert result.exit_code == 2 and "different corpora" in result.output


def test_an_allow_that_matches_nothing_is_refused(store_path, corpus_small):
    """--allow with a name no compared configuration has: exit 2 rather than a silent no-op."""
    base, head = append(store_path, "full_history", corpus_small), append(store_path, "mneme", corpus_small)
    result = run_gate(store_path, "--base", base, "--head", head, "--allow", "mnemee")
    assert result.exit_code == 2 and "--allow mnemee matches no configuration" in result.output


def test_a_base_branch_ahead_of_its_runs_falls_back_but_a_head_does_not(store_path, corpus_small, branches):
    """main moved on with no runs yet: the base is its nearest ancestor with runs; a head without runs is an error."""
    repo, first, head = branches
    git(repo, "checkout", "-q", "main")
    second = commit(repo, "main moved on")
    append(store_path, "recency", corpus_small, first)
    append(store_path, "recency", corpus_small, head)
    with Store.open(store_path, read_only=True) as store:
        result = gate(store, "main", "feature", repo=repo)
    assert result.base.commit == first and "1 commit before" in result.base.resolved
    assert f"1 commit before `{second[:7]}`, which has no runs" in gate_markdown(result)
    failed = run_gate(store_path, "--base", "feature", "--head", "main", "--repo", str(repo))
    assert failed.exit_code == 2 and f"no runs in {store_path} at main (commit {second[:7]})" in failed.output


# -- the report ----------------------------------------------------------------------------------


def gfm() -> MarkdownIt:
    return MarkdownIt("commonmark").enable("table")


def table_rows(markdown: str) -> list[list[list[str]]]:
    """Every table as rows of cells, each cell the plain text GitHub would show."""
    tables, rows, cells = [], [], None
    tokens = gfm().parse(markdown)
    for token in tokens:
        if token.type == "table_open":
            rows = []
        elif token.type == "tr_open":
            cells = []
        elif token.type == "inline" and cells is not None:
            cells.append("".join(child.content for child in token.children or [] if child.type in ("text", "code_inline")))
        elif token.type == "tr_close":
            rows.append(cells)
            cells = None
        elif token.type == "table_close":
            tables.append(rows)
    return tables


def test_the_report_parses_as_tables_with_corpus_text_intact(store_path, lockers):
    """The Markdown parses into a summary table and a lost-points table; | * < & ` _ in a question stay literal text."""
    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    with Store.open(store_path, read_only=True) as store:
        markdown = gate_markdown(gate(store, base, head))
    summary, lost = table_rows(markdown)
    assert len(summary) == 2 and all(len(row) == 11 for row in summary)
    assert summary[1][-1] == "regression" and summary[1][5:7] == ["12", "0"]
    assert len(lost) == 13 and all(len(row) == 4 for row in lost)
    assert ["locker_00", "8", SPECIAL_QUESTION, SPECIAL_FACT] in lost


def test_site_url_links_each_lost_point_to_the_base_drill_down(store_path, lockers, tmp_path):
    """With --site-url, each lost test point links to a page and anchor that the built site has."""
    from evals.site import build_site

    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    with Store.open(store_path, read_only=True) as store:
        result = gate(store, base, head, link=links_to_test_points(store, "https://example.invalid/evals/"))
    site = tmp_path / "site"
    build_site(store_path, site)
    hrefs = [
        token.attrGet("href")
        for token in gfm().parse(gate_markdown(result))
        for token in token.children or []
        if token.type == "link_open"
    ]
    assert len(hrefs) == 12
    for href in hrefs:
        page, anchor = href.removeprefix("https://example.invalid/evals/").split("#")
        assert f'id="{anchor}"' in (site / page).read_text()


def test_json_format_prints_the_same_as_data(store_path, lockers):
    """--format json: the verdict, the counts and every lost test point, with the same exit code."""
    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    result = run_gate(store_path, "--base", base, "--head", head, "--format", "json")
    assert result.exit_code == 1
    document = json.loads(result.output)
    (row,) = document["rows"]
    assert document["passed"] is False and row["paired"] == REGRESSION
    assert (row["hit_to_miss"], row["miss_to_hit"], row["shared"]) == (12, 0, 12)
    assert {p["question"] for p in row["hit_to_miss_points"]} == {question(i) for i in range(12)}


def test_the_report_is_appended_to_the_step_summary(store_path, corpus_small, tmp_path, monkeypatch):
    """With $GITHUB_STEP_SUMMARY set, the Markdown report is appended to it (also under --format json)."""
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    base, head = append(store_path, "full_history", corpus_small), append(store_path, "mneme", corpus_small)
    run_gate(store_path, "--base", base, "--head", head, "--format", "json")
    written = summary.read_text()
    assert written.startswith("earlier step\n") and "## evals gate: passed" in written


# -- the pull-request workflow and its docs ------------------------------------------------------

WORKFLOW = ROOT / ".github" / "workflows" / "gate.yml"


def workflow() -> dict:
    import yaml  # a test extra: this test must not skip silently

    return yaml.safe_load(WORKFLOW.read_text())


def gate_step() -> dict:
    return next(step for step in workflow()["jobs"]["gate"]["steps"] if "evals gate --base" in step.get("run", ""))


def test_the_workflow_gates_pull_requests_against_the_published_store():
    """gate.yml parses; on pull requests (and label changes) it fetches data/results.duckdb, runs, gates HEAD."""
    parsed = workflow()
    triggers = parsed.get("on", parsed.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"opened", "synchronize", "labeled", "unlabeled"} <= set(triggers["pull_request"]["types"])
    assert parsed["permissions"] == {"contents": "read"}
    steps = parsed["jobs"]["gate"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout") and steps[0]["with"]["fetch-depth"] == 0
    runs = "\n".join(step.get("run", "") for step in steps)
    assert "data/results.duckdb" in runs and "evals run --runner" in runs
    assert '--base "$BASE_SHA" --head HEAD --site-url "$SITE_URL"' in gate_step()["run"]


def test_the_board_job_verifies_a_pull_request_s_board_files_and_comments_the_table():
    """A pull request that adds board files gets them verified against the fetched benchmarks, the board imported
    with them, and its table commented; only that job may write to the pull request."""
    job = workflow()["jobs"]["board"]
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    steps = ("git diff --name-only", "evals fetch", "evals verify board", "evals import", "gh pr comment")
    order = [runs.index(s) for s in steps]
    assert order == sorted(order)
    assert "evals leaderboard --format markdown" in runs and "GITHUB_STEP_SUMMARY" in runs


def run_gate_step(tmp_path: Path, labels: list[str], exit_code: int, stderr: str = "") -> tuple[int, list[str], str]:
    """The workflow's gate step under bash with a stub `evals`: its exit status, the stub's arguments, the summary."""
    stub = tmp_path / "bin" / "evals"
    stub.parent.mkdir()
    stub.write_text(
        f'#!/bin/bash\nprintf "%s\\n" "$@" > "$RUNNER_TEMP/args"\necho report\nprintf "{stderr}" >&2\nexit {exit_code}\n'
    )
    stub.chmod(0o755)
    summary = tmp_path / "summary.md"
    env = {
        "PATH": f"{stub.parent}:/usr/bin:/bin",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_STEP_SUMMARY": str(summary),
        "BASE_SHA": "b" * 40,
        "SITE_URL": "https://example.invalid/evals",
        "LABELS": json.dumps(labels),
    }
    done = subprocess.run(["bash", "-e", "-c", gate_step()["run"]], env=env, capture_output=True, text=True)
    args = (tmp_path / "args").read_text().splitlines()
    return done.returncode, args, summary.read_text() if summary.exists() else ""


def test_the_workflow_passes_gate_allow_labels_and_fails_with_the_gate(tmp_path):
    """Labels gate-allow:X become --allow X (other labels are ignored); the gate's exit 1 fails the step."""
    status, args, _ = run_gate_step(tmp_path, ["bug", "gate-allow:mneme", "gate-allow:bm25-k5-4cceb9d7"], 1)
    assert status == 1
    assert args[-4:] == ["--allow", "mneme", "--allow", "bm25-k5-4cceb9d7"] and args.count("--allow") == 2


def test_the_workflow_puts_a_usage_error_in_the_summary(tmp_path):
    """The gate's exit 2 fails the step, and its one-line error reaches the job summary."""
    status, _, summary = run_gate_step(tmp_path, [], 2, "Error: nothing comparable")
    assert status == 2 and "could not compare" in summary and "Error: nothing comparable" in summary


def test_the_readme_documents_the_gate_and_the_workflow():
    """Every option of `evals gate` is in docs/cli.md; the workflow, how to re-run and how to accept a drop in docs/gate.md."""
    import click

    reference = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    guide = (ROOT / "docs" / "gate.md").read_text(encoding="utf-8")
    options = [p.opts[0] for p in cli.commands["gate"].params if isinstance(p, click.Option)]
    assert [o for o in options if f"`{o}" not in reference] == []
    assert ".github/workflows/gate.yml" in guide and "gate-allow:CONFIG" in guide and "**Re-run**" in guide


def test_a_long_list_of_lost_points_is_cut_and_says_so(store_path, lockers, monkeypatch):
    """Past MAX_FLIPS_SHOWN lost test points, the Markdown stops and counts the rest (JSON keeps them all)."""
    from evals.views import gate_report

    monkeypatch.setattr(gate_report, "MAX_FLIPS_SHOWN", 5)
    base, head = append(store_path, "full_history", lockers), append(store_path, "no_memory", lockers)
    with Store.open(store_path, read_only=True) as store:
        markdown = gate_markdown(gate(store, base, head))
    assert len(table_rows(markdown)[1]) == 1 + 5 and "… and 7 more (`--format json` lists every one)." in markdown
