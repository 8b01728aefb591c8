"""`python -m evals` writes byte for byte what an earlier version wrote, for every strategy."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from evals.cli import legacy_cli

ROOT = Path(__file__).resolve().parent.parent
ARCHIVE = ROOT / "tests" / "fixtures" / "legacy" / "outputs-44774b5.tar.gz"
CORPORA = {"starter": "corpus", "golden": "tests/fixtures/golden"}
EXTRA_ARGS = {"mneme-k10-seed7": ["--k", "10", "--seed", "7"], "random_k-k3-seed7": ["--k", "3", "--seed", "7"]}


def _expected() -> dict[str, bytes]:
    with tarfile.open(ARCHIVE) as archive:
        return {m.name: archive.extractfile(m).read() for m in archive.getmembers() if m.isfile()}


EXPECTED = _expected()


@pytest.mark.parametrize("member", sorted(EXPECTED))
def test_output_is_byte_identical(member: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The same command today writes the same bytes (golden file from commit 44774b5)."""
    folder, name = member.split("/")
    stem = name.removesuffix(".json")
    runner = stem.split("-")[0]
    out = tmp_path / name
    monkeypatch.chdir(ROOT)  # the document records --corpus as given, so give it as the golden run did
    args = ["--runner", runner, "--corpus", CORPORA[folder], "--output", str(out), *EXTRA_ARGS.get(stem, [])]
    result = CliRunner().invoke(legacy_cli, args)
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == EXPECTED[member]
