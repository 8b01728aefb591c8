"""The output directory: built beside ``--out``, filled, then swapped in whole.

A build writes into a fresh sibling directory and renames it over the output
at the end, so stale pages never survive and a failed build leaves the old
site in place. The :data:`MARKER` file names a directory this builder made;
any other non-empty directory is refused rather than replaced. An output that
is a symbolic link to a directory is followed: the directory it points to is
the one built beside and replaced, and the link is left as it was, pointing
at the new site.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import jinja2

from evals.errors import EvalsError
from evals.model.formatting import json_text
from evals.site._pages import Page
from evals.site._render import render
from evals.site._reuse import digest_of

__all__ = ["MARKER", "Collision", "Output", "SiteError", "new_file", "copy_static", "mark", "prepare", "refuse_to_hold", "swap"]

MARKER = ".evals-site"


class SiteError(EvalsError):
    """The site cannot be built: a bad output directory or a template problem."""


class Collision(SiteError):
    """The build is about to write ``path`` where something already is: a file an earlier build's
    manifest listed (and this build linked), or a file another part of the build wrote."""

    def __init__(self, path: str) -> None:
        super().__init__(path)  # the only argument, so the exception crosses from a worker process intact
        self.path = path

    def __str__(self) -> str:
        return f"{self.path} is written twice in one build"


FLUSH_BYTES = 16_000_000  # pending bytes past which a page or file written is flushed to disk at once


@dataclass
class Output:
    """Files to write, by site-relative path; written in sorted order at each flush (and whenever
    :data:`FLUSH_BYTES` are pending, so a big run or corpus is never held whole in memory)."""

    root: Path
    files: dict[str, bytes] = field(default_factory=dict)
    pages: int = 0
    written_files: int = 0
    written_bytes: int = 0
    largest: tuple[int, str] = (0, "")
    written: dict[str, str] = field(default_factory=dict)  # every path flushed, in order, with its SHA-256
    _pending: int = 0

    def text(self, path: str, content: str) -> None:
        self.raw(path, content.encode("utf-8"))

    def json(self, path: str, value: Any) -> None:
        """``value`` as standard JSON (:func:`json_text`), indented, with a final newline."""
        self.text(path, json_text(value, indent=2) + "\n")

    def raw(self, path: str, data: bytes) -> None:
        self.files[path] = data
        self._pending += len(data)
        if self._pending > FLUSH_BYTES:
            self.flush()

    def page(self, env: jinja2.Environment, path: str, page: Page) -> None:
        try:
            html = render(env, page)
        except jinja2.TemplateError as exc:
            where = f" ({exc.name}, line {exc.lineno})" if isinstance(exc, jinja2.TemplateSyntaxError) else ""
            raise SiteError(f"cannot render {path} with {page.template}{where}: {exc}") from exc
        self.pages += 1
        self.text(path, html)

    def flush(self) -> None:
        made: set[Path] = set()
        for path in sorted(self.files):
            data = self.files[path]
            target = self.root / path
            try:
                if target.parent not in made:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    made.add(target.parent)
                if path in self.written:
                    target.unlink()
                # A new file, never one already there: a file linked from the earlier build is shared
                # with the old site, which must stay as it was until the swap.
                with open(target, "xb") as file:
                    file.write(data)
            except (FileExistsError, NotADirectoryError):
                raise Collision(path) from None
            self.written[path] = digest_of(data)
            self.written_files += 1
            self.written_bytes += len(data)
            if path.endswith(".html"):
                self.largest = max(self.largest, (len(data), path))
        self.files.clear()
        self._pending = 0

    def add(self, stats: tuple[int, int, int, tuple[int, str]]) -> None:
        """Count what a worker process wrote."""
        pages, files, size, largest = stats
        self.pages += pages
        self.written_files += files
        self.written_bytes += size
        self.largest = max(self.largest, largest)

    def stats(self) -> tuple[int, int, int, tuple[int, str]]:
        return self.pages, self.written_files, self.written_bytes, self.largest


def refuse_to_hold(out_dir: Path, precious: list[Path]) -> None:
    """Refuse an output directory that holds (or is the folder of) the store or its cache: a build
    replaces the whole directory, which would delete them, and the cache holds paid LLM replies."""
    out = out_dir.resolve()
    for path in precious:
        if path.resolve().is_relative_to(out):
            store = precious[0].absolute()
            raise SiteError(
                f"--out {out_dir.absolute()} holds the store {store} (and its cache); a build replaces that whole folder, "
                "so it would delete them: choose another --out, or keep the store elsewhere"
            )


def _replaced(out_dir: Path) -> Path:
    """The directory a build into ``out_dir`` replaces: ``out_dir`` (absolute), or, when it is a symbolic
    link, the directory it points to; a link to nothing, or to anything but a directory, is refused."""
    out_dir = out_dir.absolute()
    if not out_dir.is_symlink():
        return out_dir
    target = Path(os.path.realpath(out_dir))
    if not target.exists():
        raise SiteError(f"output {out_dir} is a symbolic link to {target}, which does not exist; create it, or give a folder")
    if not target.is_dir() or not target.name:
        raise SiteError(f"output {out_dir} is a symbolic link to {target}, which is not a folder a build can replace")
    return target


def prepare(out_dir: Path) -> Path:
    """A fresh sibling directory to build into; refuses to target a directory this builder did not make.
    A symbolic link is followed: the build goes beside the directory it points to (:func:`_replaced`)."""
    out_dir = _replaced(out_dir)
    if out_dir.exists():
        if not out_dir.is_dir():
            raise SiteError(f"output {out_dir} exists and is not a directory")
        if any(out_dir.iterdir()) and not (out_dir / MARKER).exists():
            raise SiteError(
                f"output {out_dir} is not empty and was not made by evals build-site (no {MARKER} file); "
                "refusing to replace it: choose an empty or new directory"
            )
    _remove_leftovers(out_dir)
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        building = out_dir.parent / f".{out_dir.name}.building-{os.getpid()}"
        if building.exists():
            shutil.rmtree(building)
        building.mkdir()
    except OSError as exc:
        raise SiteError(f"cannot create the output next to {out_dir}: {exc.strerror or exc}") from exc
    return building


def _remove_leftovers(out_dir: Path) -> None:
    """Remove what builds killed mid-way left beside the output (``.site.building-PID``,
    ``.site.old-PID``): those whose process is gone. A running build's folder is left alone."""
    if not out_dir.parent.is_dir():
        return
    pattern = re.compile(rf"\.{re.escape(out_dir.name)}\.(?:building|old)-(\d+)")
    for path in out_dir.parent.iterdir():
        found = pattern.fullmatch(path.name)
        if found and path.is_dir() and not path.is_symlink() and not _running(int(found.group(1))):
            shutil.rmtree(path, ignore_errors=True)


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process's own leftover (prepare replaces it anyway)
    if os.name == "nt":
        return True  # os.kill would end the process there, not probe it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # someone else's process, or cannot tell: keep its folder
    return True


