"""A broken benchmark plug-in breaks only itself. A unit that fails to load, is misnamed,
takes a built-in's name or declares a rule with an unknown metric gets one warning line naming its entry
point and distribution and is left out; every other command and benchmark works, and `build-site` never
crashes on a stored run of a unit that is unknown or broken.
"""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from helpers import PLUGINS
from helpers.cli import CORPUS_SMALL, evals
from helpers.plugins import dist_info

from evals.benchmarks import units

GROUP = "mneme_evals.benchmarks"
TOY = PLUGINS / "toy_benchmark"
ITEMS = [{"history": ["I moved to Lyon", "Nice city"], "question": "Where do I live?", "answer": "Lyon", "evidence": [0]}]

# A unit module whose UNIT is the toy's, changed by ``CHANGE`` (a line run after the toy is imported).
UNIT_SOURCE = """
from dataclasses import replace
from toy_benchmark_unit import UNIT as TOY, RULE
CHANGE
"""


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``install(entry_points, source)``: a distribution in its own folder on sys.path, whose module (the one
    each entry point value names) is ``source``; returns the distribution's name. The toy unit's module is
    beside it (not its entry point), so a module may build on the toy unit."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    made: list[str] = []

    def install(names: dict[str, str], source: str) -> str:
        distribution = f"broken-{uuid.uuid4().hex[:10]}"
        module = distribution.replace("-", "_")
        site = tmp_path / distribution
        dist_info(site, distribution, "1.0", {name: f"{module}:{attr}" for name, attr in names.items()}, group=GROUP)
        (site / f"{module}.py").write_text(textwrap.dedent(source), encoding="utf-8")
        shutil.copy(TOY / "toy_benchmark_unit.py", site)
        monkeypatch.syspath_prepend(str(site))
        importlib.invalidate_caches()
        made.append(module)
        return distribution

    yield install
    for module in (*made, "toy_benchmark_unit"):
        sys.modules.pop(module, None)


def unit_source(change: str) -> str:
    return UNIT_SOURCE.replace("CHANGE", change)


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning: benchmark")]


def run_starter(tmp_path: Path):
    return evals("run", "--runner", "recency", "--corpus", CORPUS_SMALL, "--store", tmp_path / "s.duckdb")


def test_unit_that_fails_to_import_breaks_only_itself(installed, tmp_path):
    """A unit whose module raises on import: `evals benchmarks` lists the others with one warning naming the
    entry point and its distribution, and a run on the starter corpus succeeds."""
    distribution = installed({"brokenunit": "UNIT"}, "raise ImportError('a dependency is missing')\n")
    listed = evals("benchmarks")
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert "beam_100k" in listed.stdout and "LoCoMo" in listed.stdout
    assert warning_lines(listed.stderr) == [
        f"warning: benchmark brokenunit ({distribution} 1.0) failed to load: ImportError: a dependency is missing"
    ]
    assert "brokenunit" not in units()
    ran = run_starter(tmp_path)
    assert ran.exit_code == 0, (ran.output, ran.exception)


def test_unit_named_otherwise_than_its_entry_point_breaks_only_itself(installed, tmp_path):
    """A unit whose Unit.name differs from its entry point's name is left out with one warning; runs work."""
    distribution = installed({"othername": "UNIT"}, unit_source("UNIT = TOY"))
    ran = run_starter(tmp_path)
    assert ran.exit_code == 0, (ran.output, ran.exception)
    listed = evals("benchmarks")
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert warning_lines(ran.stderr + listed.stderr) == [  # said once, by whichever command loaded the units first
        f"warning: benchmark othername ({distribution} 1.0) is left out: its Unit is named 'toy', not 'othername'"
    ]
    assert "othername" not in units()


