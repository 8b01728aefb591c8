"""The README documents what the code does."""

from pathlib import Path

import click

from evals.cli import cli, legacy_cli

README = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")


def test_every_command_is_in_the_readme():
    """Each `evals` subcommand appears in the README as `evals NAME`."""
    missing = [name for name in cli.commands if f"evals {name}" not in README]
    assert missing == []


def test_every_run_option_is_in_the_readme():
    """Each option of `evals run` appears in the README."""
    options = [p.opts[0] for p in cli.commands["run"].params if isinstance(p, click.Option)]
    assert [o for o in options if f"`{o}" not in README] == []


def test_every_legacy_flag_is_in_the_readme():
    """Each flag of `python -m evals` appears in the README."""
    flags = [p.opts[0] for p in legacy_cli.params if isinstance(p, click.Option) and p.opts[0] != "--help"]
    assert [f for f in flags if f not in README] == []


def test_readme_keeps_exactly_two_commands():
    """The README's setup section holds the two commands: run the main job, run the tests."""
    section = README.split("## The two commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    assert [line.split("#")[0].strip() for line in section.strip().splitlines()] == [
        "python3 tasks.py run",
        "python3 tasks.py test",
    ]
