"""The "play one game" verb: one game between two engines, outside any tournament.

`one_game` turns the configuration ``runner play`` reads into the game's job (the start
position checked before any engine starts); `play_one` plays it on a `GameSlot`, so that
starting, stopping and killing the engines follow the one rule every scheduler follows, and
says what happened as a value: the slot's outcome, or `Interrupted` when a stop signal ended
the game (the engines are stopped either way; a second signal does not cut that short).
"""

from __future__ import annotations

from collections.abc import Callable

from runner.app.protocols import ask_protocols
from runner.app.signals import Interrupted, StopGuard, StopPolicy
from runner.config.model import TournamentConfig
from runner.game.job import GameJob
from runner.game.slot import GameSlot, SlotOutcome
from runner.protocol.freeze import FreezeMonitor
from runner.rules import STARTING_FEN, Board
from runner.tournament.runtime import engine_config, game_spec
from runner.types import Variant

__all__ = ["Interrupted", "PlayOutcome", "PositionError", "one_game", "play_config", "play_one"]


class PositionError(ValueError):
    """The start position or the moves played from it cannot be set up."""


PlayOutcome = SlotOutcome | Interrupted
"""What `play_one` returns."""


def one_game(config: TournamentConfig, *, fen: str | None = None,
             moves: tuple[str, ...] = ()) -> GameJob:
    """The job of the one game between `config`'s two engines (White first) from `fen` (the
    standard start by default) after `moves`; PositionError when that cannot be set up."""
    try:
        board = Board(fen or STARTING_FEN, chess960=config.variant is Variant.FISCHERANDOM)
        for uci in moves:
            board.push_uci(uci)
    except ValueError as exc:
        raise PositionError(str(exc)) from None
    white, black = config.engines
    spec = game_spec(config, white.name, black.name, start_fen=fen, opening_moves=moves,
                     tags={"Event": "runner play"})
    return GameJob(0, engine_config(white), engine_config(black), spec)


async def play_one(job: GameJob) -> PlayOutcome:
    """Play `job` on a fresh slot and stop its engines; the first stop signal ends the game
    (`Interrupted`) instead of the process."""
    # A flag that falls while this process stood still gives an unfinished game ("*", the
    # reason saying so), not a loss on time: nothing here plays it again.
    freezes = FreezeMonitor()
    freezes.acquire()
    slot = GameSlot(freezes=freezes)
    try:
        with StopGuard(StopPolicy.GENTLE) as guard:
            return await guard.guarded(slot.play(job))
    finally:
        try:
            await slot.close()  # a played game leaves its engines kept by the slot
        finally:
            freezes.release()


async def play_config(config: TournamentConfig, *, fen: str | None = None,
                      moves: tuple[str, ...] = (),
                      say: Callable[[str], None] = lambda _line: None) -> PlayOutcome:
    """`config`'s one game: the engines given no protocol are asked first (`say` gets a line
    each), then the game is played as `play_one` plays it. A stop signal while they are asked
    ends the command the same way (`Interrupted`, no engine left), not the process."""
    with StopGuard(StopPolicy.GENTLE) as guard:
        resolved = await guard.guarded(ask_protocols(config, say))
    if isinstance(resolved, Interrupted):
        return resolved
    return await play_one(one_game(resolved, fen=fen, moves=moves))
