"""UCI pondering on the relay (issue 38): a pondering engine that dies while its opponent
thinks loses by disconnect (the fault reaches the game's core when the relay asks it for its
move). tests/test_uci_ponder.py checks the dialogue and the clocks of pondering games."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from conftest import require_binary

from runner.game.adjudication import AdjudicationRules
from runner.game.record import GameTermination
from runner.protocol.engine import EngineConfig
from runner.rules import Board, Result
from runner.types import MoveRecord
from tests.bundled_games import game_spec, run_game


def _config(name: str, tmp_path: Path, ponder: bool) -> EngineConfig:
    workdir = tmp_path / name
    workdir.mkdir(exist_ok=True)
    return EngineConfig(name=name, argv=(require_binary(name),), working_dir=workdir,
                        protocol="uci", options={"Hash": "16", "Threads": "1"}, ponder=ponder,
                        quit_timeout=2.0, terminate_timeout=1.0)


def _child_named(name: str) -> int:
    """The pid of this process's child running `name`."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
                with open(f"/proc/{entry}/comm") as handle:
                    comm = handle.read().strip()
            except OSError:
                continue
            if int(fields[1]) == os.getpid() and comm == name:
                return int(entry)
    raise AssertionError(f"no child {name}")


@pytest.mark.timeout(120)
def test_a_pondering_engine_killed_on_the_relay_loses_by_disconnect(tmp_path: Path) -> None:
    white = _config("stockfish", tmp_path, ponder=True)
    black = _config("ethereal-chess", tmp_path, ponder=False)
    plies: list[int] = []

    def on_move(move: MoveRecord, board: Board) -> None:
        plies.append(1)
        if len(plies) == 5:  # White's third move: it ponders from now on, and dies
            os.kill(_child_named("stockfish"), signal.SIGKILL)

    spec = game_spec("4+0.04 timemargin=1000", adjudication=AdjudicationRules(max_moves=12))
    record = run_game(white, black, spec, on_move).record
    assert (record.result, record.termination) == (Result.BLACK_WINS, GameTermination.DISCONNECT)
    assert len(record.moves) == 6 and not record.replay
    assert record.moves[2].ponder_hit is not None  # it pondered before its second move