def swap(building: Path, out_dir: Path) -> None:
    """Put the finished build where the output was, then remove the old one (where a link at the
    output points, the link itself untouched)."""
    out_dir = _replaced(out_dir)
    if out_dir.parent != building.parent:
        raise SiteError(f"output {out_dir} moved during the build (a symbolic link changed?); the old site is left as it was")
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    try:
        if out_dir.exists():
            out_dir.rename(old)
        building.rename(out_dir)
    except OSError as exc:
        raise SiteError(f"cannot move the new site into {out_dir}: {exc.strerror or exc}") from exc
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)


def copy_static(templates_dir: Path, output: Output) -> None:
    """The templates' ``static/`` files (CSS, JavaScript, icon), as they are."""
    static = templates_dir / "static"
    if not static.is_dir():
        return
    for path in sorted(static.rglob("*")):
        if path.is_file():
            output.raw(f"static/{path.relative_to(static).as_posix()}", path.read_bytes())


@contextlib.contextmanager
def new_file(root: Path, path: str) -> Iterator[BinaryIO]:
    """``path`` in the build ``root``, created new for writing (as :meth:`Output.flush` writes files)."""
    target = root / path
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        writer = open(target, "xb")  # noqa: SIM115 - closed below
    except (FileExistsError, NotADirectoryError):
        raise Collision(path) from None
    with writer:
        yield writer


def mark(output: Output) -> None:
    """The marker that lets the next build replace this directory."""
    output.text(MARKER, "Made by `evals build-site`; the next build replaces this whole directory.\n")
