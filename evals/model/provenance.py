"""Where a run came from: the git revision it was made at and the versions in play.

Recorded with every stored run, so a number in the store can always be traced
to the code that produced it. ``commit`` is the HEAD of the repository that
holds the given directory (by default the current one, i.e. the library being
evaluated); outside a git repository it is :data:`NO_GIT`.

A plug-in strategy's code is usually not in that repository (a module on
``PYTHONPATH``, an installed distribution), so neither the commit nor the
package version names it: :func:`strategy_code` does, with a digest of the
files of the package it was imported from (code and data) and of the modules
imported with it, and the reuse key includes it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.machinery
import os
import platform
import site
import subprocess
import sys
import sysconfig
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distributions, packages_distributions, version
from pathlib import Path
from types import ModuleType

from evals import __version__
from evals.errors import EvalsError
from evals.io.outputs import SCRATCH_PREFIX

__all__ = [
    "LIBRARY_DISTRIBUTION",
    "NO_GIT",
    "SCRATCH_PREFIX",
    "Provenance",
    "RepoError",
    "collect_provenance",
    "dirty_warning",
    "first_parents",
    "hand_import_warning",
    "git_changes",
    "git_revision",
    "resolve_commit",
    "strategy_code",
]

NO_GIT = "no-git"
# Files and folders evals creates for a while (the store's write probe, its undo copy, a new store
# being built) start with this, and neither they nor what they hold count as changes, or a concurrent
# run could see the tree dirty. No output may take such a name (evals.io.outputs): evals deletes them.


class RepoError(EvalsError):
    """A repository given explicitly (``--repo``) that git cannot read."""


LIBRARY_DISTRIBUTION = "smolAmem"  # Mneme, the library under test


@dataclass(frozen=True)
class Provenance:
    commit: str
    dirty: bool
    package_version: str
    mneme_version: str | None
    python_version: str
    # A plug-in strategy's code (strategy_code); None for a built-in, whose code the commit and version name.
    strategy_code: str | None = None
    # The uncommitted changes that make the tree dirty (paths, as git status names them), for the run to say so.
    changes: tuple[str, ...] = ()

    @property
    def is_clean_commit(self) -> bool:
        """True when ``commit`` names exactly the code that ran (so results may be reused)."""
        return self.commit != NO_GIT and not self.dirty


SHOWN_CHANGES = 5  # changed paths named in the dirty-tree line; the rest are counted


def dirty_warning(provenance: Provenance) -> str:
    """The one line a run made from a tree with uncommitted changes prints: which, and what follows from it."""
    shown = ", ".join(provenance.changes[:SHOWN_CHANGES])
    more = len(provenance.changes) - SHOWN_CHANGES
    shown += f" (and {more:,} more)" if more > 0 else ""
    return (
        f"working tree has uncommitted changes: {shown}; this run is recorded as commit "
        f"{provenance.commit[:12]}+dirty, is marked so wherever it is shown, and is never reused"
    )


def hand_import_warning(file: str | None, benchmark: str) -> str:
    """What a published figure beside a corpus imported by hand says: it is of the release, not of this file."""
    source = f"imported by hand from {file}" if file else "of unrecorded source"
    return f"published on a {benchmark} release; this corpus, {source}, matches no pinned one"


def _git(repo: Path, *args: str) -> str | None:
    return _git_said(repo, *args)[0]


def _git_said(repo: Path, *args: str) -> tuple[str | None, str]:
    """git's output (None when it failed) and the first line of what it said on failure."""
    try:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"cannot run git: {getattr(exc, 'strerror', None) or exc}"
    if done.returncode == 0:
        return done.stdout, ""
    said = next((line.strip() for line in done.stderr.splitlines() if line.strip()), f"git exited {done.returncode}")
    return None, said.removeprefix("fatal: ")


def _unreadable(repo: Path, said: str) -> RepoError | None:
    """Why git cannot read the explicitly given ``repo``, or None when it is simply outside git: a
    folder in no repository, with no ``.git`` in it or above it (an empty or broken ``.git`` folder
    makes git say "not a git repository" too, so it is looked for)."""
    if "not a git repository" in said:
        folder = repo.absolute()
        if not any((place / ".git").exists() or (place / ".git").is_symlink() for place in (folder, *folder.parents)):
            return None
        said = "a .git here or above it is not a repository git can read"
    elif said == "Needed a single revision":
        said = "it has no commit (HEAD names none)"
    elif "must be run in a work tree" in said:
        said = "it is a bare repository, with no working tree to record"
    return RepoError(f"--repo {repo}: git cannot read it: {said}; give a repository with a commit, or leave out --repo")


