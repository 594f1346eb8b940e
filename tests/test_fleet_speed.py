"""A machine's speed and the clocks scaled to it (runner.fleet.speed): the bench read from
the bundled engine's real output, the factor and the minimum-speed gate, and the referee
taking a game played under the scaled clocks of its batch (and only those)."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from datetime import UTC, datetime

import pytest

from runner.clock import TimeControl
from runner.fleet.batches import Batch
from runner.fleet.speed import SpeedTerms, bench_speed, parse_bench, scale_control, scale_job
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameSpec
from runner.game.termination import GameTermination
from runner.protocol.engine import EngineConfig
from runner.referee import verify_game
from runner.rules import Result
from runner.types import MoveRecord


def test_the_bundled_engine_s_bench_gives_the_machine_s_speed() -> None:
    """Two benches at once (two slots) of the real bundled engine: a speed, and the node
    count every machine finds."""
    speed = asyncio.run(bench_speed(2, (sys.executable, "-m", "engine", "bench", "1")))
    assert speed.runs == 2 and speed.nps > 0 and speed.nodes > 0


def test_a_bench_that_fails_names_its_command() -> None:
    with pytest.raises(RuntimeError, match=r"bench 99: exit status 2"):
        asyncio.run(bench_speed(1, (sys.executable, "-m", "engine", "bench", "99")))
    with pytest.raises(ValueError, match="Nodes/second"):
        parse_bench("Nodes searched  : 10\n")


def test_the_factor_scales_clocks_but_not_depth_and_refuses_a_machine_far_too_slow() -> None:
    terms = SpeedTerms(reference_nps=100_000, max_factor=4.0)
    assert terms.factor(50_000) == 2.0 and terms.factor(200_000) == 0.5
    assert terms.refusal(30_000) is None
    why = terms.refusal(20_000)
    assert why is not None and "20000 nodes/s" in why and "too slow" in why
    assert terms.refusal(0) is not None  # a worker that did not bench
    assert SpeedTerms().factor(1) == 1.0 and SpeedTerms().refusal(1) is None
    control = TimeControl.parse("40/60+0.5 depth=3")
    scaled = scale_control(control, 2.0)
    assert scaled.periods[0].base == 120.0 and scaled.periods[0].increment == 1.0
    assert scaled.periods[0].moves == 40 and scaled.depth == 3
    assert scale_control(TimeControl.parse("st=0.2"), 1.5).move_time == pytest.approx(0.3)


def _job() -> GameJob:
    engine = EngineConfig(name="a", argv=("a",))
    spec = GameSpec(TimeControl.parse("10+0.1"), TimeControl.parse("10+0.1"), move_ceiling=5.0)
    return GameJob(0, engine, dataclasses.replace(engine, name="b"), spec)


def _mate(spec: GameSpec, seconds: float) -> GameRecord:
    """1. f3 e5 2. g4 Qh4#, each move taking `seconds`."""
    now = datetime.now(UTC)
    moves = tuple(MoveRecord(san, uci=uci, time=seconds) for san, uci in (
        ("f3", "f2f3"), ("e5", "e7e5"), ("g4", "g2g4"), ("Qh4#", "d8h4")))
    return GameRecord("a", "b", spec, moves, Result.BLACK_WINS, GameTermination.CHECKMATE,
                      "mate", now, now,
                      "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3")


def test_the_referee_takes_the_batch_s_scaled_clocks_only() -> None:
    """A batch scaled by 3: the game under its clocks (a move of 15 s: over the tournament's
    10 s, within the scaled 30 s) passes; the same game under the tournament's own clocks
    is not the game the batch asked for."""
    job = _job()
    batch = Batch(1, 1, {0: job}, 0.0, factor=3.0)
    given = batch.given(0)
    assert given is not None and given == scale_job(job, 3.0)
    assert given.spec.white_tc.periods[0].base == 30.0 and given.spec.move_ceiling == 15.0
    assert verify_game(given, _mate(given.spec, 15.0)).ok
    unscaled = verify_game(given, _mate(job.spec, 1.0))
    assert not unscaled.ok and "time control" in unscaled.reason
    assert not verify_game(job, _mate(job.spec, 15.0)).ok  # 15 s is past 10 s unscaled
    assert batch.left() == [job]  # what goes back to the line is the tournament's own job
