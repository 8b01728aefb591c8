"""`--executor ray` on a real cluster of two nodes: `ray start --head` and a second `ray start --address`.

Both nodes run on loopback in this machine, each with one CPU, its own temporary folder and its
own ports (chosen free), started with ``--block`` in a process group of their own, so the fixture
stops exactly what it started (never `ray stop`, which would stop every Ray on the machine). The
cluster asks for a token (``RAY_AUTH_MODE=token``, as docs/cli.md says a `ray start` cluster may);
the token is made up here and given to both nodes and to the `evals run` that joins them, which is
a separate process, as a user's would be. Workers find the test plug-ins through PYTHONPATH.

The corpus is LongMemEval-shaped (bench/gen_longmemeval.py, imported with `evals import-corpus`):
sessions, dates, evidence turns and an abstention, as the issue's data has.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pytest
from helpers import PLUGINS, ROOT
from helpers.stores import stored_rows

pytest.importorskip("ray", reason="needs the ray extra: pip install -e '.[ray]'")

from evals.model.corpus import load_corpus  # noqa: E402
from evals.run.evaluate import RunConfig  # noqa: E402
from evals.run.workflow import run_with_store  # noqa: E402

pytestmark = pytest.mark.slow

RAY = Path(sys.executable).with_name("ray")
STARTED = "Ray runtime started."
START_TIMEOUT = 180  # seconds for a node to come up on a loaded machine
STOP_TIMEOUT = 60


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Cluster:
    address: str
    env: dict[str, str]  # what a driver joining it needs (the token among it)


def _node_ports() -> list[str]:
    """Every port a node would otherwise take from a fixed default, chosen free."""
    names = (
        "node-manager",
        "object-manager",
        "dashboard-agent-listen",
        "dashboard-agent-grpc",
        "runtime-env-agent",
        "metrics-export",
    )
    return [arg for name in names for arg in (f"--{name}-port", str(free_port()))]


def _start_node(args: list[str], folder: Path, env: dict[str, str]) -> subprocess.Popen:
    """`ray start --block ARGS` in a process group of its own; returns once the node says it started."""
    folder.mkdir()
    log = folder / "ray-start.log"
    command = [
        str(RAY), "start", "--block", "--node-ip-address", "127.0.0.1", "--num-cpus", "1",
        "--object-store-memory", str(128 * 1024**2), "--temp-dir", str(folder / "tmp"), "--disable-usage-stats",
        *_node_ports(), *args,
    ]  # fmt: skip
    with log.open("wb") as out:
        node = subprocess.Popen(
            command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    deadline = time.monotonic() + START_TIMEOUT
    while STARTED not in log.read_text(encoding="utf-8", errors="replace"):
        if node.poll() is not None or time.monotonic() > deadline:
            _stop_node(node)
            pytest.fail(f"ray start {' '.join(args)} did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.5)
    return node


def _stop_node(node: subprocess.Popen) -> None:
    """Stop the node's process group (`ray start --block` stops its raylet and workers on SIGTERM)."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT), (signal.SIGKILL, 10)):
        try:
            os.killpg(node.pid, sig)
        except ProcessLookupError:
            return
        try:
            node.wait(wait)
        except subprocess.TimeoutExpired:
            continue
        try:  # the leader is gone; anything left in its group goes too
            os.killpg(node.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return


@pytest.fixture(scope="module")
def cluster() -> Cluster:
    # A short folder of its own: Ray's socket paths under it must fit in 107 bytes (AF_UNIX).
    root = Path(tempfile.mkdtemp(prefix="evrc-"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("RAY_")}
    env.update(
        RAY_AUTH_MODE="token",
        RAY_AUTH_TOKEN=secrets.token_hex(16),  # this cluster's own, for this test only
        RAY_USAGE_STATS_ENABLED="0",
        PYTHONPATH=os.pathsep.join(p for p in (str(PLUGINS), os.environ.get("PYTHONPATH", "")) if p),
    )
    gcs = free_port()
    nodes: list[subprocess.Popen] = []
    try:
        head_args = ["--head", "--port", str(gcs), "--include-dashboard", "false", "--ray-client-server-port", str(free_port())]
        nodes.append(_start_node(head_args, root / "head", env))
        nodes.append(_start_node(["--address", f"127.0.0.1:{gcs}"], root / "worker", env))
        yield Cluster(address=f"127.0.0.1:{gcs}", env=env)
    finally:
        for node in reversed(nodes):
            _stop_node(node)
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def lme_corpus(tmp_path_factory) -> Path:
    """Eight LongMemEval-shaped questions (48 sessions of 10 turns each), imported as a corpus."""
    folder = tmp_path_factory.mktemp("lme")
    source, corpus = folder / "lme.json", folder / "corpus"
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from gen_longmemeval import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate(source, 8, seed=3, abs_every=4)
    evals(["import-corpus", "longmemeval", str(source), "--out", str(corpus)])
    return corpus


def evals(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The `evals` command in a process of its own; fails the test with its output when it fails."""
    done = subprocess.run([sys.executable, "-m", "evals", *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"evals {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def on_cluster(cluster: Cluster, strategy: str, corpus: Path, store: Path, *extra: str) -> None:
    evals(
        ["run", "--runner", strategy, "--corpus", str(corpus), "--store", str(store), "--force",
         "--executor", "ray", "--ray-address", cluster.address, *extra],
        cluster.env,
    )  # fmt: skip


def run_ids(store: Path) -> set[str]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return {row[0] for row in con.execute("SELECT run_id FROM runs").fetchall()}
    finally:
        con.close()


def test_conversations_are_played_on_both_nodes(cluster, lme_corpus, tmp_path):
    """Each conversation is played once, as a task, and the two nodes both take some."""
    marks = tmp_path / "marks"
    marks.mkdir()
    on_cluster(cluster, "node_marking_strategy:SPEC", lme_corpus, tmp_path / "r.duckdb", "--option", f"marks={marks}")
    played = {mark.name: mark.read_text(encoding="utf-8") for mark in marks.iterdir()}
    assert sorted(played) == sorted(c.id for c in load_corpus(lme_corpus).conversations)
    assert "local" not in played.values()
    assert len(set(played.values())) == 2, f"every conversation ran on one node: {played}"


@pytest.mark.parametrize("strategy", ["mneme", "bm25", "summary_buffer"])
def test_a_cluster_run_stores_what_a_local_run_stores(cluster, lme_corpus, tmp_path, strategy):
    """The run played on the two nodes stores the local run's rows, test point by test point, timings aside."""
    store = tmp_path / "results.duckdb"
    local = run_with_store(RunConfig(strategy=strategy, corpus=lme_corpus), store, force=True, repo=ROOT)
    on_cluster(cluster, strategy, lme_corpus, store)
    (remote,) = run_ids(store) - {local.run_id}
    assert stored_rows(store, remote) == stored_rows(store, local.run_id)
