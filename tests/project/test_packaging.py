"""The wheel carries every package and the site's templates."""

from __future__ import annotations

import tomllib

from helpers import ROOT


def test_every_package_is_listed_in_pyproject():
    """pyproject.toml lists packages by hand, so a new package under evals/ must be added there."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    on_disk = {
        ".".join(init.parent.relative_to(ROOT).parts) for init in (ROOT / "evals").rglob("__init__.py")
    }
    assert on_disk <= listed, f"add to [tool.setuptools] packages: {sorted(on_disk - listed)}"


def test_template_package_maps_to_site_templates():
    """evals.site_templates is site_templates/ with its static files, as the site build expects."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert setuptools["package-dir"]["evals.site_templates"] == "site_templates"
    patterns = setuptools["package-data"]["evals.site_templates"]
    shipped = {p for pattern in patterns for p in (ROOT / "site_templates").glob(pattern) if p.is_file()}
    assert shipped == {p for p in (ROOT / "site_templates").rglob("*") if p.is_file()}
