"""``evals build-site`` and ``evals serve``: the static site."""

from __future__ import annotations

from pathlib import Path

import click

from evals.cli._base import (
    Whole,
    cli,
    downloads_option,
    echo,
    errata_option,
    lock_option,
    store_option,
    store_path,
)
from evals.errors import EvalsError


@cli.command("build-site")
@store_option
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("site"),
    show_default=True,
    help="Directory to write the site into; replaced whole on each build.",
)
@click.option(
    "--jobs",
    type=Whole(1, 64),
    default=None,
    help="Processes rendering pages. Default: one per CPU (up to 4) when 8 runs and corpora or more are to be rendered "
    "from a store of at most 64 MB, else 1.",
)
@click.option(
    "--store-copy",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Copy the store into the site as data/results.duckdb: auto does while it is at most 25 MB.",
)
@click.option(
    "--full",
    is_flag=True,
    help="Render every page, instead of reusing the pages an earlier build in --out made from the same runs.",
)
@lock_option(
    help="The benchmarks' lock file (as for evals fetch): each benchmark page shows the size and SHA-256 it recorded "
    "for a file pinned by trust on first use. Default: benchmarks.lock (none there: no sizes shown)."
)
@errata_option(
    "the leaderboard and run pages of the corpus it corrects show each run's headline with errata beside the published one"
)
@click.option(
    "--from",
    "board",
    type=click.Path(path_type=Path, exists=True),
    default=None,
    help="Build from the board files under DIR (docs/board.md) instead: each imported as `evals import` does (its "
    "corpus found among `evals fetch`'s downloads) into a temporary store, with --store's runs too when --store is given.",
)
@click.option(
    "--corpus",
    "corpus",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=None,
    help="With --from: the corpus the board files' digest names, where `evals fetch` has not brought it.",
)
@downloads_option(help="With --from: the folder `evals fetch` downloads into, searched for the board files' corpora.")
def build_site_command(
    store: Path | None,
    out: Path,
    jobs: int | None,
    store_copy: str,
    full: bool,
    lock: Path | None,
    errata_files: tuple[Path, ...],
    board: Path | None,
    corpus: Path | None,
    downloads: Path | None,
) -> None:
    """Render the static leaderboard site from the store (read-only).

    Pages of runs and corpora that an earlier build in --out already made
    from the same inputs are reused, so adding a run renders only its pages
    (and the pages that span runs); the site is byte-identical either way.
    Warns when the site passes 800 MB (GitHub Pages publishes at most 1 GB),
    naming its largest parts.

    With --from DIR, the site is built from the board files under DIR (the published board):
    each is read and its figures recomputed before anything is built; a bad one is named,
    and nothing is built.

    \b
    Preview it locally:
      evals build-site && python -m http.server -d site
    """
    from evals.benchmarks import DEFAULT_LOCK
    from evals.site import build_site, build_site_from

    # A lock file not written yet (no file published without a digest fetched so far) is an empty lock.
    lock = lock if lock is not None else DEFAULT_LOCK
    if board is None and corpus is not None:
        raise click.UsageError("--corpus goes with --from: it is where board files find their corpus")
    options = {"workers": jobs, "incremental": not full, "store_copy": store_copy, "lock": lock, "errata": errata_files}
    if board is not None:
        given = store_path(store)[0] if store is not None else None
        report = build_site_from(board, out, store_path=given, corpus=corpus, downloads=downloads, **options)
    else:
        report = build_site(store_path(store)[0], out, **options)
    echo(
        f"built {out} from {report.runs} runs: {report.pages} pages, {report.files} files, "
        f"{report.bytes / 1_000_000:.1f} MB in {report.seconds:.1f} s "
        f"({report.rendered} runs and corpora rendered, {report.reused} reused)"
    )
    for warning in report.warnings:
        echo(f"warning: {warning}", err=True)


@cli.command("serve")
@click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    default=Path("site"),
    show_default=True,
    help="The built site to serve.",
)
@click.option("--port", type=Whole(0, 65535), default=8000, show_default=True, help="Port on 127.0.0.1.")
def serve_command(directory: Path, port: int) -> None:
    """Serve a built site on http://127.0.0.1:PORT/ until interrupted (local preview only): the site's own files,
    never one a symlink in it points to outside it."""
    from evals.io.site_server import site_server

    try:
        server = site_server(directory, port)
    except OSError as exc:
        raise EvalsError(
            f"cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}; choose another --port (0 picks a free one)"
        ) from None
    with server:
        echo(f"serving {directory} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
