"""docs/benchmarks.md tells one truth about each benchmark's judge: a unit that ships a judged protocol is never
said to have none, and every protocol a unit ships is named in the docs.
"""

from __future__ import annotations

import re

from helpers import ROOT

from evals.benchmarks import units

DOCS = ROOT / "docs"
BENCHMARKS_DOC = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
# How a line would say a benchmark is scored without a judge.
NO_JUDGE = re.compile(r"judge is not implemented|has no judge|no judge yet|without its judge", re.IGNORECASE)


def judged_units() -> dict[str, list[str]]:
    """Each unit's name -> the names of its protocols that have a judge (units with one or more)."""
    found = {u.name: sorted(n for n, spec in u.protocols.items() if spec.judge) for u in units().values()}
    return {name: protocols for name, protocols in found.items() if protocols}


def test_no_judged_benchmark_is_said_to_have_no_judge():
    """No line of docs/benchmarks.md naming a unit with a judged protocol says it has no judge."""
    said = [
        line
        for name in judged_units()
        for line in BENCHMARKS_DOC.splitlines()
        if f"`{name}`" in line and NO_JUDGE.search(line)
    ]
    assert said == []


def test_every_shipped_protocol_is_named_in_the_docs():
    """Each protocol a unit ships appears, in backticks, in docs/benchmarks.md, cli.md or methodology.md."""
    docs = "".join((DOCS / name).read_text(encoding="utf-8") for name in ("benchmarks.md", "cli.md", "methodology.md"))
    shipped = sorted(n for u in units().values() for n in u.protocols)
    assert [n for n in shipped if f"`{n}`" not in docs and f"--protocol {n}" not in docs] == []
