"""Opening policy: which opening each game pair starts from, and the cursor state to store.

Both games of pair ``k`` share the ``k``-th opening the book cursor serves (or, in Chess960
without a book, start position number ``k`` of a seeded draw), so a resumed run recomputes
every opening from the pair numbers alone.
"""

from __future__ import annotations

import random
from typing import Any

from runner.books.cutechess import CUTECHESS_PLIES, CutechessSuite, Mersenne, frc_start_fen
from runner.books.mt64 import FastchessShuffle
from runner.books.openings import Opening, OpeningCursor, chess960_start_fen, open_book
from runner.config.model import BookFormat, OpeningOrder, TournamentConfig
from runner.protocol.cecp_commands import edit_loses_castling
from runner.protocol.engine import Variant
from runner.rules import Board
from runner.tournament.events import TournamentError

__all__ = ["OpeningPolicy", "edit_would_misstate", "opening_over"]

_CACHE_LIMIT = 4096
"""Openings remembered by pair number; both games of a pair are usually played close together."""


class OpeningPolicy:
    """The opening of each game pair: from the book cursor, a Chess960 draw, or none."""

    def __init__(self, config: TournamentConfig) -> None:
        self.config = config
        self.chess960 = config.variant is Variant.FISCHERANDOM
        self.cursor: OpeningCursor | None = None
        self._cache: dict[int, Opening | None] = {}
        self._seed = 0
        self.edit_misstates: dict[int, Opening] = {}
        """The pairs dealt so far whose start position a CECP engine without setboard cannot
        be told (``edit`` would give it castling rights the position has lost), by pair:
        usually none, so checking the engines against them before the first game is cheap."""
        self._rng960: Mersenne | None = None
        self._drawn960: list[str] = []
        self.suite: CutechessSuite | None = None
        """cutechess-cli's order of the book (runner-cutechess), in place of the cursor."""
        cfg = config.openings
        if cfg is not None and config.cutechess is not None:
            try:
                self.suite = CutechessSuite(
                    cfg.file, epd=cfg.format is BookFormat.EPD,
                    random_order=cfg.order is OpeningOrder.RANDOM, start=cfg.start,
                    seed=cfg.seed, plies=CUTECHESS_PLIES if cfg.plies is None else cfg.plies,
                    chess960=self.chess960)
            except (ValueError, OSError) as exc:
                raise TournamentError(
                    f"{config.source}: openings.file = {str(cfg.file)!r}: {exc}") from None
        elif cfg is not None:
            try:
                # A standard tournament opens its book as standard: a position whose castling
                # rights only Chess960 allows is then refused with its line at pre-flight.
                book = open_book(cfg.file, plies=cfg.plies, chess960=self.chess960,
                                 polyglot=cfg.format is BookFormat.POLYGLOT, seed=cfg.seed)
            except (ValueError, OSError) as exc:
                raise TournamentError(
                    f"{config.source}: openings.file = {str(cfg.file)!r}: {exc}") from None
            self.cursor = OpeningCursor(book, order=cfg.order.value, seed=cfg.seed,
                                        start=cfg.start_index)
            self._seed = cfg.seed
        self._fastchess: FastchessShuffle | None = None
        self._fastchess_size = 0

    def _fastchess_index(self, pair: int) -> int:
        """The book entry fastchess deals to encounter `pair`: its book (shuffled by
        mt19937_64 from the seed in random order) rotated by ``start - 1``, cut to ``rounds``
        entries and dealt round and round."""
        assert self.cursor is not None and self.config.openings is not None
        cfg = self.config.openings
        if self._fastchess_size == 0:
            self._fastchess_size = len(self.cursor.book)
            if self._fastchess_size == 0:
                raise ValueError(f"{cfg.file}: the book is empty")
            if cfg.order.value == "random":
                self._fastchess = FastchessShuffle(self._fastchess_size, cfg.seed)
        size = self._fastchess_size
        kept = min(size, max(self.config.rounds, 1))
        position = (pair % kept + cfg.start_index) % size
        return position if self._fastchess is None else self._fastchess[position]

    def check(self, pairs: int) -> None:
        """Deal the opening of each of `pairs` pairs now, so that a book that cannot serve
        them stops the run before its first game; raises `TournamentError` naming the
        configuration file, key, book file and line. The openings dealt stay cached (up to
        the cache's limit) for the games that start from them."""
        cfg = self.config.openings
        if cfg is None:
            return
        try:
            if self.config.fastchess_order is not None and self.cursor is not None:
                # fastchess deals its book round and round after `rounds` entries: the pairs
                # past the first `rounds` repeat openings already checked.
                pairs = min(pairs, max(self.config.rounds, 1), len(self.cursor.book))
            for pair in range(pairs):
                self.for_pair(pair)
        except (ValueError, OSError) as exc:  # OpeningBookError, PolyglotError, unreadable
            raise TournamentError(
                f"{self.config.source}: openings.file = {str(cfg.file)!r}: {exc}") from None

    def for_pair(self, pair: int) -> Opening | None:
        """The opening both games of `pair` start from (None: the standard start position)."""
        if pair in self._cache:
            return self._cache[pair]
        opening: Opening | None = None
        if self.suite is not None:
            opening = self.suite.opening(pair)
        elif self.cursor is not None and self.config.fastchess_order is not None:
            opening = self.cursor.book.opening(self._fastchess_index(pair))
        elif self.chess960 and self.config.cutechess is not None:
            opening = self._cutechess_960(pair)
        elif self.cursor is not None:
            self.cursor.served = pair
            opening = self.cursor.next()
        elif self.chess960:
            number = random.Random(f"chess960:{self._seed}:{pair}").randrange(960)
            opening = Opening(fen=chess960_start_fen(number), chess960=True, index=number,
                              source=f"chess960 #{number}")
        if opening is not None and (why := opening_over(opening)) is not None:
            # A game from it would end before any move and be scored all the same.
            raise ValueError(f"{opening.source}: {why}: remove the position from the book")
        if opening is not None and edit_would_misstate(opening, self.config.variant):
            self.edit_misstates[pair] = opening
        if len(self._cache) > _CACHE_LIMIT:
            self._cache.clear()
        self._cache[pair] = opening
        return opening

    def _cutechess_960(self, pair: int) -> Opening:
        """Chess960 without a book under runner-cutechess: cutechess-cli draws the start
        position of each new opening from its generator, five numbers each, in game order."""
        assert self.config.cutechess is not None
        while len(self._drawn960) <= pair:
            if self._rng960 is None:
                self._rng960 = Mersenne(self.config.cutechess.srand)
            self._drawn960.append(frc_start_fen(self._rng960))
        fen = Board(self._drawn960[pair], chess960=True).fen()
        return Opening(fen=fen, chess960=True, index=pair, source=f"chess960 draw {pair + 1}")

    def state(self, pairs_served: int) -> dict[str, Any] | None:
        """The cursor state to store (resumes recompute openings from pair numbers anyway)."""
        if self.cursor is None:
            return None
        state = self.cursor.state.to_dict()
        state["served"] = pairs_served
        return state


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
