"""What a build made for each run and each corpus, and from what, so that the next build can reuse it.

Runs in the store never change (it is append-only), and neither does a corpus
stored under its content digest. So the files a build made from one run (its
page, drill-downs and JSON) or one corpus (its transcripts) are a function of
that run or corpus, of the code and templates that rendered them, and of the
few names they link to (the run's and its history's file names). The manifest
(:data:`MANIFEST`, in the site) records, per such *unit*, a fingerprint of
all of that and the files it wrote. A later build whose fingerprint for a unit
is the same links those files from the old site into the new one instead of
rendering them again; anything else is rendered afresh. A build that reuses
gives the same bytes as one that does not (a test checks it).
"""

from __future__ import annotations

import hashlib
import json
import sys
import zlib
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import evals

__all__ = ["MANIFEST", "Unit", "dump", "fingerprint", "load", "renderer_digest"]

MANIFEST = ".evals-manifest.json"
VERSION = 1


@dataclass(frozen=True)
class Unit:
    fingerprint: str
    files: tuple[str, ...]  # site-relative, sorted


def renderer_digest(templates_dir: Path, publishers: tuple[type, ...]) -> str:
    """A digest of everything that renders pages besides their data: the templates and static files,
    the package's source, the publishers, and the versions of what formats and compresses."""
    h = hashlib.sha256()
    for root in (templates_dir, Path(evals.__file__).parent):
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            if root != templates_dir and path.suffix != ".py":
                continue
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    names = [f"{cls.__module__}.{cls.__qualname__}" for cls in publishers]
    versions = [_version(name) for name in ("jinja2", "markupsafe", "orjson", "duckdb", "pydantic")]
    h.update(json.dumps([names, versions, sys.version_info[:2], zlib.ZLIB_RUNTIME_VERSION]).encode())
    return h.hexdigest()


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def fingerprint(renderer: str, kind: str, inputs: Any) -> str:
    """The fingerprint of a unit: the renderer and the unit's inputs (JSON-able, keys sorted)."""
    text = json.dumps([renderer, kind, inputs], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(site: Path) -> dict[str, Unit]:
    """The units an earlier build of ``site`` recorded; none if it has no readable manifest."""
    try:
        document = json.loads((site / MANIFEST).read_text(encoding="utf-8"))
        if document.get("version") != VERSION:
            return {}
        return {key: Unit(value["fingerprint"], tuple(value["files"])) for key, value in document["units"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def dump(units: dict[str, Unit]) -> bytes:
    """The manifest file: sorted, so the same units always give the same bytes."""
    document = {
        "version": VERSION,
        "about": "Made by `evals build-site`: what each run's and corpus's files were made from, so the next build reuses them.",
        "units": {key: {"fingerprint": unit.fingerprint, "files": list(unit.files)} for key, unit in sorted(units.items())},
    }
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
