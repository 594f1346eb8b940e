"""The job queue under both schedulers: order, retries first, the replay budget, stops."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from runner.clock import TimeControl
from runner.game.job import GameJob
from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig
from runner.tournament.jobs import MAX_REPLAYS, JobQueue

CONTROL = TimeControl.parse("1+0.01")


def _job(index: int, white: str = "a", black: str = "b") -> GameJob:
    return GameJob(index, EngineConfig(white, ("true",)), EngineConfig(black, ("true",)),
                   GameSpec(CONTROL, CONTROL))


def _drain(queue: JobQueue) -> list[int]:
    taken = []
    while (job := queue.next()) is not None:
        taken.append(job.index)
    return taken


def test_jobs_come_in_order_read_lazily_and_retries_go_first() -> None:
    read: list[int] = []

    def jobs() -> Iterator[GameJob]:
        for index in range(4):
            read.append(index)
            yield _job(index)

    queue = JobQueue()
    queue.submit(jobs())
    queue.submit([_job(9)])
    first = queue.next()
    assert first is not None and first.index == 0 and read == [0]  # nothing read ahead
    second = queue.next()
    assert second is not None
    assert queue.replay(first, "runner froze") is None  # replayed after the other retries
    queue.retry(second)  # an engine did not start: straight to the head of the line
    assert _drain(queue) == [1, 0, 2, 3, 9]


def test_the_replay_budget_stops_the_queue_with_the_reason() -> None:
    queue = JobQueue()
    queue.submit([_job(0), _job(1)])
    job = queue.next()
    assert job is not None
    for _ in range(MAX_REPLAYS - 1):
        assert queue.replay(job, "worker lost") is None
        again = queue.next()
        assert again is not None and again.index == 0
    failure = queue.replay(job, "worker lost")
    assert failure == (f"game 1 failed on the runner's side {MAX_REPLAYS} times "
                       "(last: worker lost); stopping")
    assert queue.stopped and queue.next() is None


def test_failed_starts_count_in_a_row_per_engine_until_a_game_starts() -> None:
    queue = JobQueue()
    job = _job(0)
    assert [queue.engine_failed(job, "b") for _ in range(3)] == [1, 2, 3]
    assert queue.engine_failed(job, "a") == 1
    queue.started(job)
    assert queue.engine_failed(job, "b") == 1
    assert _drain(queue) == [0] * 5  # each failure put the job back first


@pytest.mark.parametrize("hard", [False, True])
def test_a_stop_hands_out_nothing_and_says_once_that_it_turned_hard(hard: bool) -> None:
    queue = JobQueue()
    queue.submit([_job(0)])
    queue.retry(_job(5))
    assert queue.stop(hard) is hard
    assert queue.next() is None and queue.stopped and queue.hard is hard
    assert queue.stop(hard=True) is not hard  # a later hard stop after a soft one: first hard
    assert queue.stop(hard=True) is False and queue.hard
