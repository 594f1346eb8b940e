"""Debian UCI engines through `play_game`: complete games, options that take effect, Chess960,
and a stopped engine found out by ``isready``.

Each engine plays the bundled engine (once over CECP, once over UCI) and one game against
another UCI engine, at a short time control bounded by a maximum length. A runner error, a
stall, a disconnect, an illegal move or a time forfeit fails the test with the transcript's
tail (`check_complete`). Option effects are read from /proc: the engine's thread count and
resident memory after ``setoption`` (UCI has no way to read an option back).
"""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from conftest import require_binary
from test_real_engines import check_complete

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import ClockState, EngineConfig, GameSetup, Side
from runner.protocol.uci import UciEngine
from runner.types import Variant
from tests.bundled_games import (
    bundled,
    bundled_uci,
    game_spec,
    leftover_processes,
    our_children,
    replay,
    run_game,
    sent_lines,
)

pytestmark = pytest.mark.slow

# A 100 ms margin past the clock (cutechess's timemargin): the machine is shared and loaded.
TC = "2+0.05 timemargin=100"
MAX_MOVES = 35
# Each engine's thread option, and whether a change of Threads shows in /proc while it
# searches (glaurung starts a fixed pool of threads whatever it is told).
ENGINES = {
    "stockfish": ("Threads", True),
    "ethereal-chess": ("Threads", True),
    "toga2": ("Number of Threads", True),
    "glaurung": ("Threads", False),
    "fairy-stockfish": ("Threads", True),
}
_UCI_COMPLAINTS = ("unknown command", "illegal", "invalid", "error")


def real_uci(name: str, tmp_path: Path, **options: str) -> EngineConfig:
    """A Debian UCI engine in its own scratch directory, one thread, a small table."""
    workdir = tmp_path / name
    workdir.mkdir(exist_ok=True)
    threads, _ = ENGINES[name]
    settings = {"Hash": "16", threads: "1", **options}
    if name in ("stockfish", "fairy-stockfish"):
        settings.setdefault("Move Overhead", "60")  # Ethereal's MoveOverhead is 100 already
    return EngineConfig(name=name, argv=(require_binary(name),), working_dir=workdir,
                        protocol="uci", options=settings, quit_timeout=2.0,
                        terminate_timeout=1.0)


def _spec(**fields: object):
    return game_spec(TC, adjudication=AdjudicationRules(max_moves=MAX_MOVES), **fields)


def check_uci_game(record: GameRecord, real_sides: tuple[bool, ...]) -> None:
    """Complete, no fault, and no engine complained about a line we sent."""
    check_complete(record, real_sides)
    for white in real_sides:
        said = [line.split(" < ", 1)[1].lower() for line in record.transcripts[0 if white else 1]
                if " < " in line]
        complaints = [line for line in said if not line.startswith(("info ", "bestmove"))
                      and any(word in line for word in _UCI_COMPLAINTS)]
        assert complaints == [], complaints
        gos = [line for line in sent_lines(record, white) if line.startswith("go ")]
        assert gos and all("wtime" in line and "btime" in line for line in gos)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name", list(ENGINES))
def test_games_against_the_bundled_engine_over_cecp_and_uci(name, tmp_path):
    real = real_uci(name, tmp_path)
    for real_white, bot in ((True, bundled("bundled-cecp", "--level", "2", "--seed", "1")),
                            (False, bundled_uci("bundled-uci", "--level", "2", "--seed", "1"))):
        white, black = (real, bot) if real_white else (bot, real)
        record = run_game(white, black, _spec()).record
        check_uci_game(record, (real_white,))
        own = [m for i, m in enumerate(record.moves) if (i % 2 == 0) == real_white]
        assert own and all(m.depth is not None for m in own)
        assert any(m.score_cp is not None or m.mate is not None for m in own)


_PAIRS = [("stockfish", "ethereal-chess"), ("toga2", "glaurung"), ("fairy-stockfish", "toga2")]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("white_name,black_name",
                         [pytest.param(w, b, id=f"{w}-{b}") for w, b in _PAIRS])
