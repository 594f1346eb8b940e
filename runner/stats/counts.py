"""The counts every figure starts from: single games (trinomial) and game pairs (pentanomial).

Both are seen from the FIRST engine's point of view ("wins" are its wins); ``swapped`` gives
the other engine's view. Counts are checked on construction, so a figure never starts from a
negative or fractional count.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Counts", "Pentanomial", "StatsInputError", "Trinomial"]


class StatsInputError(ValueError):
    """Counts or test parameters that cannot describe a match (negative counts, bad alpha...)."""



def _check_count(name: str, value: int) -> None:
    """Refuse anything but a non-negative integer count."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise StatsInputError(f"{name} must be an integer count, got {value!r}")
    if value < 0:
        raise StatsInputError(f"{name} must not be negative, got {value}")


@dataclass(frozen=True)
class Trinomial:
    """Single-game counts from the first engine's point of view."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        for name in ("wins", "draws", "losses"):
            _check_count(name, getattr(self, name))

    @property
    def games(self) -> int:
        """Number of games."""
        return self.wins + self.draws + self.losses

    @property
    def low_to_high(self) -> tuple[int, int, int]:
        """Counts ordered by outcome, worst first: (losses, draws, wins)."""
        return (self.losses, self.draws, self.wins)

    def swapped(self) -> Trinomial:
        """The same games seen from the second engine."""
        return Trinomial(self.losses, self.draws, self.wins)


@dataclass(frozen=True)
class Pentanomial:
    """Game-pair counts [LL, LD, DD+WL, WD, WW]: pairs scoring 0, 1/2, 1, 3/2 and 2 points.

    ``wl_pairs`` optionally says how many of the ``dd_wl`` pairs were a win and a loss (the
    rest being two draws); only the trinomial view (and so the BayesElo model) needs it.
    """

    ll: int
    ld: int
    dd_wl: int
    wd: int
    ww: int
    wl_pairs: int | None = None

    def __post_init__(self) -> None:
        for name in ("ll", "ld", "dd_wl", "wd", "ww"):
            _check_count(name, getattr(self, name))
        if self.wl_pairs is not None:
            _check_count("wl_pairs", self.wl_pairs)
            if self.wl_pairs > self.dd_wl:
                raise StatsInputError(
                    f"wl_pairs ({self.wl_pairs}) cannot exceed the DD+WL pairs ({self.dd_wl})"
                )

    @property
    def pairs(self) -> int:
        """Number of game pairs."""
        return self.ll + self.ld + self.dd_wl + self.wd + self.ww

    @property
    def games(self) -> int:
        """Number of games (two per pair)."""
        return 2 * self.pairs

    @property
    def low_to_high(self) -> tuple[int, int, int, int, int]:
        """Counts ordered by pair score, worst first."""
        return (self.ll, self.ld, self.dd_wl, self.wd, self.ww)

    def swapped(self) -> Pentanomial:
        """The same pairs seen from the second engine."""
        return Pentanomial(self.ww, self.wd, self.dd_wl, self.ld, self.ll, self.wl_pairs)

    def trinomial(self) -> Trinomial | None:
        """The single-game counts of the same games, or None when the WL/DD split is unknown."""
        if self.wl_pairs is None:
            return None
        wl = self.wl_pairs
        dd = self.dd_wl - wl
        return Trinomial(
            wins=2 * self.ww + self.wd + wl,
            draws=self.ld + 2 * dd + self.wd,
            losses=2 * self.ll + self.ld + wl,
        )


Counts = Trinomial | Pentanomial
