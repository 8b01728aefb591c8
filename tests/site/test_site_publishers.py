"""Page kinds as publishers: the registry drives the build and the navigation."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from helpers.html import parse
from helpers.stores import SITE_CORPUS, make_store

import evals.site
from evals.site import build_site
from evals.site._build import build
from evals.site._output import Output
from evals.site._pages import Page
from evals.site._publisher import Publisher, Site, navigation
from evals.site._registry import PUBLISHERS
from evals.store import StoredRun


class RunCountPublisher(Publisher):
    """A page kind from outside the package: one file for the site, one per run, and a navigation entry."""

    name = "counts"
    nav_label = "Counts"
    nav_href = "counts.txt"
    nav_order = 25  # between History and Compare

    def publish_run(self, stored: StoredRun, site: Site, output: Output) -> None:
        output.text(f"counts/{stored.summary.run_id}.txt", f"{stored.summary.hits}/{stored.summary.total}\n")

    def publish(self, site: Site, output: Output) -> None:
        output.text("counts.txt", f"{len(site.summaries)} runs\n")


def nav_links(page: Path) -> list[tuple[str, str]]:
    return [(a.text(), a.attrs["href"]) for a in parse(page).find("nav").find_all("a") if "brand" not in a.classes]


def test_every_page_class_is_published_by_a_registered_publisher():
    """Each page model of evals/site (each in its page kind's module) is declared by exactly one registered publisher."""
    declared = [cls for publisher in PUBLISHERS for cls in publisher.pages]
    modules = [importlib.import_module(f"evals.site.{m.name}") for m in pkgutil.iter_modules(evals.site.__path__)]
    documented = {
        cls for m in modules for cls in vars(m).values() if isinstance(cls, type) and issubclass(cls, Page) and cls is not Page
    }
    assert sorted(c.__name__ for c in declared) == sorted(c.__name__ for c in documented)


def test_publisher_names_are_unique():
    """A publisher's name is its pages' ``nav`` key, so no two may share one."""
    names = [p.name for p in PUBLISHERS]
    assert len(names) == len(set(names)) and all(names)


def test_navigation_comes_from_the_registry():
    """The navigation lists the publishers with a label, by nav_order."""
    assert [(e.key, e.label, e.href) for e in navigation(PUBLISHERS)] == [
        ("leaderboard", "Leaderboard", "index.html"),
        ("across", "Across benchmarks", "across.html"),
        ("history", "History", "history/index.html"),
        ("compare", "Compare", "compare.html"),
        ("about", "Methodology", "about.html"),
    ]


def test_a_registered_publisher_writes_its_files_and_joins_the_navigation(tmp_path: Path):
    """A new page kind is one class passed to the build: its files are written and every page links it."""
    store = make_store(tmp_path / "results.duckdb", SITE_CORPUS)
    report = build(store, tmp_path / "site", publishers=(*PUBLISHERS, RunCountPublisher))
    site = tmp_path / "site"
    assert (site / "counts.txt").read_text() == f"{report.runs} runs\n"
    assert len(list((site / "counts").glob("*.txt"))) == report.runs
    labels = ["Leaderboard", "Across benchmarks", "History", "Counts", "Compare", "Methodology"]
    assert [label for label, _ in nav_links(site / "index.html")] == labels
    assert ("Counts", "../../counts.txt") in nav_links(next((site / "runs").glob("*/*.html")))


def test_the_active_page_is_marked_in_the_navigation(tmp_path: Path):
    """Each nav page marks its own entry with aria-current; run pages mark none."""
    store = make_store(tmp_path / "results.duckdb", SITE_CORPUS)
    build_site(store, tmp_path / "site")
    site = tmp_path / "site"
    for page, label in (
        ("index.html", "Leaderboard"),
        ("history/index.html", "History"),
        ("compare.html", "Compare"),
        ("about.html", "Methodology"),
    ):
        current = [a.text() for a in parse(site / page).find("nav").find_all("a") if a.attrs.get("aria-current") == "page"]
        assert current == [label], page
    run_page = next((site / "runs").glob("*.html"))
    assert not [a for a in parse(run_page).find("nav").find_all("a") if "aria-current" in a.attrs]
