"""The move deadline's one long-lived timer: it fails a request only once that request's own
deadline has passed, whatever deadlines came before it."""

from __future__ import annotations

import asyncio
import time

import pytest

from runner.protocol.engine import EngineStalled
from runner.protocol.waiting import Watchdog


def test_an_answer_in_time_is_returned_and_a_late_one_stalls() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        dog = Watchdog()
        answered: asyncio.Future[str] = loop.create_future()
        loop.call_later(0.01, answered.set_result, "e2e4")
        assert await dog.wait(answered, 1.0, lambda: "no move") == "e2e4"
        # The timer armed for 1 s is still there; a later, shorter deadline re-arms it.
        silent: asyncio.Future[str] = loop.create_future()
        began = time.monotonic()
        with pytest.raises(EngineStalled, match="engine x: no move"):
            await dog.wait(silent, 0.05, lambda: "engine x: no move")
        assert time.monotonic() - began > 0.04
        dog.cancel()

    asyncio.run(scenario())


def test_a_timer_left_by_an_earlier_request_does_not_cut_a_later_one_short() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        dog = Watchdog()
        quick: asyncio.Future[int] = loop.create_future()
        quick.set_result(1)
        assert await dog.wait(quick, 0.05, lambda: "first") == 1  # armed at +0.05 s
        await asyncio.sleep(0.03)
        # This request's deadline is 0.2 s away: the timer firing at +0.05 s re-arms.
        slow: asyncio.Future[int] = loop.create_future()
        loop.call_later(0.1, slow.set_result, 2)
        assert await dog.wait(slow, 0.2, lambda: "second") == 2
        # Nothing is failed after the request is over, and the dog can be dropped.
        await asyncio.sleep(0.15)
        dog.cancel()

    asyncio.run(scenario())


def test_the_stall_names_the_time_waited() -> None:
    async def scenario() -> EngineStalled:
        dog = Watchdog()
        never: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        try:
            await dog.wait(never, 0.02, lambda: "no bestmove")
        except EngineStalled as exc:
            return exc
        raise AssertionError("no stall")

    stalled = asyncio.run(scenario())
    assert "no bestmove" in str(stalled)
    assert stalled.waited > 0.015
