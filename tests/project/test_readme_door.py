"""The README is a door: its set-up is a few short paragraphs (install details live in docs/install.md), its
headline table names every benchmark that has a rule, and it calls the headline by the one name the code
declares.
"""

from __future__ import annotations

import re

from helpers import ROOT

from evals.benchmarks import units
from evals.judge.headline import EVIDENCE, KEYWORD

README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP_WORDS = 220  # the set-up section's prose, the commands block aside
# Other names the headline went by, each of which a reader could take for a different figure.
OTHER_NAMES = re.compile(r"(?<![\w@])recall@k|turn-level recall_any|turn recall_any|keyword recall@k|evidence recall@k")


def section(title: str) -> str:
    """The README's section under ``## title``, up to the next heading of that level."""
    return README.split(f"## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_setup_is_a_few_short_paragraphs():
    """The two-commands section, its commands aside, is a few short paragraphs that point to docs/install.md."""
    prose = re.sub(r"```.*?```", "", section("The two commands"), flags=re.DOTALL)
    paragraphs = [p for p in prose.split("\n\n") if p.strip() and not p.strip().startswith("<!--")]
    assert len(prose.split()) <= SETUP_WORDS and len(paragraphs) <= 4
    assert "(docs/install.md)" in prose


def test_the_headline_table_names_every_benchmark_with_a_rule():
    """Each unit that declares a headline rule has a row, by its title, in "What the headline means"."""
    rows = [line.split("|")[1].strip() for line in section("What the headline means").splitlines() if line.startswith("| ")]
    titled = sorted(u.title for u in units().values() if u.rule is not None)
    assert [title for title in titled if title not in rows] == []


def test_the_readme_calls_the_headline_by_its_declared_name():
    """The README names the headline by its rules' labels (recall_any@k, keyword hit@k), never by another name."""
    assert EVIDENCE.label in README and KEYWORD.label in README
    assert OTHER_NAMES.findall(README) == []
