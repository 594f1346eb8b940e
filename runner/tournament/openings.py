"""Opening policy: which opening each game pair starts from, and the dealer state to store.

The tournament's order style deals (runner.tournament.styles); the runner's own
`RunnerDealer` gives both games of pair ``k`` the ``k``-th opening the book cursor serves (or,
in Chess960 without a book, start position number ``k`` of a seeded draw), so a resumed run
recomputes every opening from the pair numbers alone. `OpeningPolicy` checks and caches what
any dealer deals.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from runner.config.model import BookFormat, TournamentConfig
from runner.protocol.cecp_commands import edit_loses_castling
from runner.rules import Board
from runner.tournament.events import TournamentError
from runner.tournament.styles import OpeningDealer, OrderImplementation, given
from runner.types import Variant

if TYPE_CHECKING:
    # The books (and the PGN reader behind them) are imported by a run that deals openings:
    # a run from the start position loads neither (issue 38: their regexes and classes were
    # 5% of a match's start-up).
    from runner.books.openings import Opening, OpeningCursor

__all__ = ["OpeningPolicy", "RunnerDealer", "edit_would_misstate", "opening_over"]

_CACHE_LIMIT = 4096
"""Openings remembered by pair number; both games of a pair are usually played close together."""


class RunnerDealer:
    """The runner's own deal: pair ``k`` starts from the ``k``-th opening the book cursor
    serves; without a book, a Chess960 tournament from start position number ``k`` of a
    seeded draw, any other from the standard start position."""

    def __init__(self, config: TournamentConfig) -> None:
        self.chess960 = config.variant is Variant.FISCHERANDOM
        self.cursor: OpeningCursor | None = None
        cfg = config.openings
        if cfg is not None:
            from runner.books.openings import OpeningCursor, open_book

            # A standard tournament opens its book as standard: a position whose castling
            # rights only Chess960 allows is then refused with its line at pre-flight.
            book = open_book(cfg.file, plies=cfg.plies, chess960=self.chess960,
                             polyglot=cfg.format is BookFormat.POLYGLOT, seed=cfg.seed)
            self.cursor = OpeningCursor(book, order=cfg.order.value, seed=cfg.seed,
                                        start=cfg.start_index)

    def deal(self, pair: int) -> Opening | None:
        """The opening of game pair `pair`."""
        if self.cursor is not None:
            self.cursor.served = pair
            return self.cursor.next()
        if self.chess960:
            from runner.books.openings import Opening, chess960_start_fen

            number = random.Random(f"chess960:0:{pair}").randrange(960)
            return Opening(fen=chess960_start_fen(number), chess960=True, index=number,
                           source=f"chess960 #{number}")
        return None

    def pairs_to_check(self, pairs: int) -> int:
        """Every pair's opening is its own."""
        return pairs

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The cursor state to store (resumes recompute openings from pair numbers anyway)."""
        if self.cursor is None:
            return None
        state = self.cursor.state.to_dict()
        state["served"] = pairs_served
        return state


class OpeningPolicy:
    """The opening of each game pair, from the dealer of the tournament's order style,
    checked (a position no game can be played from is refused) and cached."""

    def __init__(self, config: TournamentConfig, dealer: OpeningDealer | None = None,
                 style: OrderImplementation | None = None) -> None:
        self.config = config
        self._cache: dict[int, Opening | None] = {}
        self.edit_misstates: dict[int, Opening] = {}
        """The pairs dealt so far whose start position a CECP engine without setboard cannot
        be told (``edit`` would give it castling rights the position has lost), by pair:
        usually none, so checking the engines against them before the first game is cheap."""
        if dealer is None:
            try:
                ordered = given(config, style)
                dealer = RunnerDealer(config) if ordered is None else ordered.dealer(config)
            except (ValueError, OSError) as exc:
                cfg = config.openings
                where = "openings" if cfg is None else f"openings.file = {str(cfg.file)!r}"
                raise TournamentError(f"{config.source}: {where}: {exc}") from None
        self.dealer = dealer

    def check(self, pairs: int) -> None:
        """Deal the opening of each of `pairs` pairs now, so that a book that cannot serve
        them stops the run before its first game; raises `TournamentError` naming the
        configuration file, key, book file and line. The openings dealt stay cached (up to
        the cache's limit) for the games that start from them."""
        cfg = self.config.openings
        if cfg is None:
            return
        try:
            for pair in range(self.dealer.pairs_to_check(pairs)):
                self.for_pair(pair)
        except (ValueError, OSError) as exc:  # OpeningBookError, PolyglotError, unreadable
            raise TournamentError(
                f"{self.config.source}: openings.file = {str(cfg.file)!r}: {exc}") from None

    def for_pair(self, pair: int) -> Opening | None:
        """The opening both games of `pair` start from (None: the standard start position)."""
        if pair in self._cache:
            return self._cache[pair]
        opening = self.dealer.deal(pair)
        if opening is not None and (why := opening_over(opening)) is not None:
            # A game from it would end before any move and be scored all the same.
            raise ValueError(f"{opening.source}: {why}: remove the position from the book")
        if opening is not None and edit_would_misstate(opening, self.config.variant):
            self.edit_misstates[pair] = opening
        if len(self._cache) > _CACHE_LIMIT:
            self._cache.clear()
        self._cache[pair] = opening
        return opening

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The dealer's state to store (resumes recompute openings from pair numbers anyway)."""
        return self.dealer.state(pairs_served)


def edit_would_misstate(opening: Opening, variant: Variant) -> bool:
    """Whether `opening`'s start position, stated with CECP ``edit``, would gain castling
    rights: only standard chess, and only when the FEN gives up a right (most openings keep
    all four, and are passed over on the castling field alone)."""
    if variant is not Variant.STANDARD or opening.chess960:
        return False
    fields = opening.fen.split(" ", 3)
    if len(fields) > 2 and fields[2] == "KQkq":
        return False
    return edit_loses_castling(opening.fen) is not None


def opening_over(opening: Opening) -> str | None:
    """Why no game can be played from `opening` (already ended, or counters no game can
    reach), or None when it can."""
    fields = opening.fen.split()
    if len(fields) >= 6 and fields[4].isascii() and fields[4].isdigit() and fields[5].isdigit():
        halfmove, fullmove = int(fields[4]), int(fields[5])
        # Plies a game has played when it reaches this move number and side to move: the
        # halfmove clock counts some of them, so it can never be larger.
        played = 2 * (max(fullmove, 1) - 1) + (fields[1] == "b")
        if halfmove > played:
            return (f"halfmove clock {halfmove} is more than the {played} plies a game has "
                    f"played by move {fullmove} with {'black' if fields[1] == 'b' else 'white'} "
                    "to move (FEN fields 5 and 6)")
    board = Board(opening.fen, chess960=opening.chess960)
    for move in opening.moves:
        board.push_uci(move)
    outcome = board.outcome()
    if outcome is not None:
        ended = outcome.termination.value.replace("_", " ")
        return f"the opening is already over ({ended}{' after its moves' if opening.moves else ''})"
    if board.is_fifty_moves():
        return "the opening is already over (fifty moves without capture or pawn move)"
    return None
