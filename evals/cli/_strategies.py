"""``evals strategies`` and ``evals check-strategy``: what is registered, and whether it keeps the contract."""

from __future__ import annotations

import click

from evals.cli._base import (
    cli,
    echo,
    option_pairs,
)
from evals.strategies import Registry


@cli.command("strategies")
@click.option("--names", is_flag=True, help="Print only the names, one per line (for scripts).")
@click.option(
    "--available", is_flag=True, help="Only strategies that run here as they are: extras installed, no LLM endpoint needed."
)
def strategies_command(names: bool, available: bool) -> None:
    """List every registered strategy: name, where it comes from, its options with defaults and help.

    Built-ins and plug-ins are entry points of the group mneme_evals.strategies
    (docs/strategies.md); any other factory can be named as package.module:function.
    A plug-in that fails to load is named in a warning on stderr; the others are listed.
    """
    loaded, broken = Registry().loadable()
    for problem in broken:  # on stderr: --names prints names that run, and nothing else
        echo(f"warning: {problem}", err=True)
    specs = [spec for spec in loaded if not available or spec.available()]
    if names:
        for spec in specs:
            click.echo(spec.name)
        return
    for spec in specs:
        # What it needs: the extra that installs it, said whether or not it is installed here.
        needs = f"  [{'needs' if spec.missing() else 'installed by'} the {spec.extra} extra]" if spec.extra else ""
        needs += "  [asks an LLM endpoint: --option base_url=… or OPENAI_BASE_URL]" if spec.needs_endpoint else ""
        click.echo(f"{spec.name}  ({spec.source}){'  ' + spec.summary if spec.summary else ''}{needs}")
        for key, default, help_text in spec.option_rows():
            click.echo(f"    --option {key}=…  default {default}{'  ' + help_text if help_text else ''}")


@cli.command("check-strategy")
@click.argument("ref", metavar="NAME_OR_REF")
@click.option("--option", "strategy_options", multiple=True, metavar="KEY=VALUE", help="An option of the strategy (repeatable).")
def check_strategy_command(ref: str, strategy_options: tuple[str, ...]) -> None:
    """Run a strategy through the contract on a tiny built-in conversation, before a long run.

    NAME_OR_REF is a registered name or package.module:function. Prints one
    line per check; each failure says what to fix. Exit code 1 when any fails.
    """
    from evals.strategies.contract import run_checks

    checks = run_checks(ref, option_pairs(strategy_options))
    for check in checks:
        click.echo(
            f"{'ok  ' if check.problem is None else 'FAIL'}  {check.name}" + (f": {check.problem}" if check.problem else "")
        )
    failed = sum(c.problem is not None for c in checks)
    click.echo(
        f"{ref}: {failed} of {len(checks)} checks failed" if failed else f"{ref} keeps the contract ({len(checks)} checks)"
    )
    if failed:
        raise click.exceptions.Exit(1)
