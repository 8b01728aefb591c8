"""The README and docs/ document what the code does: the README is the door, docs/cli.md the reference."""

import re
from pathlib import Path

import click
from helpers import ROOT

from evals.cli import cli, legacy_cli

README = (ROOT / "README.md").read_text(encoding="utf-8")
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def test_every_command_has_a_section_in_the_cli_reference():
    """Each `evals` subcommand has a heading in docs/cli.md naming it as `evals NAME`."""
    headings = "\n".join(line for line in CLI_DOC.splitlines() if line.startswith("## "))
    assert [name for name in cli.commands if f"evals {name}" not in headings] == []


def test_every_option_of_every_command_is_in_the_cli_reference():
    """Each option of each `evals` subcommand appears in docs/cli.md as `--option."""
    missing = [
        f"{name} {p.opts[0]}"
        for name, command in cli.commands.items()
        for p in command.params
        if isinstance(p, click.Option) and p.opts[0] not in ("--help", "--store")
        and f"`{p.opts[0]}" not in CLI_DOC
    ]
    assert missing == []


def test_every_legacy_flag_is_in_the_cli_reference():
    """Each flag of `python -m evals` appears in docs/cli.md."""
    flags = [p.opts[0] for p in legacy_cli.params if isinstance(p, click.Option) and p.opts[0] != "--help"]
    assert [f for f in flags if f not in CLI_DOC] == []


def test_the_readme_is_a_door_not_a_manual():
    """README stays short (about 200 lines) and every document it points to exists."""
    assert len(README.splitlines()) <= 220
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", README)
    assert links and [link for link in links if not (ROOT / link).exists()] == []


def test_relative_links_in_docs_resolve():
    """Every relative link in docs/*.md points to a file that exists."""
    broken = [
        f"{doc.name}: {link}"
        for doc in (ROOT / "docs").glob("*.md")
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", doc.read_text(encoding="utf-8"))
        if not (doc.parent / link).exists()
    ]
    assert broken == []


def test_readme_keeps_exactly_two_commands():
    """The README's setup section holds the two commands: run the main job, run the tests."""
    section = README.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in section.strip().splitlines()] == [
        "python3 tasks.py run",
        "python3 tasks.py test",
    ]


def test_every_path_the_readme_writes_is_ignored_by_git():
    """Each `--out`/`--output` path of the README's commands is git-ignored, so following the README
    never makes later runs dirty (and so never reused)."""
    import subprocess

    paths = re.findall(r"--out(?:put)? ([\w./-]+)", README)
    assert paths
    ignored = subprocess.run(
        ["git", "check-ignore", "--no-index", *paths], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    assert sorted(ignored) == sorted(paths)


LAYOUT_DOC = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")


def _listed_modules() -> list[str]:
    """The modules docs/layout.md lists under "Every module", one `- `path`: ...` line each."""
    section = LAYOUT_DOC.split("## Every module", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^- `(evals/[\w/]+\.py)`", section, flags=re.MULTILINE)


def test_layout_names_every_module():
    """docs/layout.md lists every module of evals/ exactly once, and nothing that is not one."""
    listed = _listed_modules()
    on_disk = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "evals").rglob("*.py"))
    assert sorted(set(listed)) == on_disk
    assert len(listed) == len(set(listed))


def test_layout_has_a_row_for_each_layer_folder():
    """Every folder of evals/ is a row of docs/layout.md's layer table (tests/project/test_layers.py orders the
    same folders), and the top of evals/ holds only the package's own files beside the folders."""
    folders = sorted(p.parent.name for p in (ROOT / "evals").glob("*/__init__.py"))
    table = LAYOUT_DOC.split("## Every module", 1)[0]
    assert [f for f in folders if f"| `{f}/` |" not in table] == []
    top = sorted(p.name for p in (ROOT / "evals").glob("*.py"))
    assert top == ["__init__.py", "__main__.py", "errors.py"]


def _page_models() -> dict[str, set[str]]:
    """Each dataclass of evals/site a page model holds (its fields' types, followed down), by module:class -> the
    modules of the pages that reach it."""
    import dataclasses
    import importlib
    import pkgutil
    import typing

    import evals.site
    from evals.site._pages import Page

    modules = [importlib.import_module(f"evals.site.{m.name}") for m in pkgutil.iter_modules(evals.site.__path__)]
    pages = {c for m in modules for c in vars(m).values() if isinstance(c, type) and issubclass(c, Page) and c is not Page}
    reached: dict[str, set[str]] = {}

    def walk(tp: object, kind: str) -> None:
        for arg in typing.get_args(tp):
            walk(arg, kind)
        if not (isinstance(tp, type) and dataclasses.is_dataclass(tp) and tp.__module__.startswith("evals.site.")):
            return
        name = f"{tp.__module__}:{tp.__qualname__}"
        if kind in reached.setdefault(name, set()):
            return
        reached[name].add(kind)
        for hint in typing.get_type_hints(tp).values():
            walk(hint, kind)

    for page in pages:
        walk(page, page.__module__)
    return reached