def _status_paths(porcelain: str) -> list[str]:
    """Paths named by ``git status --porcelain -z`` (a rename's source is skipped)."""
    paths: list[str] = []
    entries = iter(porcelain.split("\0"))
    for entry in entries:
        if not entry:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":
            next(entries, None)
    return paths


def git_revision(repo: Path | None = None, *, ignore: Iterable[Path] = (), strict: bool = False) -> tuple[str, bool]:
    """``(HEAD commit, dirty)`` of the repository holding ``repo``; ``(NO_GIT, False)`` outside git
    (:func:`git_changes`, which names the changes)."""
    head, changed = git_changes(repo, ignore=ignore, strict=strict)
    return head, bool(changed)


def git_changes(repo: Path | None = None, *, ignore: Iterable[Path] = (), strict: bool = False) -> tuple[str, list[str]]:
    """``(HEAD commit, changed paths)`` of the repository holding ``repo``; ``(NO_GIT, [])`` outside git.

    Untracked files count as changes, because an untracked module can change
    results; the files in ``ignore`` (the store itself, an ``--output`` file)
    do not, or writing a result would make the next run look dirty.

    ``strict`` (a repository named explicitly): a folder git finds a repository in but cannot
    read (a broken ``.git``, a bare repository, one with no commit) raises :class:`RepoError`
    rather than pass as outside git; a folder in no repository is still ``NO_GIT``.
    """
    repo = Path(repo or ".")
    said = [_git_said(repo, "rev-parse", "--verify", "HEAD"), _git_said(repo, "rev-parse", "--show-toplevel")]
    said.append(_git_said(repo, "status", "--porcelain", "-z", "--untracked-files=all"))
    (head, _), (top, _), (status, _) = said
    if head is None or top is None or status is None:
        if strict:
            # The most telling failure first: no repository at all, then not a work tree, then no commit.
            failures = [message for out, message in (said[1], said[2], said[0]) if out is None]
            error = _unreadable(repo, failures[0])
            if error is not None:
                raise error
        return NO_GIT, []
    root = Path(top.strip()).resolve()
    ignored: set[Path] = set()
    for path in ignore:
        path = Path(path).resolve()
        ignored.update({path, path.with_name(path.name + ".wal")})
    changed = [
        p
        for p in _status_paths(status)
        if (root / p).resolve() not in ignored and not any(part.startswith(SCRATCH_PREFIX) for part in Path(p).parts)
    ]
    return head.strip(), changed


