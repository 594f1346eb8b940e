"""A game job: everything a worker needs to play one game, and nothing else, as plain data.

A job is the schedule's index (its key), how to start each engine (the protocol layer's
`EngineConfig`) and the game itself (`GameSpec`: time controls, start position and opening
moves, variant, adjudication, PGN tags, the untimed move timeout). It holds no engine handle,
no database and no configuration object, so it crosses a process or machine boundary as
JSON: `to_json` / `from_json` (pydantic, imported on first use only).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["GameJob"]


@dataclass(frozen=True)
class GameJob:
    """One game for a worker: its key, how to start both engines, and what to play."""

    index: int
    """The game's place in its tournament's schedule (0-based): the key its record comes back with."""
    white: EngineConfig
    black: EngineConfig
    spec: GameSpec

    @property
    def engines(self) -> tuple[str, str]:
        """The two engines' names, White first."""
        return (self.white.name, self.black.name)

    def to_json(self) -> str:
        """The job as JSON text (`from_json` reads it back into an equal job)."""
        return _adapter().dump_json(self).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> GameJob:
        """A job from `to_json` output; ValueError when the text is not a valid job."""
        return _adapter().validate_json(text)


@functools.cache
def _adapter() -> TypeAdapter[GameJob]:
    """The pydantic adapter for jobs, built once on first use (pydantic loads slowly)."""
    from pydantic import TypeAdapter

    return TypeAdapter(GameJob)

