"""cecp-runner: a chess-engine match and tournament runner."""

from runner import compiled as _compiled

__version__ = "0.1.0"

# Before any compiled module is imported: RUNNER_PURE=1, or compiled modules older than their
# edited sources in a checkout, make the package run its Python source.
_compiled.select()