def resolve_commit(ref: str, repo: Path | None = None) -> str | None:
    """The full commit a git ref (branch, tag, hash, ``HEAD~2``) names in the repository holding
    ``repo``; None when it names none, or outside git."""
    if not ref or ref.startswith("-"):  # never an option to git
        return None
    out = _git(Path(repo or "."), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return out.strip() if out else None


def first_parents(commit: str, repo: Path | None = None, count: int = 20) -> list[str]:
    """``commit`` and the commits before it along first parents (a branch's own history), newest
    first, at most ``count``; empty outside git."""
    out = _git(Path(repo or "."), "rev-list", "--first-parent", f"--max-count={count}", commit, "--")
    return out.split() if out else []


def _distribution_version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def collect_provenance(repo: Path | None = None, *, ignore: Iterable[Path] = ()) -> Provenance:
    """The provenance of a run made now; ``repo`` given explicitly must be readable by git (:func:`git_revision`)."""
    commit, changes = git_changes(repo, ignore=ignore, strict=repo is not None)
    return Provenance(
        commit=commit,
        dirty=bool(changes),
        changes=tuple(changes),
        package_version=__version__,
        mneme_version=_distribution_version(LIBRARY_DISTRIBUTION),
        python_version=platform.python_version(),
    )


# Each imported package's digest, computed when first asked for and kept while the module object lives:
# what runs is the code imported, so an edit after the import must not change the digest of this process.
_DIGESTS: weakref.WeakKeyDictionary[ModuleType, str] = weakref.WeakKeyDictionary()


def strategy_code(source: str, module: str | None, imported_with: Iterable[str] = ()) -> str | None:
    """What names a plug-in strategy's code, for the reuse key: where it came from (``source``: a
    distribution and its version, or the ``module:attr`` reference) and ``sha256:`` of

    * every file of the top-level package (or the lone module) that ``module`` belongs to, as
      imported: its code, and its data files too (a word list, a prompt, a model's settings);
    * the modules first imported with it from outside that package (``imported_with``, which the
      registry notes): one that an installed distribution ships (in site-packages) by that
      distribution's name and version, any other (a helper module beside the plug-in, on
      ``PYTHONPATH``) by all of its files, as the package's; the standard library by nothing.

    None for a built-in (``module`` None). A whole package is digested, not just the one module, so an
    edit to a helper module the factory imports makes the run new too. Modules the plug-in imports
    only later (inside its factory or a call), and files outside these folders (a lone module's
    data file beside it), are not seen: docs/strategies.md says so."""
    if module is None:
        return None
    top = importlib.import_module(module.partition(".")[0])
    digest = _digest_of(top)
    used = [line for name in sorted(set(imported_with)) if (line := _used(name)) is not None]
    if used:  # otherwise the digest is the package's alone, as it was before these were named
        digest = hashlib.sha256("\n".join([digest, *used]).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{source} sha256:{digest}"


def _digest_of(module: ModuleType) -> str:
    digest = _DIGESTS.get(module)
    if digest is None:
        digest = _DIGESTS[module] = _digest_files(_package_files(module))
    return digest


def _used(name: str) -> str | None:
    """How a module a plug-in imported is named in its digest: ``name dist version``, ``name sha256:…``,
    or None (the standard library, or a module with no files)."""
    module = sys.modules.get(name)
    if module is None or name in sys.stdlib_module_names or name in sys.builtin_module_names:
        return None
    file = getattr(module, "__file__", None)
    places = [Path(p) for p in [file if isinstance(file, str) else None, *_folders(module)] if p]
    if not places:
        return None
    if all(_installed(place) for place in places):
        owners = sorted(set(_distributions().get(name) or _extension_owners().get(name) or []))
        versions = [f"{d} {_distribution_version(d)}" for d in owners]
        if versions:
            return f"{name} {', '.join(versions)}"
    return f"{name} sha256:{_digest_of(module)}"


def _installed(path: Path) -> bool:
    """Whether ``path`` is inside a site-packages folder (installed, so named by its distribution)."""
    resolved = path.resolve()
    return any(resolved.is_relative_to(folder) for folder in _site_folders())


@functools.cache
def _site_folders() -> tuple[Path, ...]:
    paths = sysconfig.get_paths()
    folders = {paths["purelib"], paths["platlib"], *site.getsitepackages(), site.getusersitepackages()}
    return tuple(Path(folder).resolve() for folder in folders if folder)


@functools.cache
def _distributions() -> Mapping[str, list[str]]:
    """The distributions that ship each top-level module, as importlib maps them (top_level.txt, or
    the .py files a distribution records)."""
    return packages_distributions()


@functools.cache
def _extension_owners() -> Mapping[str, list[str]]:
    """The distributions that record a top-level extension module (``_duckdb``), which importlib's map
    leaves out; read only when needed (every distribution's file list: most of a second)."""
    owners: dict[str, list[str]] = {}
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    for dist in distributions():
        for file in dist.files or ():
            if len(file.parts) == 1 and file.name.endswith(suffixes):
                owners.setdefault(file.name.partition(".")[0], []).append(dist.metadata["Name"])
    return owners


def _folders(module: ModuleType) -> list[str]:
    """The folders of a package's ``__path__`` ([] for a lone module, or a module whose ``__getattr__``
    answers ``__path__`` with something else, as torch's ``torch.classes`` does)."""
    try:
        return [p for p in getattr(module, "__path__", None) or [] if isinstance(p, str)]
    except TypeError:
        return []


def _package_files(module: ModuleType) -> list[tuple[str, Path]]:
    """(relative name, path) of each file of a package (every folder of its ``__path__``, walked
    without following links, ``__pycache__`` left out: code and data alike) or of a lone module; sorted."""
    roots = _folders(module)
    if not roots:
        file = getattr(module, "__file__", None)
        return [(Path(file).name, Path(file))] if file else []
    files = []
    for number, root in enumerate(roots):
        for folder, subfolders, names in os.walk(root):
            subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
            for name in names:
                path = Path(folder, name)
                files.append((f"{number}/{path.relative_to(root).as_posix()}", path))
    return sorted(files)


def _digest_files(files: list[tuple[str, Path]]) -> str:
    digest = hashlib.sha256()
    for name, path in files:
        try:
            content = path.read_bytes()
        except OSError:  # gone or unreadable: its absence is part of what the digest says
            content = b""
        encoded = name.encode("utf-8", "surrogateescape")
        digest.update(len(encoded).to_bytes(8, "big") + encoded + len(content).to_bytes(8, "big") + content)
    return digest.hexdigest()
