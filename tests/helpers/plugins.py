"""Plug-ins (strategies, benchmark units) installed as pip installs them: a dist-info folder whose entry points name them."""

from __future__ import annotations

from pathlib import Path


def dist_info(
    site: Path, distribution: str, version: str, entry_points: dict[str, str], group: str = "mneme_evals.strategies"
) -> Path:
    """The metadata pip writes into ``site`` for ``distribution``: its name and version, and an entry point in
    ``group`` (strategies by default) for each name (name -> ``module:attribute``)."""
    info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}")
    return info
