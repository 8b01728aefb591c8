"""``python -m evals``: the original harness's command line, flag for flag.

``python -m evals run …`` (or any other subcommand) reaches the full CLI.
"""

import sys

from evals.cli import main

if __name__ == "__main__":
    main(sys.argv[1:], legacy=True)
