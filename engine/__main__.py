"""`python -m engine`: the bundled engine on stdin/stdout (CECP, or UCI with `--uci`); `bench`."""

from __future__ import annotations

import os
import sys

from engine.config import parse_config
from engine.protocol import serve


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and serve CECP (or UCI with `--uci`) until `quit`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "bench" in args:
        # `[options] bench [DEPTH]`: how a test queue appends its bench to an engine's command.
        from engine.bench import main as bench

        at = args.index("bench")
        return bench(args[at + 1:], parse_config(args[:at]))
    if "--uci" in args:
        from engine.uci import serve_uci, translate_fault_aliases

        args.remove("--uci")
        return serve_uci(parse_config(translate_fault_aliases(args)))
    return serve(parse_config(args))


if __name__ == "__main__":
    status = main()
    sys.stdout.flush()
    # Leave without joining the daemon reader and search threads (they may be mid-read).
    os._exit(status)
