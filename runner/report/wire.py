"""The one wire vocabulary: a base for every JSON payload, the inf/NaN rule, the report tree.

Every body the service sends (a tournament's summary or detail, a board, each event) and the
report's JSON are pydantic models built on `Wire`, declared once where they belong, and turned
into JSON only by `wire_data` / `wire_text` here. A figure that is not finite (the Elo of a
sweep, an empty ratio) is null on the wire, never ``Infinity`` or ``NaN``, which JSON lacks:
the `Finite` type applies that rule when a payload is built, so no model ever holds one.

The statistics room returns numbers only; their JSON shape (the keys ``runner stats --json``
always wrote) is declared here. This module imports no database code, so ``runner stats``
stays quick; the report tree is in `runner.report.tree`.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict

from runner.report.figures import finite
from runner.stats import MatchStats, SprtResult

__all__ = [
    "Finite",
    "SprtJson",
    "StatsJson",
    "Wire",
    "finite",
    "stats_json",
    "wire_data",
    "wire_text",
]


Finite = Annotated[float | None, BeforeValidator(finite)]
"""A figure on the wire: a number, or null where it is infinite, NaN or absent."""


class Wire(BaseModel):
    """Base of every payload: immutable, and no key that is not declared."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def wire_data(payload: Wire) -> dict[str, Any]:
    """The payload as JSON-ready data (plain dicts, lists, numbers, text, null)."""
    return payload.model_dump(mode="json")


def wire_text(payload: Wire, *, indent: int | None = None) -> str:
    """The payload as JSON text (compact unless `indent` is given)."""
    return payload.model_dump_json(indent=indent)


# -- statistics ----------------------------------------------------------------------------------


class SprtJson(Wire):
    """Where an SPRT stands: its log-likelihood ratio, bounds and decision."""

    llr: Finite
    lower_bound: Finite
    upper_bound: Finite
    decision: str | None

    @classmethod
    def of(cls, result: SprtResult) -> SprtJson:
        """The wire form of a `runner.stats.SprtResult`."""
        return cls(llr=result.llr, lower_bound=result.lower_bound,
                   upper_bound=result.upper_bound, decision=result.decision.value)


class StatsJson(Wire):
    """A match's figures with the keys of ``runner stats --json`` (null where none applies)."""

    games: int
    pairs: int | None
    score: Finite
    elo: Finite
    elo_error95: Finite
    los: Finite
    draw_ratio: Finite
    pair_draw_ratio: Finite
    nelo: Finite
    nelo_error95: Finite
    sprt: SprtJson | None

    @classmethod
    def of(cls, stats: MatchStats) -> StatsJson:
        """The wire form of a `runner.stats.MatchStats`."""
        return cls(games=stats.games, pairs=stats.pairs, score=stats.score, elo=stats.elo,
                   elo_error95=stats.elo_error95, los=stats.los, draw_ratio=stats.draw_ratio,
                   pair_draw_ratio=stats.pair_draw_ratio, nelo=stats.nelo,
                   nelo_error95=stats.nelo_error95,
                   sprt=None if stats.sprt is None else SprtJson.of(stats.sprt))


def stats_json(stats: MatchStats) -> dict[str, Any]:
    """A match's figures as JSON-ready data (``runner stats --json``)."""
    return wire_data(StatsJson.of(stats))
