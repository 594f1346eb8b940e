"""`python -m engine`: run the bundled CECP engine on stdin/stdout."""

from __future__ import annotations

import os
import sys

from engine.config import parse_config
from engine.protocol import serve


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and serve CECP until `quit`."""
    return serve(parse_config(argv))


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    # Leave without joining the daemon reader and search threads (they may be mid-read).
    os._exit(status)
