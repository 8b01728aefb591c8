"""Every line of site_templates/ (Jinja templates and static files) is at most 200 characters: a
template's long lines are wrapped where the output does not change (after a block tag or comment, which
trim_blocks ends, or inside an expression)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT

TEMPLATES = ROOT / "site_templates"
LIMIT = 200


@pytest.mark.parametrize("path", sorted(p for p in TEMPLATES.rglob("*") if p.is_file()), ids=lambda p: p.name)
def test_no_template_line_is_over_200_characters(path: Path) -> None:
    """No line of a file in site_templates/ passes 200 characters."""
    long = [number for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1) if len(line) > LIMIT]
    assert long == [], f"{path.name}: lines {long} are over {LIMIT} characters"


def test_the_templates_are_found() -> None:
    """The check reads the real template folder, so it cannot pass on an empty one."""
    assert (TEMPLATES / "base.html").is_file()
