"""The "play one game" verb in-process: the bundled engine over real pipes, on a game slot.

`runner play` is this verb behind a translation of words (tests/test_cli_games.py runs it as
a process); here the verb itself is called, and its outcomes are values, not exceptions.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from runner.app.play import PositionError, one_game, play_one
from runner.cli.vocabulary import read_arguments
from runner.config.model import TournamentConfig
from runner.game.slot import EngineFailed, Played
from tests.conftest import REPO

BUNDLED = ["--engine", f"cmd={sys.executable}", "arg=-m", "arg=engine", f"dir={REPO}"]


def _config(*words: str) -> TournamentConfig:
    return read_arguments([*words, "--each", "tc=5+0.05", "--maxmoves", "12"], "play").config()


def _children() -> set[int]:
    """The processes this one started that are still there (Linux: read from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.add(int(entry.name))
    return found


needs_proc = pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                                reason="counting child processes reads /proc (Linux)")


@needs_proc
@pytest.mark.timeout(120)
def test_play_one_plays_the_game_from_the_moves_and_leaves_no_engine() -> None:
    before = _children()
    job = one_game(_config(*BUNDLED, "name=one", *BUNDLED, "name=two"), moves=("e2e4", "e7e5"))
    outcome = asyncio.run(play_one(job))
    assert isinstance(outcome, Played), outcome
    record = outcome.record
    assert (record.white, record.black) == ("one", "two")
    assert [move.uci for move in record.moves[:2]] == ["e2e4", "e7e5"] and len(record.moves) > 2
    assert record.result in ("1-0", "0-1", "1/2-1/2")
    assert record.spec.tags["Event"] == "runner play"
    assert _children() <= before


@needs_proc
@pytest.mark.timeout(60)
def test_an_engine_that_does_not_start_is_an_outcome_and_leaves_no_engine() -> None:
    before = _children()
    job = one_game(_config(*BUNDLED, "name=fine", "--engine", "cmd=/bin/false", "name=gone"))
    outcome = asyncio.run(play_one(job))
    assert isinstance(outcome, EngineFailed) and outcome.engine == "gone", outcome
    assert "exit code 1" in outcome.reason
    assert _children() <= before


def test_a_position_that_cannot_be_set_up_is_refused_before_any_engine() -> None:
    config = _config("--engine", "cmd=/bin/false", "name=a", "--engine", "cmd=/bin/false",
                     "name=b")
    with pytest.raises(PositionError, match="e2e5"):
        one_game(config, moves=("e2e5",))
