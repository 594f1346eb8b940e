"""What the runner does per ply between real engines, counted rather than timed.

A move relayed costs the runner CPU for every system call on its path. Asking asyncio for
the running loop is one of them on Linux (``asyncio.get_running_loop`` compares the loop's
process id with ``getpid()``, a system call since glibc stopped caching it): the clients and
the game loop know their loop already, so from the first move to the last they ask for it
no more (counted in both builds: compiled code looks the function up on the module too).
"""

from __future__ import annotations

import asyncio

import pytest

from runner.protocol.engine import EngineConfig
from runner.rules import Board
from runner.types import MoveRecord
from tests.bundled_games import check_finished, game_spec, run_game
from tests.conftest import require_binary


@pytest.mark.timeout(60)
@pytest.mark.parametrize("program, protocol", [("fairymax", "cecp"), ("stockfish", "uci")])
def test_no_ply_asks_asyncio_for_the_running_loop(program: str, protocol: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    path = require_binary(program)
    asked = [0]
    own = asyncio.get_running_loop

    def counted() -> asyncio.AbstractEventLoop:
        asked[0] += 1
        return own()

    monkeypatch.setattr(asyncio, "get_running_loop", counted)
    at_move: list[int] = []

    def on_move(played: MoveRecord, board: Board) -> None:
        at_move.append(asked[0])

    engines = [EngineConfig(name=f"{program} {side}", argv=(path,), protocol=protocol)
               for side in ("white", "black")]
    played = run_game(*engines, game_spec("depth=1"), on_move=on_move)
    check_finished(played.record)
    assert len(at_move) >= 10  # enough plies for the count to mean something
    assert asked[0] > at_move[0]  # counting works: start-up and shut-down do ask
    assert at_move[-1] - at_move[0] == 0, f"{at_move[-1] - at_move[0]} over {len(at_move) - 1} plies"
