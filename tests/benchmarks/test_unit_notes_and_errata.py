"""What a unit says of the harness's metrics (``metric_notes``) and the answer-key audits it reads (``errata``): each
said in the unit alone, read through the registry by every surface; a plug-in outside the package brings its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers.plugins import dist_info

from evals.benchmarks import errata_formats, metric_description
from evals.cli import cli
from evals.judge.metrics import METRICS

UNIT = """
import json
from pathlib import Path

from evals.benchmarks.kit import ErrataFormat, Unit


class Report:
    def __init__(self, document):
        self.document = document

    def summary(self):
        return f"toy audit: {len(self.document['read'])} files read"


def convert(source, audited, commit, exclude_kinds):
    return Report({"read": [Path(source).name, Path(audited).name], "commit": commit, "exclude": sorted(exclude_kinds)})


SAID = "The toy file the audit audited."
AUDIT = ErrataFormat("a toy audit folder", "one toy test point", "--toy-file", SAID, "data/toy.json", convert)
NOTES = {"answer_f1": "Toy: its F1 is the harness's.", "recall_frac": "Toy: its own retrieval recall."}
UNIT = Unit("toynotes", "Toy notes", (), metric_notes=NOTES, errata={"toy-audit": AUDIT})
"""


@pytest.fixture
def plugin(monkeypatch, tmp_path) -> Path:
    """A unit with a metric note and an errata format, installed as pip installs a plug-in, for one test."""
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "toy_notes_unit.py").write_text(UNIT, encoding="utf-8")
    dist_info(site, "toy-notes", "1.0", {"toynotes": "toy_notes_unit:UNIT"}, group="mneme_evals.benchmarks")
    monkeypatch.syspath_prepend(str(site))
    return tmp_path


def invoke(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    return result.exit_code, result.output


def test_a_metric_s_description_ends_with_what_each_unit_notes_of_it(plugin):
    """A metric's description is the judge's, then each unit's note of it, in the units' order (LoCoMo's first)."""
    described = metric_description("answer_f1", METRICS["answer_f1"].description)
    assert described.startswith(METRICS["answer_f1"].description + " ")
    assert described.endswith(" Toy: its F1 is the harness's.")
    assert described.index("LoCoMo's protocol") < described.index("Toy:")


def test_a_retrieval_metric_at_any_level_and_cutoff_carries_its_family_s_notes(plugin):
    """A note keyed by a retrieval family (recall_frac) follows its figure at every level and cutoff."""
    assert metric_description("session.recall_frac@10", "Mean fraction.").endswith(" Toy: its own retrieval recall.")


def test_a_metric_no_unit_notes_keeps_the_judge_s_description():
    """Without a unit's note, the description is the judge's, unchanged."""
    assert (
        metric_description("keyword_accuracy", METRICS["keyword_accuracy"].description) == METRICS["keyword_accuracy"].description
    )


def test_import_errata_offers_each_unit_s_format_and_its_option(plugin):
    """`evals import-errata --help` lists the plug-in's format, what it corrects and its own file option."""
    assert "toy-audit" in errata_formats()
    code, output = invoke("import-errata", "--help")
    assert code == 0
    assert "toy-audit     a toy audit folder" in output
    assert "--toy-file FILE" in output and "The toy file the audit audited." in output
    assert "one LoCoMo test point or one toy test point" in " ".join(output.split())


def test_a_plug_in_s_audit_is_converted_by_its_unit(plugin):
    """`evals import-errata toy-audit` hands the unit's converter SOURCE, the file its option names, the commit and
    the kinds left out, and writes the document it returns."""
    source = plugin / "audit"
    source.mkdir()
    audited = plugin / "mine.json"
    audited.write_text("{}", encoding="utf-8")
    out = plugin / "errata.json"
    code, output = invoke(
        "import-errata", "toy-audit", source, "--toy-file", audited, "--out", out, "--commit", "abc", "--exclude", "X"
    )
    assert code == 0, output
    assert output.strip() == f"toy audit: 2 files read -> {out}"
    assert json.loads(out.read_text(encoding="utf-8")) == {"read": ["audit", "mine.json"], "commit": "abc", "exclude": ["X"]}


def test_without_its_option_the_audited_file_is_the_unit_s_default_under_source(plugin):
    """Left out, the audited file is SOURCE/<the unit's default>; missing, the usage error names the unit's option."""
    source = plugin / "audit"
    source.mkdir()
    code, output = invoke("import-errata", "toy-audit", source, "--out", plugin / "errata.json")
    assert code == 2
    assert f"{source / 'data' / 'toy.json'}: no such file; give the file the audit audited with --toy-file" in output
