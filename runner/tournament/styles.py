"""Order styles: the seam between a tournament and the programs whose habits it can copy.

A tournament plays the runner's own game pairs unless its configuration names another
`OrderStyle` (`TournamentConfig.order`). A style is three choices, passed to the run as one
`OrderImplementation`: the schedule (who plays whom, in which order and colours), the
opening dealer (which opening game pair ``k`` starts from) and the adjudication style (how
the rules count a game's moves). The implementations live with the drop-ins that need them
(``runner.dropin.<peer>.order``). Whoever builds a run hands it the implementation (a
drop-in, its own: `style` of the run, the schedule, the dealer and the game's description).
The store keeps only the style's neutral value (``index``, ``stepped``); a run rebuilt from
the store with none handed (``runner resume``, a report's schedule) gets the one the
installed package declares for that value, under the entry-point group `ENTRY_POINTS`
(pyproject.toml): nothing here names a drop-in's module.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from runner.config.model import OrderStyle

if TYPE_CHECKING:
    from runner.books.openings import Opening
    from runner.config.model import TournamentConfig
    from runner.game.adjudication import AdjudicationRules
    from runner.game.termination import GameTermination
    from runner.rules import Result
    from runner.tournament.schedule import Schedule

__all__ = ["ENTRY_POINTS", "OpeningDealer", "OrderImplementation", "given", "installed"]

ENTRY_POINTS = "runner.order_styles"
"""The entry-point group that names each style's implementation by the style's value."""


class OpeningDealer(Protocol):
    """Which opening each game pair starts from, as a style deals them."""

    def deal(self, pair: int) -> Opening | None:
        """The opening of opening number `pair` (None: the standard start position);
        ValueError or OSError when the book cannot serve it."""
        ...

    def pairs_to_check(self, pairs: int) -> int:
        """How many of the first `pairs` openings a pre-flight must deal to have dealt every
        opening the run will (fewer when the deal goes round and round)."""
        ...

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The dealer's state to store with the tournament (None: nothing to keep)."""
        ...


def _same_rules(rules: AdjudicationRules) -> AdjudicationRules:
    """The adjudication rules as the configuration gives them."""
    return rules


@dataclass(frozen=True)
class OrderImplementation:
    """What a style decides, as functions of the tournament's configuration."""

    schedule: Callable[[TournamentConfig, list[str], int | None], Schedule]
    """The schedule of the named engines, cut at an SPRT's game limit when one is given."""
    dealer: Callable[[TournamentConfig], OpeningDealer]
    """The opening dealer; ValueError or OSError when the book cannot be opened."""
    adjudication: Callable[[AdjudicationRules], AdjudicationRules] = _same_rules
    """The game's adjudication rules with the style's way of counting."""
    clock_head_start: bool = False
    """Whether each clock starts with its first increment already added (runner.clock.Clock)."""
    result_words: Callable[[Result, GameTermination, str], str] | None = None
    """What the engines are told of a game's end (GameSpec.result_words; None: the runner's
    own reason)."""


_INSTALLED: dict[OrderStyle, OrderImplementation] = {}
"""The implementations `installed` has loaded, by style."""


def installed(style: OrderStyle) -> OrderImplementation:
    """The implementation the installed package declares for `style` (entry-point group
    `ENTRY_POINTS`); LookupError when none is declared."""
    if style not in _INSTALLED:
        from importlib.metadata import entry_points

        found = entry_points(group=ENTRY_POINTS, name=style.value)
        if not found:
            raise LookupError(
                f"no implementation of order style {style.value!r} is installed (entry point "
                f"{style.value} in group {ENTRY_POINTS}: an editable install made before it "
                "was declared needs 'pip install -e .' again)")
        implementation = next(iter(found)).load()
        if not isinstance(implementation, OrderImplementation):
            raise LookupError(f"entry point {style.value} of {ENTRY_POINTS} is not an "
                              "OrderImplementation")
        _INSTALLED[style] = implementation
    return _INSTALLED[style]


def given(config: TournamentConfig, style: OrderImplementation | None,
          ) -> OrderImplementation | None:
    """The implementation a run of `config` plays its order style by: `style` when its
    builder handed one, else the installed one (`installed`); None for the runner's own
    game pairs."""
    if config.order is None:
        return None
    return style if style is not None else installed(config.order.style)
