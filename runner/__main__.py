"""Allow ``python -m runner``."""

from runner.cli.app import main

main()