@pytest.mark.parametrize("attribute", ["UNIT", "ZZZ"])
def test_a_plugin_cannot_take_a_builtin_name(installed, attribute):
    """A plug-in registered as `beam` (whether its value sorts before the built-in's or after) is ignored
    with one warning: BEAM's releases stay listed and the unit is the built-in."""
    distribution = installed(
        {"beam": attribute}, unit_source(f"{attribute} = replace(TOY, name='beam', releases=(), importer=None)")
    )
    listed = evals("benchmarks")
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert "beam_100k" in listed.stdout and "beam_10m" in listed.stdout
    assert warning_lines(listed.stderr) == [
        f"warning: benchmark beam ({distribution} 1.0) is ignored: a built-in benchmark has that name"
    ]
    assert units()["beam"].title != "Toy benchmark" and units()["beam"].releases


def test_unit_whose_rule_names_an_unknown_metric_breaks_only_itself(installed, tmp_path):
    """A unit whose rule names no declared metric is left out with one warning, and is no unit."""
    distribution = installed({"toy": "UNIT"}, unit_source("UNIT = replace(TOY, rule=replace(RULE, metric='bogus@5'))"))
    listed = evals("benchmarks")
    assert listed.exit_code == 0, (listed.output, listed.exception)
    assert warning_lines(listed.stderr) == [
        f"warning: benchmark toy ({distribution} 1.0) is left out: its rule names no declared metric: 'bogus@5'"
    ]
    assert "toy" not in units()


def toy_store(tmp_path: Path) -> Path:
    """A store holding one run of recency on a toy corpus (the toy unit on the path while it runs)."""
    source = tmp_path / "toy.json"
    source.write_text(json.dumps(ITEMS))
    for args in (
        ("import-corpus", "toy", source, "--out", tmp_path / "toy"),
        ("run", "--runner", "recency", "--k", "1", "--corpus", tmp_path / "toy", "--store", tmp_path / "s.duckdb"),
    ):
        result = evals(*args)
        assert result.exit_code == 0, (result.output, result.exception)
    return tmp_path / "s.duckdb"


def test_build_site_survives_a_stored_run_of_an_unknown_unit(tmp_path, monkeypatch):
    """A run stored while the toy unit was installed: with the toy gone, `build-site` still builds every page."""
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(TOY))
        store = toy_store(tmp_path)
    sys.modules.pop("toy_benchmark_unit", None)
    assert "toy" not in units()
    built = evals("build-site", "--store", store, "--out", tmp_path / "site")
    assert built.exit_code == 0, (built.output, built.exception)
    assert (tmp_path / "site" / "index.html").is_file()


def test_build_site_survives_a_stored_run_of_a_broken_unit(installed, tmp_path, monkeypatch):
    """A run stored while the toy unit worked, then the toy broken (its rule naming an unknown metric):
    `build-site` builds every page."""
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(TOY))
        store = toy_store(tmp_path)
    sys.modules.pop("toy_benchmark_unit", None)
    installed({"toy": "UNIT"}, unit_source("UNIT = replace(TOY, rule=replace(RULE, metric='bogus@5'))"))
    built = evals("build-site", "--store", store, "--out", tmp_path / "site")
    assert built.exit_code == 0, (built.output, built.exception)
    assert (tmp_path / "site" / "index.html").is_file()


def test_build_site_survives_a_stored_run_of_an_uninstalled_protocol(server, tmp_path, monkeypatch):
    """A run stored under a plug-in's own QA protocol (tests/plugins/toy_qa_benchmark): with the plug-in gone,
    `build-site` still builds every page, the run page naming the protocol it was made under."""
    from helpers.runs import evals_run

    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(PLUGINS / "toy_qa_benchmark"))
        ran = evals_run(server, tmp_path / "s.duckdb", CORPUS_SMALL, "--protocol", "toyqa", "--with-answers", "--judge")
        assert ran.exit_code == 0, (ran.output, ran.exception)
    sys.modules.pop("toy_qa_unit", None)
    built = evals("build-site", "--store", tmp_path / "s.duckdb", "--out", tmp_path / "site")
    assert built.exit_code == 0, (built.output, built.exception)
    pages = [p.read_text(encoding="utf-8") for p in (tmp_path / "site" / "runs").rglob("*.html")]
    assert any('protocol <strong id="protocol">toyqa</strong>' in page for page in pages)
