"""What a build made for each run and each corpus, and from what, so that the next build can reuse it.

Runs in the store never change (it is append-only), and neither does a corpus
stored under its content digest. So the files a build made from one run (its
page, drill-downs and JSON) or one corpus (its transcripts) are a function of
that run or corpus, of the code and templates that rendered them, and of the
few names they link to (the run's and its history's file names). The manifest
(:data:`MANIFEST`, in the site) records, per such *build unit* (a :class:`ManifestEntry`; not a benchmark's
:class:`evals.benchmarks.kit.Unit`), a fingerprint of
all of that and the files it wrote, each with the SHA-256 of its content. A
later build whose fingerprint for a unit is the same links those files from
the old site into the new one instead of rendering them again, once each is
found to be a regular file of the recorded content (:mod:`evals.site._reuse`);
anything else is rendered afresh. A build that reuses gives the same bytes as
one that does not (a test checks it).

The manifest sits in a folder anyone may have edited, so it is read as
untrusted input: every path must be a plain path inside the site (no absolute
path, no ``..``, no dot-file), and anything malformed discards the whole
manifest with one warning, which makes the build a full one.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import sys
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import evals
from evals.io.jsonfile import JSONFileError, json_path, parse

__all__ = ["MANIFEST", "ManifestEntry", "dump", "fingerprint", "load", "renderer_digest"]

MANIFEST = ".evals-manifest.json"
VERSION = 2  # 2: each file's SHA-256 (version 1 listed the files alone, so nothing it lists is reused)
# The manifest of a site of 10,000 pages is about 1.5 MB; a bigger file is not read.
MAX_MANIFEST_BYTES = 256_000_000
_HEX64 = re.compile("[0-9a-f]{64}")


@dataclass(frozen=True)
class ManifestEntry:
    """What the manifest records of one build unit (a corpus's transcripts, or a run's pages)."""

    fingerprint: str
    files: Mapping[str, str]  # site-relative path -> SHA-256 (hex) of the content the build wrote there


def renderer_digest(templates_dir: Path, publishers: tuple[type, ...]) -> str:
    """A digest of everything that renders pages besides their data: the templates and static files,
    the package's source and shipped data (claims, prices), the publishers, and the versions of what formats and compresses."""
    h = hashlib.sha256()
    for root in (templates_dir, Path(evals.__file__).parent):
        for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            if root != templates_dir and path.suffix not in (".py", ".toml"):  # .toml: shipped claims and prices
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


class _Untrusted(Exception):
    """The manifest cannot be trusted: ``where`` (a JSON path, or "") is ``reason``."""

    def __init__(self, where: str, reason: str) -> None:
        self.where, self.reason = where, reason
        super().__init__(f"{where}: {reason}" if where else reason)


def load(site: Path) -> tuple[dict[str, ManifestEntry], str]:
    """The units an earlier build of ``site`` recorded, and a warning ("" if none). No manifest, or one
    written by an older version of this builder, gives no units and no warning; a manifest that is not
    a regular file in ``site``, or is malformed in any way, gives no units and a warning saying why."""
    try:
        data = _read(site / MANIFEST)
        if data is None:
            return {}, ""
        document = parse(data, MANIFEST)
        if isinstance(document, dict) and isinstance(document.get("version"), int) and 0 < document["version"] < VERSION:
            return {}, ""
        return _units(document), ""
    except (JSONFileError, _Untrusted) as exc:
        reason = f"{exc.where}: {exc.reason}" if exc.where else exc.reason
        return {}, f"ignored {site / MANIFEST} ({reason}) and rendered every run and corpus again"


def _read(path: Path) -> bytes | None:
    """The manifest's bytes; None when there is none. Never through a symbolic link (nothing outside
    the site is read), never from a FIFO or device, never more than :data:`MAX_MANIFEST_BYTES`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _Untrusted("", "it is a symbolic link") from None
        raise _Untrusted("", f"cannot be read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise _Untrusted("", "it is not a regular file")
        data = file.read(MAX_MANIFEST_BYTES + 1)
    if len(data) > MAX_MANIFEST_BYTES:
        raise _Untrusted("", f"over {MAX_MANIFEST_BYTES} bytes")
    return data


def _units(document: Any) -> dict[str, ManifestEntry]:
    """The manifest's units, each checked; any problem raises :class:`_Untrusted` naming the field."""
    if not isinstance(document, dict):
        raise _Untrusted("", "not a JSON object")
    if document.get("version") != VERSION:
        raise _Untrusted("version", f"{document.get('version')!r} is not a manifest version this build knows ({VERSION})")
    units_in = document.get("units")
    if not isinstance(units_in, dict):
        raise _Untrusted("units", "not a JSON object")
    units: dict[str, ManifestEntry] = {}
    owner: dict[str, str] = {}  # path -> the unit that lists it
    for key, value in units_in.items():
        where = ("units", key)
        if not isinstance(value, dict) or set(value) != {"fingerprint", "files"}:
            raise _Untrusted(json_path(where), 'not an object of "fingerprint" and "files"')
        if not isinstance(value["fingerprint"], str) or not _HEX64.fullmatch(value["fingerprint"]):
            raise _Untrusted(json_path((*where, "fingerprint")), "not a SHA-256 in hex")
        if not isinstance(value["files"], dict):
            raise _Untrusted(json_path((*where, "files")), "not a JSON object")
        for path, digest in value["files"].items():
            problem = _path_problem(path)
            if problem:
                raise _Untrusted(json_path((*where, "files", path)), problem)
            if not isinstance(digest, str) or not _HEX64.fullmatch(digest):
                raise _Untrusted(json_path((*where, "files", path)), "not a SHA-256 in hex")
            if path in owner:
                raise _Untrusted(json_path((*where, "files", path)), f"also listed by {owner[path]}")
            owner[path] = key
        units[key] = ManifestEntry(value["fingerprint"], dict(value["files"]))
    for path, key in owner.items():
        folder = path.rpartition("/")[0]
        while folder:
            if folder in owner:
                raise _Untrusted(json_path(("units", key, "files", path)), f"{folder} is listed as a file too")
            folder = folder.rpartition("/")[0]
    return units


def _path_problem(path: str) -> str:
    """Why ``path`` is not a plain site-relative path a unit's file may have; "" when it is."""
    if not path:
        return "an empty path"
    if path.startswith("/"):
        return "an absolute path; the files of a site are named relative to it"
    parts = path.split("/")
    if ".." in parts:
        return "a path that leads out of its folder (..)"
    if "\\" in path or "\0" in path or any(not part or part.startswith(".") for part in parts):
        return "not a plain path inside the site (an empty or dot-named part, a backslash or a NUL)"
    return ""


def dump(units: dict[str, ManifestEntry]) -> bytes:
    """The manifest file: sorted, so the same units always give the same bytes."""
    document = {
        "version": VERSION,
        "about": "Made by `evals build-site`: what each run's and corpus's files were made from, and the SHA-256 of "
        "each file, so the next build reuses the files that are still as it wrote them.",
        "units": {
            key: {"fingerprint": unit.fingerprint, "files": dict(sorted(unit.files.items()))}
            for key, unit in sorted(units.items())
        },
    }
    return (json.dumps(document, indent=1, ensure_ascii=False) + "\n").encode("utf-8")
