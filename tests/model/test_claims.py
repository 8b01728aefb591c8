"""Published claims as data (each unit's claims.toml): loaded, validated, and shown beside runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evals.benchmarks import BENCHMARKS, published_claims
from evals.model.claims import ClaimError, load_claims
from evals.model.corpus import benchmark_names

GOOD = """
[[claim]]
benchmark = "locomo"
corpus = "locomo"
system = "Example"
version = "1.0"
figure = "R@10"
value = 0.5
metric = "recall_frac"
k = 10
level = "session"
population = "all questions"
measured_by = "Example (self-reported)"
source = { repository = "example/example", commit = "0123456789abcdef0123456789abcdef01234567", path = "README.md" }
"""


def _figure(system: str, figure_part: str, by: str = "self-reported") -> float:
    found = [c for c in published_claims() if c.system == system and figure_part in c.figure and by in c.measured_by]
    assert len(found) == 1, [c.label for c in found]
    return found[0].value


def test_shipped_claims_hold_the_issue_figures():
    """The shipped file holds mem0's, Zep's and MemPalace's published figures as their sources state them."""
    assert _figure("Mem0", "LoCoMo Overall") == 0.925
    assert _figure("Mem0", "LongMemEval Overall") == 0.944
    assert _figure("Mem0", "BEAM (1M)") == 0.641 and _figure("Mem0", "BEAM (10M)") == 0.486
    assert _figure("Zep", "LOCOMO Overall") == 0.7514
    assert _figure("MemPalace raw (ChromaDB, default embeddings)", "R@5") == 0.966
    assert _figure("MemPalace raw, session documents", "Session, no rerank") == 0.603
    assert _figure("MemPalace raw, dialog documents", "Dialog, no rerank") == 0.480
    assert any(c.system == "Mem0" and c.value == 0.6688 for c in published_claims())  # the paper's, as AMB lists it


def test_shipped_claims_cover_omnimemeval_and_amb():
    """OmniMemEval's 14 reproduced LoCoMo rows and AMB's external rows are there, each pinned to its file."""
    omni = [c for c in published_claims() if c.source.repository == "MemTensor/OmniMemEval" and c.benchmark == "locomo"]
    assert len(omni) == 14 and all(c.questions == 1540 for c in omni)
    amb = [c for c in published_claims() if c.source.repository == "vectorize-io/agent-memory-benchmark"]
    assert amb and all(c.source.path == "external_results.json" for c in amb)


def test_shipped_claims_name_registered_benchmarks_and_corpora():
    """Every claim's benchmark is a registered unit and its corpus, where given, a registry corpus."""
    for claim in published_claims():
        assert claim.benchmark in benchmark_names(), claim.label
        assert claim.corpus is None or claim.corpus in BENCHMARKS, claim.label


def test_a_claim_file_loads(tmp_path: Path):
    """A well-formed file gives its claims, with a link to the source at its commit."""
    path = tmp_path / "claims.toml"
    path.write_text(GOOD)
    (claim,) = load_claims(path)
    assert claim.source.href == "https://github.com/example/example/blob/0123456789abcdef0123456789abcdef01234567/README.md"


def _refused(tmp_path: Path, old: str, new: str, said: str) -> None:
    """GOOD with ``old`` written as ``new`` is refused with an error matching ``said``."""
    path = tmp_path / "claims.toml"
    path.write_text(GOOD.replace(old, new))
    with pytest.raises(ClaimError, match=said):
        load_claims(path)


def test_a_bad_field_names_the_file_and_the_field(tmp_path: Path):
    """A percentage where a fraction belongs is refused, naming the file, the claim and the field."""
    _refused(tmp_path, "value = 0.5", "value = 50", r"claims\.toml: claim\[0\]\.value \(Example\): .*fraction")


def test_an_unpinned_source_is_refused(tmp_path: Path):
    """A repository source without the commit it was read at is refused."""
    _refused(tmp_path, 'commit = "0123456789abcdef0123456789abcdef01234567", ', "", r"claim\[0\]\.source .*commit")


def test_a_missing_field_is_refused(tmp_path: Path):
    """A claim without its population is refused, naming the field."""
    _refused(tmp_path, 'population = "all questions"\n', "", r"claim\[0\]\.population")


def test_a_units_file_holds_only_that_units_claims(tmp_path: Path):
    """Read as a unit's file, a claim takes the unit's benchmark, and one naming another benchmark is refused."""
    path = tmp_path / "claims.toml"
    path.write_text(GOOD.replace('benchmark = "locomo"\n', ""))
    assert [c.benchmark for c in load_claims(path, benchmark="locomo")] == ["locomo"]
    path.write_text(GOOD)
    with pytest.raises(ClaimError, match=r"claims\.toml: claim\[0\]\.benchmark: this file holds the claims of 'beam'"):
        load_claims(path, benchmark="beam")


def test_each_unit_ships_its_own_claims():
    """The claims come from the units (each folder's claims.toml): every built-in unit with claims names only itself."""
    from evals.benchmarks import units

    by_unit = {name: found.claims() for name, found in units().items() if found.claims is not None}
    assert {"locomo", "longmemeval", "beam"} <= set(by_unit)
    assert all(c.benchmark == name for name, claims in by_unit.items() for c in claims)
    assert sum(len(c) for c in by_unit.values()) == len(published_claims())


@pytest.mark.parametrize("url", ["javascript:alert(1)", "data:text/html,x", "java\tscript:x", " JavaScript:x", "https:"])
def test_a_claim_source_that_is_no_web_address_is_refused(tmp_path, url):
    """A claims file whose source url is not http(s) is refused, naming the file and the field."""
    path = tmp_path / "claims.toml"
    path.write_text(
        '[[claim]]\nbenchmark = "locomo"\nsystem = "S"\nversion = "1"\nfigure = "R@10"\nvalue = 0.5\n'
        'metric = "recall_frac"\nk = 10\nlevel = "session"\npopulation = "all"\nmeasured_by = "self"\n'
        f"source = {{ url = {json.dumps(url)} }}\n"
    )
    with pytest.raises(ClaimError, match=r"claims\.toml: claim\[0\]\.source\.url \(S\): must be an http\(s\) address"):
        load_claims(path)
