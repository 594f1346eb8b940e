"""Shared reads: one load for many callers, reused until dropped or stale."""

from __future__ import annotations

import asyncio

import pytest

from runner.service.cache import SharedReads


def test_many_callers_share_one_load_until_it_is_dropped() -> None:
    loads = []

    async def load() -> int:
        loads.append(1)
        await asyncio.sleep(0.01)
        return len(loads)

    async def scenario() -> tuple[list[int], int, int]:
        reads = SharedReads()
        first = await asyncio.gather(*(reads.get("k", load) for _ in range(50)))
        again = await reads.get("k", load)
        reads.drop("k")
        after = await reads.get("k", load)
        return first, again, after

    first, again, after = asyncio.run(scenario())
    assert first == [1] * 50 and again == 1 and after == 2 and len(loads) == 2


def test_a_value_older_than_max_age_is_loaded_again() -> None:
    count = 0

    async def load() -> int:
        nonlocal count
        count += 1
        return count

    async def scenario() -> tuple[int, int]:
        reads = SharedReads()
        await reads.get("k", load, 0.01)
        kept = await reads.get("k", load, 0.01)
        await asyncio.sleep(0.02)
        return kept, await reads.get("k", load, 0.01)

    assert asyncio.run(scenario()) == (1, 2)


def test_a_drop_during_a_load_makes_its_value_stale() -> None:
    count = 0

    async def load() -> int:
        nonlocal count
        count += 1
        await asyncio.sleep(0.01)
        return count

    async def scenario() -> tuple[int, int]:
        reads = SharedReads()
        task = asyncio.create_task(reads.get("k", load))
        await asyncio.sleep(0)
        reads.drop("k")  # a game finished while the report was being read
        return await task, await reads.get("k", load)

    assert asyncio.run(scenario()) == (1, 2)


def test_a_failed_load_reaches_every_waiter_and_is_not_kept() -> None:
    calls = 0

    async def load() -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.01)
        if calls == 1:
            raise OSError("disk I/O error")
        return 7

    async def scenario() -> list[object]:
        reads = SharedReads()
        results = await asyncio.gather(*(reads.get("k", load) for _ in range(3)),
                                       return_exceptions=True)
        return [*results, await reads.get("k", load)]

    results = asyncio.run(scenario())
    assert all(isinstance(r, OSError) for r in results[:3]) and results[3] == 7


@pytest.mark.parametrize("key", ["progress", ("report", 1)])
def test_keys_are_independent(key: object) -> None:
    async def scenario() -> tuple[int, int]:
        reads = SharedReads()
        a = await reads.get(key, _const(1))
        reads.drop("other")
        return a, await reads.get(key, _const(2))

    assert asyncio.run(scenario()) == (1, 1)


def _const(value: int):  # type: ignore[no-untyped-def]
    async def load() -> int:
        return value
    return load


def test_a_waiter_loads_again_when_the_first_caller_is_cancelled() -> None:
    """The caller doing the load is cancelled (the standings task a finishing tournament
    cancels): a caller waiting on the same load gets a value, not the other's CancelledError
    (the service's last standings and tournament_finished were lost that way)."""
    calls = 0

    async def load() -> int:
        nonlocal calls
        calls += 1
        await asyncio.sleep(0.05)
        return calls

    async def scenario() -> int:
        reads = SharedReads()
        first = asyncio.create_task(reads.get("k", load))
        await asyncio.sleep(0.01)
        waiter = asyncio.create_task(reads.get("k", load))
        await asyncio.sleep(0.01)
        first.cancel()
        return await waiter

    assert asyncio.run(scenario()) == 2


def test_a_cancelled_waiter_stays_cancelled() -> None:
    async def load() -> int:
        await asyncio.sleep(0.05)
        return 1

    async def scenario() -> bool:
        reads = SharedReads()
        first = asyncio.create_task(reads.get("k", load))
        await asyncio.sleep(0.01)
        waiter = asyncio.create_task(reads.get("k", load))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        return await first == 1

    assert asyncio.run(scenario())
