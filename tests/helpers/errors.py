"""What a refused command prints: one ``Error: …`` line, never a traceback."""

from __future__ import annotations


def one_line_error(result, exit_code: int = 1, *, warnings: bool = False) -> str:
    """The ``Error: …`` line of a refused command, checked to be all it printed and not a traceback
    (``warning: …`` lines aside, when ``warnings``)."""
    assert result.exit_code == exit_code, (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if not (warnings and line.startswith("warning: "))]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def usage_error(result) -> str:
    """The ``Error: …`` line of an option click refused (exit 2, after its usage lines), never a traceback."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    errors = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(errors) == 1, result.output
    return errors[0]
