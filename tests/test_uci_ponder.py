"""UCI pondering (issue 43): ``go ponder`` on the expected reply, ``ponderhit`` on a hit, ``stop``
and a drained bestmove on a miss or at the game's end, and the clocks charged as cutechess-cli
does (a ponder hit's clock runs from the ``ponderhit``, a miss's from the real ``go``).

The dialogue is checked line by line against Debian's stockfish; whole games pit stockfish and
ethereal-chess against each other, pondering or not, with every move's time read back from the
lines exchanged and every clock from the previous one.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import chess
import pytest
from conftest import REPO, require_binary
from test_real_engines import check_complete

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.record import GameRecord
from runner.protocol.engine import (
    ClockState,
    EngineConfig,
    EngineStalled,
    EngineTerminated,
    GameSetup,
    Side,
)
from runner.protocol.uci import UciEngine
from runner.protocol.uci_parse import format_go
from tests.bundled_games import game_spec, run_game

TC = TimeControl.parse("10+0.1")
CLOCKS = ClockState(own=10.0, opponent=10.0)


def _config(name: str, tmp_path: Path, ponder: bool = True, **fields: object) -> EngineConfig:
    workdir = tmp_path / name
    workdir.mkdir(exist_ok=True)
    return EngineConfig(name=name, argv=(require_binary(name),), working_dir=workdir,
                        protocol="uci", options={"Hash": "16", "Threads": "1"}, ponder=ponder,
                        quit_timeout=2.0, terminate_timeout=1.0, **fields)  # type: ignore[arg-type]


def _sent(engine: UciEngine, since: int) -> list[str]:
    return [e.text for e in list(engine.transcript)[since:] if e.direction == ">"]


def _other_move(moves: list[str], avoid: str) -> str:
    board = chess.Board()
    for move in moves:
        board.push_uci(move)
    return next(m.uci() for m in board.legal_moves if m.uci() != avoid)


def test_go_ponder_carries_the_limits_of_the_real_search() -> None:
    clocks = ClockState(own=9.5, opponent=10.0, opponent_increment=0.1)
    assert format_go(TC, clocks, True, ponder=True) == \
        "go ponder wtime 9500 btime 10000 winc 100 binc 100"
    assert format_go(TimeControl.parse("depth=3"), ClockState(), False, ponder=True) == \
        "go ponder depth 3"
    assert format_go(TimeControl.parse("inf"), ClockState(), False, ponder=True) == \
        "go ponder movetime 86400000"


@pytest.mark.timeout(60)
def test_dialogue_of_a_hit_a_miss_and_a_game_end(tmp_path: Path) -> None:
    async def body() -> None:
        engine = UciEngine(_config("stockfish", tmp_path))
        await engine.start()
        try:
            mark = len(engine.transcript)
            await engine.new_game(GameSetup(time_control=TC, side=Side.WHITE))
            sent = _sent(engine, mark)
            assert sent[sent.index("ucinewgame") + 1] == "setoption name Ponder value true"
            first = await engine.play([], CLOCKS, timeout=10)
            assert first.move and first.ponder_move and first.ponder_hit is None
            moves = [first.move]
            mark = len(engine.transcript)
            await engine.ponder(moves, ClockState(own=9.9, opponent=10.0))
            assert _sent(engine, mark) == [f"position startpos moves {first.move} {first.ponder_move}",
                                           "go ponder wtime 9900 btime 10000 winc 100 binc 100"]
            await asyncio.sleep(0.2)  # it searches on the opponent's time
            moves.append(first.ponder_move)
            mark = len(engine.transcript)
            hit = await engine.play(moves, ClockState(own=9.9, opponent=9.7), timeout=10)
            assert _sent(engine, mark) == ["ponderhit"]
            assert hit.ponder_hit is True and hit.move and hit.ponder_move

            moves.append(hit.move)
            await engine.ponder(moves, ClockState(own=9.8, opponent=9.7))
            moves.append(_other_move(moves, hit.ponder_move))
            mark = len(engine.transcript)
            miss = await engine.play(moves, ClockState(own=9.8, opponent=9.6), timeout=10)
            assert _sent(engine, mark) == ["stop", "position startpos moves " + " ".join(moves),
                                           "go wtime 9800 btime 9600 winc 100 binc 100"]
            got = [e.text for e in list(engine.transcript)[mark:] if e.direction == "<"
                   and e.text.startswith("bestmove")]
            assert len(got) == 2  # the ponder search's, dropped, then the real one
            assert miss.ponder_hit is False and got[-1].split()[1] == miss.move

            moves.append(miss.move)
            await engine.ponder(moves, ClockState(own=9.7, opponent=9.6))
            mark = len(engine.transcript)
            await engine.end_game("1/2-1/2")
            assert _sent(engine, mark) == ["stop"]
            assert any(e.text.startswith("bestmove") for e in list(engine.transcript)[mark:]
                       if e.direction == "<")  # drained before end_game returned
            await engine.new_game(GameSetup(time_control=TC, side=Side.BLACK))
            again = await engine.play(["e2e4"], CLOCKS, timeout=10)
            assert again.ponder_hit is None and again.move
        finally:
            await engine.quit()

    asyncio.run(body())


@pytest.mark.timeout(60)
def test_without_ponder_the_option_is_sent_off_and_nothing_ponders(tmp_path: Path) -> None:
    async def body() -> None:
        engine = UciEngine(_config("ethereal-chess", tmp_path, ponder=False))
        await engine.start()
        try:
            await engine.new_game(GameSetup(time_control=TC, side=Side.WHITE))
            reply = await engine.play([], CLOCKS, timeout=10)
            assert reply.ponder_move is None and reply.ponder_hit is None
            assert "setoption name Ponder value false" in _sent(engine, 0)
        finally:
            await engine.quit()

    asyncio.run(body())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("fault", ["crash", "hang"])
def test_an_engine_that_dies_or_hangs_while_pondering(tmp_path: Path, fault: str) -> None:
    async def body() -> None:
        engine = UciEngine(_config("stockfish", tmp_path, ping_timeout=0.5))
        await engine.start()
        try:
            await engine.new_game(GameSetup(time_control=TC, side=Side.WHITE))
            first = await engine.play([], CLOCKS, timeout=10)
            assert first.ponder_move
            await engine.ponder([first.move], CLOCKS)
            assert engine.pid is not None
            os.killpg(engine.pid, signal.SIGKILL if fault == "crash" else signal.SIGSTOP)
            if fault == "crash":
                await asyncio.sleep(0.3)
            other = _other_move([first.move], first.ponder_move)
            with pytest.raises(EngineTerminated if fault == "crash" else EngineStalled) as info:
                await engine.play([first.move, other], CLOCKS, timeout=10)
            if fault == "hang":
                assert "no bestmove after stop while pondering" in str(info.value)
            await engine.end_game("*")
        finally:
            await engine.kill()

    asyncio.run(body())


def _times(record: GameRecord, white: bool) -> list[tuple[str, float]]:
    """Each search's charged span read from the lines: from the ``go`` or ``ponderhit`` that
    started the clock to the ``bestmove`` that answered it (a dropped ponder search's bestmove,
    after ``stop``, starts nothing)."""
    spans: list[tuple[str, float]] = []
    began: tuple[str, float] | None = None
    for line in record.transcripts[0 if white else 1]:
        stamp, _, rest = line.strip().partition(" ")
        if rest.startswith("> go ponder") or rest.startswith("> stop"):
            began = None
        elif rest.startswith("> go") or rest.startswith("> ponderhit"):
            began = (rest[2:].split()[0], float(stamp))
        elif rest.startswith("< bestmove") and began is not None:
            spans.append((began[0], float(stamp) - began[1]))
            began = None
    return spans


@pytest.mark.timeout(120)
# CI time: the fast run keeps both engines pondering; one pondering engine is slow.
@pytest.mark.parametrize("black_ponders", [True, pytest.param(False, marks=pytest.mark.slow)],
                         ids=["both-ponder", "one-ponders"])
def test_pondering_games_charge_the_clocks_from_ponderhit(tmp_path: Path,
                                                          black_ponders: bool) -> None:
    white = _config("stockfish", tmp_path)
    black = _config("ethereal-chess", tmp_path, ponder=black_ponders)
    # A second past the clock: two pondering engines share the loaded machine's cores (at
    # 1+0.01 Ethereal lost on time once at load 12).
    spec = game_spec("4+0.04 timemargin=1000", adjudication=AdjudicationRules(max_moves=8))
    # A pondering side needs one hit for its ponderhit charge to be checked: whether the
    # engine guesses its opponent's reply is its search's business, and on a loaded machine
    # a shallow search once guessed none in eight moves. Another game then, up to three.
    for _ in range(3):
        record = run_game(white, black, spec).record
        check_complete(record, (True, False))
        if all(any(m.ponder_hit for m in record.moves[0 if side else 1::2])
               for side in (True, False) if side or black_ponders):
            break
    for side in (True, False):
        own = record.moves[0 if side else 1::2]
        spans = _times(record, side)
        assert len(spans) == len(own)
        ponders = side or black_ponders
        hits = [m.ponder_hit for m in own]
        if ponders:
            assert all(h is not None for h in hits[1:]), hits  # each pondered on after its first
            assert any(hits), hits
            assert [kind for kind, _ in spans] == \
                ["ponderhit" if h else "go" for h in hits]
        else:
            assert hits == [None] * len(own)
            assert "ponderhit" not in "\n".join(record.transcripts[0 if side else 1])
        left = spec.white_tc.periods[0].base
        for move, (_, span) in zip(own, spans, strict=True):
            assert move.time == pytest.approx(span, abs=0.05)
            left = left - move.time + 0.04
            assert move.time_left == pytest.approx(left, abs=1e-6)


@pytest.mark.timeout(300)
@pytest.mark.slow  # CI time: the games tests above check every move; this adds the report
def test_ponder_hits_are_stored_per_move_and_reported_per_engine(tmp_path: Path) -> None:
    stockfish, ethereal = require_binary("stockfish"), require_binary("ethereal-chess")
    (tmp_path / "t.toml").write_text(
        'name = "p"\nformat = "match"\nrounds = 1\ngames = 2\n'
        'tc = "2+0.02 timemargin=500"\nconcurrency = 1\n'
        f'[[engines]]\nname = "sf"\ncommand = ["{stockfish}"]\nprotocol = "uci"\nponder = true\n'
        f'[[engines]]\nname = "eth"\ncommand = ["{ethereal}"]\nprotocol = "uci"\n'
        '[adjudication]\nmaxmoves = 10\n')
    db = tmp_path / "r.db"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    run = subprocess.run([sys.executable, "-m", "runner", "run", "t.toml", "--db", f"sqlite:///{db}",
                          "--quiet"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=240)
    assert run.returncode == 0, run.stderr
    counted: dict[str, list[int]] = {"sf": [0, 0], "eth": [0, 0]}
    with sqlite3.connect(db) as conn:
        names = dict(conn.execute("select id, name from engines"))
        for game_id, white, black in conn.execute(
                "select id, white_id, black_id from games where status = 'done'").fetchall():
            for ply, hit in conn.execute("select ply, ponder_hit from moves where game_id = ?",
                                         (game_id,)):
                mover = names[white if ply % 2 == 1 else black]
                if hit is not None:
                    counted[mover][0] += 1
                    counted[mover][1] += bool(hit)
    assert counted["eth"] == [0, 0] and counted["sf"][0] > 0, counted
    report = subprocess.run([sys.executable, "-m", "runner", "report", "--format", "json",
                             "--db", f"sqlite:///{db}"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert report.returncode == 0, report.stderr
    search = {s["engine"]: s for s in json.loads(report.stdout)["search"]}
    assert search["sf"]["pondered"] == counted["sf"][0]
    assert search["sf"]["ponder_hit_rate"] == counted["sf"][1] / counted["sf"][0]
    assert search["eth"]["pondered"] == 0 and search["eth"]["ponder_hit_rate"] is None
    text = subprocess.run([sys.executable, "-m", "runner", "report", "--db", f"sqlite:///{db}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert f"of {counted['sf'][0]}" in text.stdout and "Ponder hits" in text.stdout, text.stdout


@pytest.mark.timeout(60)
def test_a_hit_at_once_after_go_ponder_still_ends_with_a_move(tmp_path: Path) -> None:
    """Ethereal never ends a search whose ponderhit came before it began: the runner waits
    (off the clock) for the ponder search's first report before sending it."""
    async def body() -> None:
        engine = UciEngine(_config("ethereal-chess", tmp_path))
        await engine.start()
        try:
            for _ in range(3):
                await engine.new_game(GameSetup(time_control=TC, side=Side.WHITE))
                first = await engine.play([], CLOCKS, timeout=10)
                assert first.ponder_move
                await engine.ponder([first.move], CLOCKS)
                hit = await engine.play([first.move, first.ponder_move], CLOCKS, timeout=5)
                assert hit.ponder_hit is True and hit.move
                await engine.end_game("*")
        finally:
            await engine.quit()

    asyncio.run(body())


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_runner_cutechess_ponders_uci_engines(tmp_path: Path) -> None:
    """The drop-in's ``ponder`` on UCI engines (refused before issue 43) reaches them."""
    stockfish, ethereal = require_binary("stockfish"), require_binary("ethereal-chess")
    done = subprocess.run(
        [sys.executable, "-c", "from runner.dropin.main import cutechess; cutechess()",
         "-engine", f"cmd={stockfish}", "name=sf",
         "-engine", f"cmd={ethereal}", "name=eth", "-each", "proto=uci", "ponder",
         "tc=4+0.04", "timemargin=1000", "option.Threads=1", "-games", "2", "-maxmoves", "8",
         "-pgnout", str(tmp_path / "out.pgn"), "-debug", "all"],
        cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
        text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout + done.stderr
    for name in ("sf", "eth"):
        assert f">{name}(" in said
        assert any(f">{name}(" in line and "setoption name Ponder value true" in line
                   for line in said.splitlines())
    assert "go ponder" in said and "ponderhit" in said
    assert "loses on time" not in said and "Finished match" in said
