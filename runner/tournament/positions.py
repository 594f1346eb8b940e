"""Openings an engine cannot be told, found before the first game rather than when one comes up.

A CECP engine without ``setboard`` is given a position with ``edit``, which has no way to say
that castling rights were lost while king and rook stand at home (the engine takes them as
kept). The protocol layer refuses such a game when it is set up; this module looks at the
openings the schedule will deal, once, before anything is played, so that a book holding such
a position stops the run at its start with one line instead of after a part of it.

Openings are passed on as their root position plus the book moves played from it (a PGN or
Polyglot line from the start position is told as ``new`` and moves, so rights lost by those
moves are known to the engine): only a root position can be untellable, and only the pairs
whose root is (`OpeningPolicy.edit_misstates`, usually none) cost anything here.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING

from runner.protocol.engine import Engine, EngineConfig, EngineError
from runner.protocol.factory import make_engine
from runner.protocol.lifetime import finish_uncancelled
from runner.tournament.events import TournamentError
from runner.tournament.openings import edit_would_misstate
from runner.tournament.schedule import Schedule
from runner.types import Protocol, Variant

if TYPE_CHECKING:  # a run from the start position imports no book (issue 38)
    from runner.books.openings import Opening

__all__ = ["refuse_untellable_openings"]

log = logging.getLogger(__name__)


def _games_by_engine(candidates: Mapping[int, Opening], pairing: Schedule,
                     done: Collection[int]) -> dict[str, list[tuple[int, Opening, int]]]:
    """For each engine, the suspect openings it would still play from (in schedule order), as
    (pair, opening, number of its unplayed games that start from it)."""
    total = pairing.total()
    found: dict[str, list[tuple[int, Opening, int]]] = {}
    for pair in sorted(candidates):
        games = [pairing.job(i) for i in pairing.pair_games(pair)
                 if i < total and i not in done]
        games = [game for game in games if game.pair == pair]
        if not games:
            continue
        for name in dict.fromkeys(name for game in games for name in game.engines):
            count = sum(name in game.engines for game in games)
            found.setdefault(name, []).append((pair, candidates[pair], count))
    return found


async def refuse_untellable_openings(
    dealt: Mapping[int, Opening], resumed: Mapping[int, Opening], pairing: Schedule,
    done: Collection[int], engines: Mapping[str, EngineConfig], variant: Variant, *,
    factory: Callable[[EngineConfig], Engine] = make_engine,
) -> None:
    """Raise `TournamentError` (one line: engine, opening, what to do) when an engine would be
    dealt an opening it cannot be told; `dealt` are the suspect pairs the book dealt,
    `resumed` the openings stored for pairs half played before. Each engine concerned is
    started once to learn its features (only when there is a suspect opening at all); an
    engine that does not start here is left to the scheduler, which refuses the game then."""
    candidates = {pair: opening for pair, opening in dealt.items() if pair not in resumed}
    candidates.update((pair, opening) for pair, opening in resumed.items()
                      if edit_would_misstate(opening, variant))
    if not candidates:
        return
    for name, openings in _games_by_engine(candidates, pairing, done).items():
        config = engines.get(name)
        # A UCI engine is given every position as a FEN: only CECP ones can refuse.
        if config is None or config.protocol is not Protocol.CECP:
            continue
        engine = factory(config)
        try:
            await engine.start()
            refused = [(pair, opening, count, why) for pair, opening, count in openings
                       if (why := engine.position_refusal(opening.fen, variant)) is not None]
        except (EngineError, OSError, ValueError) as exc:
            log.debug("could not start %s to check its openings: %s", name, exc)
            continue
        finally:
            with contextlib.suppress(Exception):
                await finish_uncancelled(engine.quit())
        if not refused:
            continue
        pair, opening, _, why = refused[0]
        games = sum(count for _, _, count, _ in refused)
        # An opening stored with a half-played pair has no book line: name the pair then.
        which = (f"opening {opening.index + 1} ({opening.source})" if opening.source
                 else f"the stored opening of game pair {pair + 1}")
        raise TournamentError(
            f"engine {name} cannot be given {which} {opening.fen!r}: {why}; {games} of its "
            "games in this schedule start from such a position, and none was played in this "
            "run: remove such positions from the book, or play this engine in a build with "
            "setboard")
