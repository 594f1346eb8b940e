"""Small wording helpers of the command line's messages."""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: int, word: str, many: str | None = None) -> str:
    """`word` for a count of one, else its plural (`many`, by default `word` + s)."""
    return word if count == 1 else (many or f"{word}s")