def test_each_page_model_lives_with_its_page_kind():
    """docs/layout.md's "one module per page kind (its page models and its publisher)": a page model only one kind's
    pages show is in that kind's module (not the shared evals/site/_pages.py, not another kind's), and no page is
    in the shared module."""
    models = _page_models()
    kinds = {kind for reaching in models.values() for kind in reaching}
    homes = {"evals.site._pages", *kinds}
    misplaced = {n: r for n, r in models.items() if len(r) == 1 and n.split(":")[0] in homes - r}
    assert misplaced == {}
    assert "evals.site._pages" not in kinds


def test_the_shared_page_module_holds_only_what_several_kinds_show():
    """evals/site/_pages.py holds the Page base, the navigation entry, and models pages of two kinds or more show."""
    import dataclasses

    from evals.site import _pages

    models = _page_models()
    held = [n for n, c in vars(_pages).items() if dataclasses.is_dataclass(c) and c.__module__ == _pages.__name__]
    alone = [n for n in held if n not in ("Page", "NavEntry") and len(models.get(f"evals.site._pages:{n}", ())) < 2]
    assert alone == []



def test_a_figure_s_k_is_filled_in_by_the_judge_alone():
    """"recall_any@k" becomes "recall_any@10" in one place (evals.judge.headline.at_k): no other module and no
    template fills in a k itself (the page models carry the filled name)."""
    pattern = re.compile(r"""replace\(\s*["']@k["']""")
    code = [p for p in (ROOT / "evals").rglob("*.py") if p.relative_to(ROOT).parts[1] != "judge"]
    templates = list((ROOT / "site_templates").rglob("*.html"))
    assert [p.name for p in [*code, *templates] if pattern.search(p.read_text(encoding="utf-8"))] == []


def _evals_imports(path: Path) -> set[str]:
    """Every ``evals`` module ``path`` imports, wherever the import is (top level, a function, type hints)."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("evals"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("evals")}
    return found


def test_views_ask_the_judge_and_decide_nothing():
    """docs/layout.md's "views decide nothing": a view reaches benchmarks only through the registry's lookups (a unit's
    rule, scorer and names, handed to the judge), never a unit's own modules, a protocol or the label audit; and
    nothing above it (a run, the site, the CLI)."""
    found = {}
    for path in (ROOT / "evals" / "views").glob("*.py"):
        bad = [
            m
            for m in _evals_imports(path)
            if m.startswith(("evals.benchmarks.", "evals.run", "evals.site", "evals.cli")) or m == "evals.strategies.registry"
        ]
        if bad:
            found[path.name] = sorted(bad)
    assert found == {}


def test_the_cli_decides_no_figure():
    """docs/layout.md's CLI row: a command reads the judge's metric declarations for their labels and nothing else of the
    judge (no scoring, headline, ceiling or statistics of its own)."""
    found = {
        path.name: sorted(m for m in _evals_imports(path) if m.startswith("evals.judge") and m != "evals.judge.metrics")
        for path in (ROOT / "evals" / "cli").glob("*.py")
    }
    assert {name: mods for name, mods in found.items() if mods} == {}


def test_a_benchmark_unit_imports_the_kit_and_units_alone():
    """docs/layout.md's "a unit imports nothing else of the harness": each unit's modules import the kit, their own
    unit and other units, nothing else of evals."""
    benchmarks = ROOT / "evals" / "benchmarks"
    units = {p.parent.name for p in benchmarks.glob("*/__init__.py")} - {"kit", "protocols"}
    allowed = ("evals.benchmarks.kit", *(f"evals.benchmarks.{u}" for u in units))
    paths = [p for u in units for p in (benchmarks / u).rglob("*.py")] + [benchmarks / "convomem.py"]
    found = {p.relative_to(ROOT).as_posix(): sorted(m for m in _evals_imports(p) if not m.startswith(allowed)) for p in paths}
    assert {name: mods for name, mods in found.items() if mods} == {}
