"""The local scheduler on its own: engines reused or restarted per slot, replays after
runner-side failures, engines that never start, games that cannot be set up, soft and hard
stops, and a slot that waits for its record to be handled before it takes the next job.

The games are scripted (``play_game`` replaced) and the engines are stand-ins that count
their starts, so every case is exact and takes milliseconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from runner.clock import TimeControl
from runner.game import slot as slot_module
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.game.slot import MAX_START_FAILURES
from runner.protocol.engine import EngineConfig, EngineTerminated
from runner.tournament.events import Notice
from runner.tournament.jobs import MAX_REPLAYS
from runner.tournament.scheduler import (
    JobFinished,
    JobStarted,
    LocalScheduler,
    SchedulerEvent,
    SchedulerFailure,
)

T0 = datetime(2026, 11, 23, tzinfo=UTC)
CONTROL = TimeControl.parse("1+0.01")


class FakeEngine:
    """An engine stand-in: counts starts and quits, answers pings while alive."""

    def __init__(self, config: EngineConfig, log: dict[str, list[str]], fail_start: bool) -> None:
        self.name = config.name
        self.transcript: list[Any] = []
        self.alive = False
        self._log = log
        self._fail_start = fail_start

    async def start(self) -> None:
        self._log.setdefault(self.name, []).append("start")
        if self._fail_start:
            raise EngineTerminated(1, "cannot start")
        self.alive = True

    async def ping(self) -> float:
        if not self.alive:
            raise EngineTerminated(1, "gone")
        return 0.0

    async def quit(self) -> int:
        self._log.setdefault(self.name, []).append("quit")
        self.alive = False
        return 0

    async def kill(self) -> int:
        self.alive = False
        return -9


def _job(index: int, white: str = "a", black: str = "b") -> GameJob:
    return GameJob(index, EngineConfig(white, ("true",)), EngineConfig(black, ("true",)),
                   GameSpec(CONTROL, CONTROL, tags={"Round": str(index)}))


def _record(white: str, black: str, termination: GameTermination = GameTermination.CHECKMATE,
            *, replay: bool = False) -> GameRecord:
    result = "*" if replay else "1-0"
    return GameRecord(white=white, black=black, spec=GameSpec(CONTROL, CONTROL), moves=(),
                      result=result, termination=termination, reason="scripted",
                      started_at=T0, ended_at=T0, final_fen="8/8/8/8/8/8/8/8 w - - 0 1",
                      replay=replay)


Script = Callable[[GameJob, int], GameRecord]
"""How the game of a job ends, given how many times that job was played before."""


def _scheduler(monkeypatch: pytest.MonkeyPatch, script: Script, *, concurrency: int = 1,
               fresh: frozenset[str] = frozenset(), fail_start: frozenset[str] = frozenset(),
               ) -> tuple[LocalScheduler, dict[str, list[str]], list[int]]:
    """A scheduler whose games follow `script`; its engine log and the jobs played in order."""
    log: dict[str, list[str]] = {}
    played: list[int] = []

    async def fake_play_game(white: FakeEngine, black: FakeEngine, spec: GameSpec,
                             **_: object) -> GameRecord:
        index = int(spec.tags["Round"])
        before = played.count(index)
        played.append(index)
        await asyncio.sleep(0)
        return script(_job(index, white.name, black.name), before)

    monkeypatch.setattr(slot_module, "play_game", fake_play_game)
    scheduler = LocalScheduler(
        concurrency, fresh_engines=fresh,
        engine_factory=lambda config: FakeEngine(config, log, config.name in fail_start))
    return scheduler, log, played


def _collect(scheduler: LocalScheduler, jobs: Iterator[GameJob] | list[GameJob],
             on_event: Callable[[SchedulerEvent], None] = lambda _event: None,
             ) -> list[SchedulerEvent]:
    async def go() -> list[SchedulerEvent]:
        scheduler.submit(jobs)
        seen = []
        async for event in scheduler.events():
            seen.append(event)
            on_event(event)
        return seen

    return asyncio.run(go())


def _finished(events: list[SchedulerEvent]) -> list[JobFinished]:
    return [e for e in events if isinstance(e, JobFinished)]


def test_every_job_is_played_once_and_a_slot_keeps_its_engines(monkeypatch):
    scheduler, log, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines))
    events = _collect(scheduler, [_job(i) for i in range(4)])
    assert played == [0, 1, 2, 3]
    assert [e.job.index for e in _finished(events)] == [0, 1, 2, 3]
    starts = [e.job.index for e in events if isinstance(e, JobStarted)]
    assert starts == [0, 1, 2, 3]
    for index in range(4):  # each game is reported started before it is reported finished
        assert events.index(next(e for e in events if isinstance(e, JobStarted)
                                 and e.job.index == index)) < events.index(
            next(e for e in _finished(events) if e.job.index == index))
    assert log == {"a": ["start", "quit"], "b": ["start", "quit"]}  # reused, quit at the end


def test_engines_restart_after_a_stall_and_for_every_game_when_asked(monkeypatch):
    def script(job: GameJob, _n: int) -> GameRecord:
        return _record(*job.engines, GameTermination.STALL if job.index == 1 else
                       GameTermination.CHECKMATE)

    scheduler, log, _ = _scheduler(monkeypatch, script)
    _collect(scheduler, [_job(i) for i in range(4)])
    assert log["a"].count("start") == 2  # games 0-1, then afresh after game 1's stall
    scheduler, log, _ = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines),
                                   fresh=frozenset({"b"}))
    _collect(scheduler, [_job(i) for i in range(3)])
    assert log["b"].count("start") == 3 and log["a"].count("start") == 3  # the slot restarts


def test_a_runner_side_failure_is_replayed_then_gives_up(monkeypatch):
    def once(job: GameJob, before: int) -> GameRecord:
        return _record(*job.engines, GameTermination.ERROR, replay=job.index == 0 and before == 0)

    scheduler, _, played = _scheduler(monkeypatch, once)
    events = _collect(scheduler, [_job(0), _job(1)])
    assert played == [0, 0, 1]  # replayed at once: a replay goes before the rest
    assert [e.record.replay for e in _finished(events)] == [True, False, False]
    assert not [e for e in events if isinstance(e, SchedulerFailure)]

    scheduler, _, played = _scheduler(
        monkeypatch, lambda job, _n: _record(*job.engines, GameTermination.ERROR, replay=True))
    events = _collect(scheduler, [_job(0), _job(1)])
    assert played == [0] * MAX_REPLAYS
    [failure] = [e for e in events if isinstance(e, SchedulerFailure)]
    assert f"failed on the runner's side {MAX_REPLAYS} times" in failure.text


def test_an_engine_that_never_starts_stops_the_run(monkeypatch):
    scheduler, log, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines),
                                        fail_start=frozenset({"b"}))
    events = _collect(scheduler, [_job(i) for i in range(5)])
    assert played == []
    assert log["b"].count("start") == MAX_START_FAILURES
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert len(notices) == MAX_START_FAILURES and all("failed to start" in n for n in notices)
    [failure] = [e for e in events if isinstance(e, SchedulerFailure)]
    assert f"engine b failed to start {MAX_START_FAILURES} times" in failure.text


def test_a_game_that_cannot_be_set_up_stops_the_run(monkeypatch):
    def refuse(job: GameJob, _n: int) -> GameRecord:
        raise ValueError("engine b cannot play to a fixed depth")

    scheduler, log, played = _scheduler(monkeypatch, refuse, concurrency=1)
    events = _collect(scheduler, [_job(i) for i in range(3)])
    assert played == [0]
    assert [type(e) for e in events] == [JobStarted, SchedulerFailure]
    assert "game 1 cannot be played: engine b cannot play" in events[-1].text  # type: ignore[union-attr]
    assert events[-1].refused  # type: ignore[union-attr]  # running it again fails alike
    assert log["a"][-1] == "quit"


def test_a_soft_stop_while_a_record_is_handled_starts_nothing_new(monkeypatch):
    scheduler, _, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines),
                                      concurrency=2)

    def stop_on_first_record(event: SchedulerEvent) -> None:
        if isinstance(event, JobFinished):
            scheduler.stop()

    events = _collect(scheduler, [_job(i) for i in range(10)], stop_on_first_record)
    # Both slots had a game running when the first record came; neither starts another.
    assert sorted(played) == [0, 1]
    assert len(_finished(events)) == 2


def test_a_hard_stop_aborts_running_games_and_quits_the_engines(monkeypatch):
    log: dict[str, list[str]] = {}
    started = 0

    async def endless(white: FakeEngine, black: FakeEngine, spec: GameSpec,
                      **_: object) -> GameRecord:
        nonlocal started
        started += 1
        await asyncio.sleep(3600)
        raise AssertionError("not reached")

    monkeypatch.setattr(slot_module, "play_game", endless)
    scheduler = LocalScheduler(2, engine_factory=lambda config: FakeEngine(config, log, False))

    def abort(event: SchedulerEvent) -> None:
        if isinstance(event, JobStarted) and event.job.index == 1:
            scheduler.stop(hard=True)

    events = _collect(scheduler, [_job(0), _job(1, "c", "d"), _job(2)], abort)
    assert started == 2 and not _finished(events)
    assert all(entries[-1] == "quit" for entries in log.values()) and len(log) == 4


def test_an_error_in_a_slot_stops_the_run_with_its_reason(monkeypatch):
    # A slot never dies silently: what it raises (here while building its next job) is
    # reported as a failure that stops the run, not re-raised as a traceback at the end.
    scheduler, _, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines))

    def jobs() -> Iterator[GameJob]:
        yield _job(0)
        raise OSError("book vanished")

    events = _collect(scheduler, jobs())
    failures = [e.text for e in events if isinstance(e, SchedulerFailure)]
    assert len(failures) == 1 and "OSError: book vanished" in failures[0]
    assert played == [0]


def test_leaving_the_events_early_stops_hard_and_quits_the_engines(monkeypatch):
    scheduler, log, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines))

    async def go() -> None:
        scheduler.submit([_job(i) for i in range(5)])
        events = scheduler.events()
        try:
            async for event in events:
                if isinstance(event, JobFinished):
                    raise RuntimeError("the store failed")
        finally:
            await events.aclose()

    with pytest.raises(RuntimeError, match="the store failed"):
        asyncio.run(go())
    assert played == [0]
    assert log["a"][-1] == "quit" and log["b"][-1] == "quit"



@pytest.mark.timeout(30)
def test_a_huge_concurrency_opens_no_more_slots_than_games(monkeypatch):
    """Issue 21 item 16: --concurrency 1000000 for a 2-game schedule took 93 s and 3.1 GB
    (a task per slot); slots now open one by one, each once the one before has a game."""
    import tracemalloc

    scheduler, log, played = _scheduler(monkeypatch, lambda job, _n: _record(*job.engines),
                                        concurrency=1_000_000)
    tracemalloc.start()
    events = _collect(scheduler, [_job(0), _job(1)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert sorted(played) == [0, 1]
    assert sorted(e.slot for e in events if isinstance(e, JobStarted)) == [0, 1]
    assert len(scheduler._slots) <= 3  # two with a game, perhaps one that found none
    assert peak < 5_000_000, peak
    assert log["a"].count("start") == 2  # one engine pair per slot


def test_a_resize_closes_the_slots_over_it_and_opens_slots_under_it(monkeypatch):
    """A service re-divides its games between running branch tests: 4 games at once, then
    1 (the slots over it leave after their game), then 3 (new slots open at once)."""
    phase = ["4"]
    in_flight = 0
    starts: list[tuple[str, int]] = []

    async def fake_play_game(white: FakeEngine, black: FakeEngine, spec: GameSpec,
                             **_: object) -> GameRecord:
        nonlocal in_flight
        in_flight += 1
        starts.append((phase[0], in_flight))
        await asyncio.sleep(0.005)
        in_flight -= 1
        return _record(white.name, black.name)

    monkeypatch.setattr(slot_module, "play_game", fake_play_game)
    log: dict[str, list[str]] = {}
    scheduler = LocalScheduler(4, engine_factory=lambda config: FakeEngine(config, log, False))
    finished = 0

    def on_event(event: SchedulerEvent) -> None:
        nonlocal finished
        if isinstance(event, JobFinished):
            finished += 1
            if finished == 12:
                phase[0] = "1"
                scheduler.resize(1)
            elif finished == 30:
                phase[0] = "3"
                scheduler.resize(3)

    events = _collect(scheduler, [_job(i) for i in range(60)], on_event)
    assert len(_finished(events)) == 60
    by_phase = {p: [n for q, n in starts if q == p] for p in "413"}
    assert max(by_phase["4"]) == 4
    # The games begun before the resize end; from the first game alone, one at a time.
    alone = by_phase["1"][by_phase["1"].index(1):]
    assert len(alone) > 5 and set(alone) == {1}
    assert max(by_phase["3"]) == 3
