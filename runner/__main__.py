"""Allow ``python -m runner``."""

import sys

from runner.cli import hold_collector

hold_collector(sys.argv[1:])  # before the command line's own imports (Typer, rich)

from runner.cli.app import main  # noqa: E402

main()
