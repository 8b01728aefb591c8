"""Errata and the label audit: `import-errata`, `audit-labels --errata/--source`, `leaderboard --errata`.

Each test is named for what must hold. The corpus is the planted LoCoMo
fixture of the label audit (tests/fixtures/audit/locomo_planted.json); the audit copies are written here
in dial481/locomo-audit's layout. A refused command is one line naming the file and the field, and
leaves every file as it was.
"""

from __future__ import annotations

import hashlib
import json
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import FIXTURES
from helpers.audit import PLANTED, audit_entry, write_audit

from evals.benchmarks.formats import import_corpus
from evals.cli import cli

LONGMEMEVAL = FIXTURES / "importers" / "longmemeval_small.json"


def evals(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def one_line_error(result) -> str:
    assert result.exit_code == 1, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def write(path: Path, errata: list[dict], **top) -> Path:
    path.write_text(json.dumps({"source": "a hand check of the fixture", **top, "errata": errata}), encoding="utf-8")
    return path


@pytest.fixture
def audit_copy(tmp_path) -> Path:
    """A copy of the audit's layout, one correction in errors_conv_0.json."""
    question = "Which composer does Bob play?"
    entry = audit_entry("locomo_0_qa1", question, "Vivaldi", ["D1:3"], ["D1:4"], "Vivaldi", "WRONG_CITATION")
    return write_audit(tmp_path / "locomo-audit", {0: [entry]}, "Attribution-NonCommercial 4.0 International\n")


@pytest.fixture
def corpus(tmp_path) -> Path:
    out = tmp_path / "planted"
    import_corpus("locomo", PLANTED, out)
    return out


# -- data loss ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("inside", ["audit/errors_conv_0.json", "LICENSE", "audit/new.json"])
def test_import_errata_never_writes_inside_the_audit_it_reads(audit_copy, inside):
    """--out inside SOURCE (one of its audit files, its LICENSE, or a new file there) is refused; SOURCE is unchanged."""
    before = snapshot(audit_copy)
    line = one_line_error(evals("import-errata", "locomo-audit", audit_copy, "--out", audit_copy / inside))
    assert "--out" in line and str(audit_copy) in line
    assert snapshot(audit_copy) == before


# -- tracebacks ---------------------------------------------------------------------------------------------------


def test_correct_evidence_that_is_not_dia_ids_is_one_line(audit_copy, tmp_path):
    """"correct_evidence": [1, 2] is refused in one line naming the file and the field."""
    entry = audit_entry("locomo_0_qa1", "Which composer does Bob play?", "Vivaldi", ["D1:3"], [1, 2], "Vivaldi", "WRONG_CITATION")
    (audit_copy / "audit" / "errors_conv_0.json").write_text(json.dumps([entry]))
    line = one_line_error(evals("import-errata", "locomo-audit", audit_copy, "--out", tmp_path / "e.json"))
    assert "errors_conv_0.json: [0].correct_evidence" in line
    assert not (tmp_path / "e.json").exists()


# -- silently wrong -----------------------------------------------------------------------------------------------


def test_audit_labels_refuses_errata_of_another_benchmark(corpus, tmp_path):
    """An errata file for longmemeval given to audit-labels on a LoCoMo corpus is refused, as leaderboard --errata does."""
    entry = {"conversation": "conv-1", "turn": 9, "evidence_turns": [3], "reason": "x"}
    errata = write(tmp_path / "e.json", [entry], benchmark="longmemeval")
    line = one_line_error(evals("audit-labels", corpus, "--errata", errata))
    assert line.startswith(f"Error: {errata}: benchmark: ") and "locomo" in line


def test_audit_labels_refuses_a_source_of_another_benchmark(corpus):
    """--source naming a LongMemEval file for a LoCoMo corpus is refused in one line, not recorded."""
    line = one_line_error(evals("audit-labels", corpus, "--source", LONGMEMEVAL))
    assert str(LONGMEMEVAL) in line and "locomo" in line


def test_an_erratum_that_only_says_exclude_false_corrects_nothing(corpus, tmp_path):
    """"exclude": false with no correction is refused as correcting nothing, not counted as one correction."""
    errata = write(tmp_path / "e.json", [{"conversation": "conv-1", "turn": 9, "exclude": False, "reason": "x"}])
    line = one_line_error(evals("audit-labels", corpus, "--errata", errata))
    assert line.startswith(f"Error: {errata}: errata[0]: corrects nothing")


def test_an_errata_file_matching_two_corpora_is_refused(corpus, tmp_path):
    """Without "benchmark", a file whose conversations are in two stored corpora is refused: one file corrects one corpus."""
    copy = tmp_path / "one-conversation"
    shutil.copytree(corpus, copy)
    for extra in sorted(copy.glob("*.json"))[1:]:
        if extra.name != "benchmark.json":
            extra.unlink()
    store = tmp_path / "s.duckdb"
    for folder in (corpus, copy):
        made = evals("run", "--runner", "recency", "--corpus", folder, "--store", store, "--k", "1")
        assert made.exit_code == 0, made.output
    errata = write(tmp_path / "e.json", [{"conversation": "conv-1", "turn": 9, "evidence_turns": [3], "reason": "x"}])
    line = one_line_error(evals("leaderboard", "--store", store, "--errata", errata))
    assert line.startswith(f"Error: {errata}: ") and "one errata file corrects one corpus" in line
    assert "planted" in line and "one-conversation" in line


def test_import_errata_never_writes_a_file_its_reader_refuses(audit_copy, tmp_path):
    """An audit entry with "error_type": "" is refused (naming the field) rather than written as an empty kind."""
    entry = audit_entry("locomo_0_qa1", "Which composer does Bob play?", "Vivaldi", ["D1:3"], ["D1:4"], "Vivaldi", "")
    (audit_copy / "audit" / "errors_conv_0.json").write_text(json.dumps([entry]))
    out = tmp_path / "e.json"
    line = one_line_error(evals("import-errata", "locomo-audit", audit_copy, "--out", out))
    assert "error_type" in line or "kind" in line
    assert not out.exists()


# -- leftovers -----------------------------------------------------------------------------------------------------


def test_an_oversized_audit_file_is_refused_before_it_is_read(audit_copy, tmp_path):
    """A 3 GB errors_conv_0.json is refused by its size (64 MB limit), never read whole (here under a 1.5 GB memory limit)."""
    big = audit_copy / "audit" / "errors_conv_0.json"
    with open(big, "wb") as file:
        file.truncate(3 * 1024**3)  # sparse: no disk used

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1536 * 1024**2, 1536 * 1024**2))

    command = ["import-errata", "locomo-audit", str(audit_copy), "--out", str(tmp_path / "e.json")]
    done = subprocess.run(
        [sys.executable, "-c", "from evals.cli import cli; cli()", *command],
        capture_output=True, text=True, timeout=120, preexec_fn=limit,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "not read" in done.stderr and "errors_conv_0.json" in done.stderr and "out of memory" not in done.stderr, done.stderr
