"""The plug-in boundary of benchmark units, tried from outside the package as a third party would: a unit is
checked field by field when registered, a plug-in breaks only itself (its claims, its protocols, its importer,
its turn naming), claims reach another benchmark only by a claims entry point, and a unit not installed is
named by reference."""

from __future__ import annotations

import importlib
import json
import shutil
import sys
import textwrap
import uuid

import pytest
from helpers import PLUGINS, ROOT
from helpers.cli import evals
from helpers.plugins import dist_info

from evals.benchmarks import protocol_class, protocol_specs, published_claims, unit, units
from evals.benchmarks.turn_ids import TurnIds
from evals.errors import EvalsError

UNITS = "mneme_evals.benchmarks"
CLAIMS = "mneme_evals.claims"
TOY = PLUGINS / "toy_benchmark"
KEY = "sk-boundary-0123456789abcdefghij"

# One well-formed claim row; a test changes a field, or the benchmark it is read for.
CLAIM = """
[[claim]]
system = "Forged memory"
version = "1"
figure = "recall"
value = VALUE
metric = "recall_any"
k = K
level = "turn"
population = "every question"
measured_by = "a test (self-reported)"
source = { url = "https://example.invalid/claims" }
"""


def claim_text(value: str = "0.5", k: str = "10") -> str:
    return CLAIM.replace("VALUE", value).replace("K", k)


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """``install(entry_points, source, group=UNITS, files={})``: a distribution in its own folder on sys.path whose
    module is ``source`` (beside it the toy unit's module and ``files``); returns the distribution and module."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    made: list[str] = []

    def install(names: dict[str, str], source: str, group: str = UNITS, files: dict | None = None) -> tuple[str, str]:
        distribution = f"boundary-{uuid.uuid4().hex[:10]}"
        module = distribution.replace("-", "_")
        site = tmp_path / distribution
        dist_info(site, distribution, "1.0", {name: f"{module}:{attr}" for name, attr in names.items()}, group=group)
        package = site / module
        package.mkdir()
        (package / "__init__.py").write_text(textwrap.dedent(source).replace("MODULE", module), encoding="utf-8")
        for name, text in (files or {}).items():
            (package / name).write_text(text, encoding="utf-8")
        shutil.copy(TOY / "toy_benchmark_unit.py", site)
        monkeypatch.syspath_prepend(str(site))
        importlib.invalidate_caches()
        made.append(module)
        return distribution, module

    yield install
    for module in (*made, "toy_benchmark_unit"):
        sys.modules.pop(module, None)


def toy_unit(change: str) -> str:
    """A unit module: the toy unit, changed by the line ``change``."""
    return f"from dataclasses import replace\nfrom toy_benchmark_unit import UNIT as TOY, RULE\n{change}\n"


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


def test_a_unit_with_bad_fields_is_left_out_with_one_line_per_field(installed, capsys):
    """A unit whose title is blank and whose release has no http(s) homepage is left out, each field named on a line."""
    distribution, _ = installed(
        {"toy": "UNIT"}, toy_unit("UNIT = replace(TOY, title=' ', releases=(replace(TOY.releases[0], homepage='ftp:x'),))")
    )
    assert "toy" not in units()
    lines = warnings_of(capsys.readouterr().err)
    assert lines[0] == f"warning: benchmark toy ({distribution} 1.0) is left out: its fields are not valid:"
    assert any(line.endswith(": title: must be a non-empty string") for line in lines)
    assert any(": releases[0].homepage: must be an http(s) URL, got 'ftp:x'" in line for line in lines)


def test_a_release_neither_importable_nor_saying_why_is_refused(installed, capsys):
    """A release whose importer is None must say why (not_importable), or its unit is left out naming that field."""
    installed({"toy": "UNIT"}, toy_unit("UNIT = replace(TOY, releases=(replace(TOY.releases[0], importer=None),))"))
    assert "toy" not in units()
    assert "releases[0]: not_importable: must say why, where importer is None" in capsys.readouterr().err


def test_fetch_of_a_release_without_a_pinned_file_says_how_to_import_it(installed):
    """`evals fetch` on a unit with an importer and no data file (docs/layout.md's example) says what to do instead."""
    installed({"toy": "UNIT"}, toy_unit("UNIT = TOY"))
    result = evals("fetch", "toy")
    assert result.exit_code == 1
    assert "toy pins no published file to fetch" in result.output
    assert "evals import-corpus toy FILE" in result.output


@pytest.mark.parametrize(
    "text",
    [
        claim_text(value="nan"),
        claim_text(value="inf"),
        claim_text(value="-0.1"),
        claim_text(k="0"),
        'benchmark = "locomo"\n' + claim_text(),
    ],
    ids=["nan", "inf", "negative", "k0", "another_benchmark_key"],
)
def test_a_bad_claims_file_leaves_out_only_its_units_claims(installed, capsys, text):
    """A plug-in unit's bad claims.toml leaves out that unit's claims with one warning; the built-ins' are all there."""
    built_in = len(published_claims())
    capsys.readouterr()
    distribution, _ = installed(
        {"toy": "UNIT"},
        toy_unit("from evals.benchmarks.kit import claims_in\nUNIT = replace(TOY, claims=claims_in(__name__, 'toy'))"),
        files={"claims.toml": text},
    )
    claims = published_claims()
    assert len(claims) == built_in and not any(c.benchmark == "toy" for c in claims)
    lines = warnings_of(capsys.readouterr().err)
    assert len(lines) == 1 and lines[0].startswith(f"warning: benchmark toy ({distribution} 1.0): its claims are left out: ")


def test_a_raising_claims_function_leaves_out_only_its_units_claims(installed, capsys):
    """A unit whose claims function raises loses its claims with one warning; the leaderboard command still works."""
    installed(
        {"toy": "UNIT"}, toy_unit("def boom():\n    raise RuntimeError('no claims today')\nUNIT = replace(TOY, claims=boom)")
    )
    assert any(c.benchmark == "locomo" for c in published_claims())
    assert "its claims are left out: RuntimeError: no claims today" in capsys.readouterr().err


def test_a_plugins_claims_stay_on_its_own_benchmark(installed, capsys):
    """A plug-in unit whose claims name LoCoMo puts no row on LoCoMo's board: its claims are left out, with a warning."""
    locomo = [c for c in published_claims() if c.benchmark == "locomo"]
    installed(
        {"toy": "UNIT"},
        toy_unit("from evals.benchmarks.kit import claims_in\nUNIT = replace(TOY, claims=claims_in(__name__, 'locomo'))"),
        files={"claims.toml": claim_text()},
    )
    assert [c for c in published_claims() if c.benchmark == "locomo"] == locomo
    assert "its claims file holds the claims of 'locomo', not 'toy'" in capsys.readouterr().err


def test_a_claims_entry_point_adds_labelled_claims_to_its_benchmark(installed):
    """A claims entry point named for LoCoMo adds its file's claims to LoCoMo's board, labelled with the distribution."""
    distribution, _ = installed(
        {"locomo": "CLAIMS"},
        "from evals.benchmarks.kit import claims_in\nCLAIMS = claims_in(__name__, 'locomo', 'more.toml')\n",
        group=CLAIMS,
        files={"more.toml": claim_text()},
    )
    added = [c for c in published_claims() if c.system == "Forged memory"]
    assert [(c.benchmark, c.origin) for c in added] == [("locomo", f"{distribution} 1.0")]
    assert added[0].label == f"Forged memory: recall (added by {distribution} 1.0)"
    assert added[0].measured_by == f"a test (self-reported); added by {distribution} 1.0"  # what the boards show


def test_a_claims_entry_point_for_another_benchmark_is_refused(installed, capsys):
    """A claims entry point named for LoCoMo whose file holds LongMemEval's claims adds nothing, with one warning."""
    installed(
        {"locomo": "CLAIMS"},
        "from evals.benchmarks.kit import claims_in\nCLAIMS = claims_in(__name__, 'longmemeval')\n",
        group=CLAIMS,
        files={"claims.toml": claim_text()},
    )
    assert not [c for c in published_claims() if c.system == "Forged memory"]
    assert "its claims file holds the claims of 'longmemeval', not 'locomo'" in capsys.readouterr().err


def test_builtin_protocol_names_cannot_be_taken(installed, capsys):
    """A plug-in unit declaring a protocol `locomo` is refused with a warning; `--protocol locomo` stays the built-in's."""
    built_in = protocol_specs()["locomo"]
    distribution, _ = installed(
        {"toy": "UNIT"},
        toy_unit(
            "from evals.benchmarks.kit import ProtocolSpec\n"
            "UNIT = replace(TOY, protocols={'locomo': ProtocolSpec(lambda: object, None, scores='mine')})"
        ),
    )
    assert "toy" in units()
    assert protocol_specs()["locomo"] is built_in
    assert f"warning: benchmark toy ({distribution} 1.0): its protocol 'locomo' is ignored" in capsys.readouterr().err


def test_a_plugin_protocol_that_fails_to_load_is_one_line(installed):
    """A plug-in protocol whose class cannot be imported is one error line naming it and its unit, not a traceback."""
    distribution, _ = installed(
        {"toy": "UNIT"},
        toy_unit(
            "from evals.benchmarks.kit import ProtocolSpec\ndef boom():\n    raise ImportError('no judge library')\n"
            "UNIT = replace(TOY, protocols={'toyqa': ProtocolSpec(boom, None, scores='exact match')})"
        ),
    )
    with pytest.raises(EvalsError) as raised:
        protocol_class("toyqa")
    assert (
        str(raised.value) == f"protocol toyqa (benchmark toy, {distribution} 1.0) failed to load: ImportError: no judge library"
    )


@pytest.mark.parametrize(
    ("body", "said"),
    [
        (f"raise RuntimeError('upstream refused key {KEY}')", "its importer failed: RuntimeError: upstream refused key ***"),
        ("return 'done'", "its importer returned a str, not an ImportReport"),
    ],
    ids=["raises", "returns_a_string"],
)
def test_a_faulty_importer_is_one_line_that_never_echoes_the_key(installed, tmp_path, monkeypatch, body, said):
    """An importer that raises (echoing the API key) or returns a string: `evals import-corpus` says so on one line."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    installed({"toy": "UNIT"}, toy_unit(f"def bad(file, out):\n    {body}\nUNIT = replace(TOY, importer=bad)"))
    source = tmp_path / "toy.json"
    source.write_text("[]")
    result = evals("import-corpus", "toy", source, "--out", tmp_path / "out")
    assert result.exit_code == 1 and result.exception is None or isinstance(result.exception, SystemExit)
    assert result.output == f"Error: import toy: {said}\n"
    assert KEY not in result.output


def test_a_raising_turn_name_falls_back_to_the_harness_naming(installed, capsys):
    """A unit whose turn_name raises: its turns are named as the harness names them, with one warning."""
    installed(
        {"toy": "UNIT"},
        toy_unit("def name(turn, session, place):\n    raise KeyError(turn)\nUNIT = replace(TOY, turn_name=name)"),
    )
    ids = TurnIds(["session_1", "session_1"], benchmark="toy")
    assert [ids.label(0), ids.label(1)] == ["D1:1", "D1:2"]
    assert capsys.readouterr().err.count("its turn_name raises KeyError") == 1


def test_a_unit_named_by_reference_is_registered(tmp_path, monkeypatch):
    """A unit not installed, named as package.module:ATTR, is found through the same loader and registered while imported."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "referenced_unit.py").write_text(toy_unit("UNIT = replace(TOY, name='tinymem')"), encoding="utf-8")
    shutil.copy(TOY / "toy_benchmark_unit.py", tmp_path)
    try:
        assert unit("referenced_unit:UNIT").name == "tinymem"
        assert "tinymem" in units()
    finally:
        for module in ("referenced_unit", "toy_benchmark_unit"):
            sys.modules.pop(module, None)
    assert "tinymem" not in units()  # registered while its module is imported


def test_a_stored_run_keeps_its_rule_after_its_unit_is_uninstalled(tmp_path, monkeypatch):
    """A run on a toy corpus is read back under the toy's rule once the toy unit is gone, not the harness's."""
    from evals.store import Store

    source = tmp_path / "toy.json"
    source.write_text(
        json.dumps([{"history": ["I moved to Lyon", "Nice"], "question": "Where?", "answer": "Lyon", "evidence": [0]}])
    )
    with monkeypatch.context() as patch:
        patch.syspath_prepend(str(TOY))
        for args in (
            ("import-corpus", "toy", source, "--out", tmp_path / "toy"),
            ("run", "--runner", "recency", "--k", "1", "--corpus", tmp_path / "toy", "--store", tmp_path / "s.duckdb"),
        ):
            result = evals(*args)
            assert result.exit_code == 0, (result.output, result.exception)
    sys.modules.pop("toy_benchmark_unit", None)
    assert "toy" not in units()
    with Store.open(tmp_path / "s.duckdb", read_only=True) as store:
        (summary,) = store.runs()
    assert summary.headline.rule.name == "toy"
    assert summary.headline.rule.population == "every toy question with evidence"


@pytest.mark.slow
def test_build_site_survives_a_raising_turn_name(installed, tmp_path):
    """A stored run on a corpus with sessions whose unit's turn_name raises: `build-site` builds every page, the turns
    named as the harness names them."""
    installed(
        {"toy": "UNIT"},
        toy_unit("def name(turn, session, place):\n    raise KeyError(turn)\nUNIT = replace(TOY, turn_name=name)"),
    )
    corpus = tmp_path / "toy"
    shutil.copytree(ROOT / "tests" / "fixtures" / "sessions_corpus", corpus)
    (corpus / "benchmark.json").write_text('{"name": "toy"}')
    for args in (
        ("run", "--runner", "recency", "--k", "1", "--corpus", corpus, "--store", tmp_path / "s.duckdb"),
        ("build-site", "--store", tmp_path / "s.duckdb", "--out", tmp_path / "site", "--jobs", "1"),
    ):
        result = evals(*args)
        assert result.exit_code == 0, (result.output, result.exception)
    assert (tmp_path / "site" / "index.html").is_file()
