"""The published files a protocol reads its templates from: found, checked against their pins, read.

A protocol's files are pinned (:class:`evals.benchmarks.SourceFile`: repository, commit, path,
sha256). They are looked for under ``--protocol-source DIR`` (the root of the repository's tree at
that commit: each file at its repository path), else in the downloads folder where ``evals fetch``
puts them (``sources/OWNER/REPO/COMMIT/PATH``). A file that is missing, not a regular file, or whose
bytes do not have the pinned SHA-256 is refused in one line naming it; nothing is read from it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evals.benchmarks import BENCHMARKS, DOWNLOADS_ENV, SourceFile, default_downloads
from evals.errors import EvalsError
from evals.io import jsonfile

__all__ = ["MAX_SOURCE_BYTES", "ProtocolError", "Sources", "downloads_folder", "read_sources"]

MAX_SOURCE_BYTES = 16 * 1024**2  # an evaluation script; as evals fetch bounds them


class ProtocolError(EvalsError):
    """A protocol that cannot be used: its files missing, changed, or not of the shape it reads."""


@dataclass(frozen=True)
class Sources:
    """The texts of one protocol's pinned files, by repository path, and where they came from."""

    repository: str
    commit: str
    texts: dict[str, str]
    digests: dict[str, str]  # repository path -> sha256, as checked
    paths: dict[str, str]  # repository path -> the file it was read from

    def record(self) -> dict[str, Any]:
        """What a run records: repository, commit, files with their sha256 (not the local folder)."""
        return {"repository": self.repository, "commit": self.commit, "files": dict(self.digests)}


def downloads_folder() -> Path:
    """The downloads folder ``evals fetch`` uses: $EVALS_DOWNLOADS, else the default."""
    given = os.environ.get(DOWNLOADS_ENV)
    return Path(given) if given else default_downloads()


def _fetch_hint(pin: SourceFile) -> str:
    """Which ``evals fetch`` brings ``pin``'s file."""
    names = [b.name for b in BENCHMARKS.values() if pin in b.sources]
    return f"`evals fetch {names[0]}`" if names else "`evals fetch`"


def read_sources(protocol: str, pins: Sequence[SourceFile], root: Path | None = None, downloads: Path | None = None) -> Sources:
    """``pins``' files, each checked against its digest. ``root``: a tree of the repository at the
    pinned commit (``--protocol-source``); None: the downloads folder's copies."""
    if not pins:
        raise ProtocolError(f"protocol {protocol} names no source file")
    repositories = {(p.repo, p.commit) for p in pins}
    if len(repositories) != 1:
        raise ProtocolError(
            f"protocol {protocol}: its files must come from one repository at one commit, not {sorted(repositories)}"
        )
    texts: dict[str, str] = {}
    digests: dict[str, str] = {}
    paths: dict[str, str] = {}
    base = Path(root) if root is not None else (downloads if downloads is not None else downloads_folder()) / "sources"
    for pin in pins:
        path = base / pin.path if root is not None else base / pin.relative
        where = f"{pin.repo} {pin.path} at {pin.commit[:12]}"
        if not path.exists():
            fix = (
                f"give --protocol-source the root of {pin.repo}'s tree at commit {pin.commit[:12]}"
                if root is not None
                else f"run {_fetch_hint(pin)} to download it, or give --protocol-source DIR"
            )
            raise ProtocolError(f"protocol {protocol} reads {where}, and {path} does not exist: {fix}")
        try:
            data = jsonfile.read_bytes(path, MAX_SOURCE_BYTES, str(path))
        except jsonfile.JSONFileError as exc:
            raise ProtocolError(f"protocol {protocol}: {path}: {exc.reason}") from None
        actual = hashlib.sha256(data).hexdigest()
        if actual != pin.sha256:
            raise ProtocolError(
                f"protocol {protocol}: {path} is not {where}: sha256 {actual}, expected {pin.sha256}; its templates are not read"
            )
        try:
            texts[pin.path] = data.decode("utf-8")
        except UnicodeDecodeError as exc:  # pinned bytes that are not text: a wrong pin, said plainly
            raise ProtocolError(f"protocol {protocol}: {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        digests[pin.path] = actual
        paths[pin.path] = str(path)
    ((repository, commit),) = repositories
    return Sources(repository, commit, texts, digests, paths)
