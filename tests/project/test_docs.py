"""The README and docs/ document what the code does: the README is the door, docs/cli.md the reference."""

import re

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