def test_uci_engine_against_uci_engine(white_name, black_name, tmp_path):
    record = run_game(real_uci(white_name, tmp_path), real_uci(black_name, tmp_path),
                     _spec()).record
    check_uci_game(record, (True, False))


async def _footprint(config: EngineConfig) -> tuple[int, int, list[str]]:
    """Threads while searching and resident MiB after it, for an engine started with `config`;
    and the lines sent at start-up."""
    engine = UciEngine(config)
    try:
        await engine.start()
        sent = [e.text for e in engine.transcript if e.direction == ">"]
        await engine.new_game(GameSetup(TimeControl.parse("st=0.4"), Side.WHITE))
        search = asyncio.create_task(engine.play([], ClockState(), timeout=5))
        await asyncio.sleep(0.2)
        pid = engine.pid or 0
        threads = len(os.listdir(f"/proc/{pid}/task"))
        reply = await search
        assert reply.move is not None
        with open(f"/proc/{pid}/status") as status:
            rss = next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))
        return threads, rss // 1024, sent
    finally:
        await engine.quit()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", list(ENGINES))
def test_hash_and_threads_are_set_and_take_effect(name, tmp_path):
    threads_option, threads_visible = ENGINES[name]
    small = asyncio.run(_footprint(real_uci(name, tmp_path, Hash="16", **{threads_option: "1"})))
    large = asyncio.run(_footprint(real_uci(name, tmp_path, Hash="128", **{threads_option: "2"})))
    assert "setoption name Hash value 128" in large[2]
    assert f"setoption name {threads_option} value 2" in large[2]
    assert large[1] - small[1] >= 64, f"resident MiB {small[1]} -> {large[1]}"
    if threads_visible:
        assert large[0] == small[0] + 1, f"threads {small[0]} -> {large[0]}"


@pytest.mark.timeout(60)
def test_a_bad_option_value_for_a_real_engine_is_a_configuration_error(tmp_path):
    async def scenario() -> int | None:
        engine = UciEngine(real_uci("stockfish", tmp_path, Threads="0"))
        try:
            with pytest.raises(ValueError, match="Threads.*outside 1..1024"):
                await engine.start()
            return engine.pid
        finally:
            await engine.quit()

    children = our_children()
    pid = asyncio.run(scenario())
    assert leftover_processes((pid or 0,), before=children) == []


_960_START = "bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w KQkq - 0 1"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["uci", "cecp"])
def test_chess960_game_with_stockfish(protocol, tmp_path):
    bot = bundled_uci("bundled", "--level", "2", "--seed", "3") if protocol == "uci" else \
        bundled("bundled", "--level", "2", "--seed", "3")
    spec = _spec(start_fen=_960_START, variant=Variant.FISCHERANDOM)
    record = run_game(real_uci("stockfish", tmp_path), bot, spec).record
    check_uci_game(record, (True,))
    assert replay(record).chess960
    sent = sent_lines(record, True)
    assert "setoption name UCI_Chess960 value true" in sent
    assert any(line.startswith(f"position fen {_960_START}") for line in sent)


@pytest.mark.timeout(60)
def test_a_stopped_stockfish_is_found_out_by_isready_and_loses_by_stall(tmp_path):
    config = EngineConfig(name="stockfish", argv=(require_binary("stockfish"),),
                          working_dir=tmp_path, protocol="uci", ping_timeout=1.0,
                          quit_timeout=0.5, terminate_timeout=0.5)

    async def scenario() -> tuple[GameRecord, tuple[int, ...]]:
        engines = (UciEngine(config), UciEngine(bundled_uci("bundled", "--level", "1")))
        try:
            for engine in engines:
                await engine.start()
            await engines[0].ping()
            os.kill(engines[0].pid or 0, signal.SIGSTOP)
            record = await play_game(*engines, _spec())
        finally:
            for engine in engines:
                await engine.quit()
        return record, tuple(e.pid or 0 for e in engines)

    children = our_children()
    record, pgids = asyncio.run(scenario())
    assert leftover_processes(pgids, before=children) == []
    assert record.termination is GameTermination.STALL
    assert record.result == "0-1" and record.plies == 0
    assert "no readyok" in record.reason
