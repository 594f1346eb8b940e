"""Debian CECP engines through `play_game`: complete games, no protocol error, no time loss.

Each engine plays both colors against the bundled engine and one game against another real
engine, at a short time control. Games are bounded by a maximum length (a draw by
adjudication is a complete game); a runner error, a stall, a disconnect, an illegal move, a
false claim or a time forfeit fails the test, with the engine's transcript tail in the message.
Stockfish speaks UCI; polyglot adapts it, configured by an ini file written into tmp_path.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import require_binary

from runner.game.adjudication import AdjudicationRules
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import EngineConfig
from tests.bundled_games import (
    RULES_ENDINGS,
    bundled,
    check_clocks,
    check_not_over,
    check_rules_ending,
    game_spec,
    run_game,
)

pytestmark = pytest.mark.slow

TC = "5+0.05"
MAX_MOVES = 60
_FAILURES = {
    GameTermination.STALL, GameTermination.TIME_FORFEIT, GameTermination.DISCONNECT,
    GameTermination.ILLEGAL_MOVE, GameTermination.FALSE_CLAIM, GameTermination.ERROR,
}


def _polyglot_stockfish(tmp_path: Path) -> tuple[str, ...]:
    polyglot = require_binary("polyglot")
    stockfish = require_binary("stockfish")
    ini = tmp_path / "stockfish.ini"
    ini.write_text(
        "[PolyGlot]\n"
        f"EngineCommand = {stockfish}\n"
        f"EngineDir = {tmp_path}\n"
        "EngineName = Stockfish\n"
        "Book = false\n"
        "Log = false\n"
        "\n[Engine]\n"
        "Hash = 16\n"
        "Threads = 1\n"
    )
    return (polyglot, str(ini))


_COMMANDS: dict[str, Callable[[Path], tuple[str, ...]]] = {
    "fairymax": lambda tmp: (require_binary("fairymax"),),
    "gnuchess": lambda tmp: (require_binary("gnuchess"), "-x"),
    "phalanx": lambda tmp: (require_binary("phalanx"),),
    "hoichess": lambda tmp: (require_binary("hoichess"),),
    "sjeng": lambda tmp: (require_binary("sjeng"),),
    "stockfish": _polyglot_stockfish,
}


def real_engine(name: str, tmp_path: Path) -> EngineConfig:
    """A configuration for a Debian engine, run in its own scratch directory (some write files)."""
    workdir = tmp_path / name
    workdir.mkdir(exist_ok=True)
    return EngineConfig(name=name, argv=_COMMANDS[name](tmp_path), working_dir=workdir,
                        quit_timeout=2.0, terminate_timeout=1.0)


# Commands some engines refuse and say so, harmlessly. "result": fairymax, after claiming its
# own mate ("1-0 {White mates}"), answers the following "result 1-0" with "Error (unknown
# command): result". ("computer" is no longer sent: fairymax crashed on it.)
_OPTIONAL_COMMANDS = frozenset({"result"})
_COMPLAINT = re.compile(r" < \s*(?:Error \([^)]*\)|Illegal move|Invalid move)[^:]*:\s*(?P<what>.*)$",
                        re.IGNORECASE)


def protocol_complaints(transcript: tuple[str, ...]) -> list[str]:
    """Lines where the engine refused something we sent, other than optional commands."""
    found = []
    for line in transcript:
        match = _COMPLAINT.search(line)
        words = match["what"].split() if match is not None else ()
        if match is not None and (not words or words[0] not in _OPTIONAL_COMMANDS):
            found.append(line)
    return found


def check_complete(record: GameRecord, real_sides: tuple[bool, ...]) -> None:
    """The game ended with a result for a reason that is no one's fault, or a real engine's
    fault is shown with the end of its transcript."""
    if record.termination in _FAILURES or record.replay:
        shown = [record.transcripts[0 if white else 1][-30:] for white in real_sides]
        pytest.fail(f"{record.white} vs {record.black}: {record.result} {record.reason}\n"
                    + "\n---\n".join("\n".join(lines) for lines in shown))
    assert record.result in ("1-0", "0-1", "1/2-1/2")
    for white in real_sides:
        transcript = record.transcripts[0 if white else 1]
        complaints = protocol_complaints(transcript)
        assert complaints == [], "\n".join([record.reason, *transcript[-25:]])
    if record.termination in RULES_ENDINGS:
        check_rules_ending(record)
    else:
        assert record.termination in (GameTermination.MAX_MOVES, GameTermination.ADJUDICATION,
                                      GameTermination.RESIGNATION, GameTermination.DRAW_AGREEMENT)
        check_not_over(record)
    check_clocks(record)


def _spec():
    return game_spec(TC, adjudication=AdjudicationRules(max_moves=MAX_MOVES))


def _started_late(record: GameRecord) -> bool:
    """An engine's ``feature done=1`` arrived only after its game began.

    gnuchess 6.2.7 (-x) can stay stuck at start-up: its adapter thread calls setbuf(stdin)
    while its input thread holds the stdin lock in fgets(), and gets the lock only if it wins
    the moment between two lines read. The runner probes and restarts it (see
    CecpEngine._negotiate), but once in a few thousand starts on a busy CI machine every
    attempt stayed stuck, the game began on protocol-1 defaults and gnuchess never moved.
    That is gnuchess's start-up, not the game protocol this file tests.
    """
    return any(line.endswith("< feature done=1") for side in record.transcripts for line in side)


def play_checked(white: EngineConfig, black: EngineConfig, attempts: int = 3) -> GameRecord:
    """One game; played again (up to `attempts` in all) only when a start-up stayed stuck."""
    for _ in range(attempts - 1):
        record = run_game(white, black, _spec()).record
        if not _started_late(record):
            return record
    return run_game(white, black, _spec()).record


@pytest.mark.timeout(150)
@pytest.mark.parametrize("name", list(_COMMANDS))
def test_two_games_against_the_bundled_engine(name, tmp_path):
    real = real_engine(name, tmp_path)
    for real_white in (True, False):
        bot = bundled("bundled", "--level", "2", "--seed", "1")
        white, black = (real, bot) if real_white else (bot, real)
        record = play_checked(white, black)
        check_complete(record, (real_white,))
        own = [m for i, m in enumerate(record.moves) if (i % 2 == 0) == real_white]
        assert own, "the real engine made no move"


_PAIRS = [("gnuchess", "fairymax"), ("hoichess", "phalanx"), ("stockfish", "sjeng")]


@pytest.mark.timeout(150)
@pytest.mark.parametrize("white_name,black_name", [pytest.param(w, b, id=f"{w}-{b}") for w, b in _PAIRS])
def test_real_engine_against_real_engine(white_name, black_name, tmp_path):
    white, black = real_engine(white_name, tmp_path), real_engine(black_name, tmp_path)
    record = play_checked(white, black)
    check_complete(record, (True, False))
