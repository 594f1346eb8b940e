"""cecp-runner: a chess-engine match and tournament runner."""

__version__ = "0.1.0"
