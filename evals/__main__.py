"""``python -m evals``: the original harness's command line, flag for flag.

``python -m evals run …`` (or any other subcommand) reaches the full CLI.
"""

import sys

if __name__ == "__main__":
    try:
        from evals.cli import main
    except KeyboardInterrupt:  # Ctrl-C before the command line is even loaded: no traceback either
        sys.stderr.write("Interrupted.\n")
        sys.exit(130)
    main(sys.argv[1:], legacy=True)
