"""The service's event log: catch-up by Last-Event-ID, the snapshot fallbacks, slow readers."""

from __future__ import annotations

import asyncio

from runner.service import hub
from runner.service.hub import EPOCH, EventLog, SlowReader


async def _collect(log: EventLog, last_id: str | None, count: int) -> list[tuple[str, dict]]:
    found = []

    async def snapshot() -> dict:
        return {"snapshot": True}

    async def finished() -> list[dict]:
        return [{"index": 0}, {"index": 1}]

    async for event in log.follow(last_id, snapshot, finished):
        found.append((event.kind, event.data, event.id))
        if len(found) >= count:
            break
    return found


def test_a_new_reader_gets_a_snapshot_then_live_events() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        log.publish("game_started", {"index": 0})
        reader = asyncio.create_task(_collect(log, None, 3))
        await asyncio.sleep(0.01)
        log.publish("move", {"ply": 1})
        log.publish("game_finished", {"index": 0})
        return await reader

    events = asyncio.run(scenario())
    assert [kind for kind, _, _ in events] == ["snapshot", "move", "game_finished"]
    assert events[0][2] == f"{EPOCH}-1" and events[2][2] == f"{EPOCH}-3"


def test_a_reconnecting_reader_gets_exactly_what_it_missed() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        for index in range(5):
            log.publish("game_finished", {"index": index})
            log.publish("move", {"ply": index})
        return await _collect(log, f"{EPOCH}-4", 6)

    events = asyncio.run(scenario())
    # seq 4 is the move of ply 1: everything after it, in order
    assert [(kind, data) for kind, data, _ in events] == [
        ("game_finished", {"index": 2}), ("move", {"ply": 2}), ("game_finished", {"index": 3}),
        ("move", {"ply": 3}), ("game_finished", {"index": 4}), ("move", {"ply": 4})]


def test_an_id_from_another_epoch_replays_the_stored_games_without_ids() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        log.publish("game_finished", {"index": 1})
        return await _collect(log, "deadbeef-9", 3)

    events = asyncio.run(scenario())
    assert [kind for kind, _, _ in events] == ["game_finished", "game_finished", "snapshot"]
    assert [event_id for _, _, event_id in events[:2]] == [None, None]
    assert events[2][2] == f"{EPOCH}-1"


def test_moves_dropped_from_the_ring_give_the_stored_games_and_a_snapshot() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        log._moves = hub.deque(maxlen=3)  # a small ring: plies 7-9 (seqs 8-10) are kept
        for ply in range(10):
            log.publish("move", {"ply": ply})
        return await _collect(log, f"{EPOCH}-2", 3)

    events = asyncio.run(scenario())
    assert [kind for kind, _, _ in events] == ["game_finished", "game_finished", "snapshot"]
    assert events[2][2] == f"{EPOCH}-10"


def test_a_slow_reader_is_cut_off_and_the_games_go_on() -> None:
    async def scenario() -> tuple[bool, int]:
        log = EventLog(1, reader_limit=5)
        stream = log.follow(None, _snapshot, _nothing)
        first = await stream.__anext__()
        assert first.kind == "snapshot"
        for ply in range(20):  # published while the reader reads nothing
            log.publish("move", {"ply": ply})
        cut = False
        try:
            for _ in range(30):
                await stream.__anext__()
        except SlowReader:
            cut = True
        return cut, log.readers

    cut, readers = asyncio.run(scenario())
    assert cut and readers == 0


def test_closing_the_log_ends_the_streams() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        reader = asyncio.create_task(_collect(log, None, 100))
        await asyncio.sleep(0.01)
        log.publish("tournament_finished", {"status": "finished"})
        log.close()
        return await asyncio.wait_for(reader, 2)

    assert [kind for kind, _, _ in asyncio.run(scenario())] == ["snapshot", "tournament_finished"]


async def _snapshot() -> dict:
    return {}


async def _nothing() -> list:
    return []
