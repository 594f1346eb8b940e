"""Order styles: the seam between a tournament and the programs whose habits it can copy.

A tournament plays the runner's own game pairs unless its configuration names another
`OrderStyle` (`TournamentConfig.order`). A style is three choices, passed to the run as one
`OrderImplementation`: the schedule (who plays whom, in which order and colours), the
opening dealer (which opening game pair ``k`` starts from) and the adjudication style (how
the rules count a game's moves). The implementations live with the drop-ins that need them
(``runner.dropin.<peer>.order``), which register them here when imported; the store keeps
only the style's value, so that a run resumed from any front door finds its implementation
again through `implementation`.
"""

from __future__ import annotations

import importlib
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

__all__ = ["OpeningDealer", "OrderImplementation", "implementation", "register"]


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


_REGISTERED: dict[OrderStyle, OrderImplementation] = {}

_PROVIDERS = {
    OrderStyle.INDEX: "runner.dropin.fastchess.order",
    OrderStyle.STEPPED: "runner.dropin.cutechess.order",
}
"""The module that registers each style, imported by name when a run needs a style nobody
registered yet (``runner resume`` of a drop-in's tournament): the only place below the
drop-ins that knows where they live. import-linter does not follow it, by design: the
drop-ins sit above the tournament, which must not import them."""


def register(style: OrderStyle, implementation: OrderImplementation) -> None:
    """Make `implementation` the one runs of `style` use."""
    _REGISTERED[style] = implementation


def implementation(style: OrderStyle) -> OrderImplementation:
    """The registered implementation of `style`, its provider imported when none is yet."""
    if style not in _REGISTERED:
        importlib.import_module(_PROVIDERS[style])
    return _REGISTERED[style]
