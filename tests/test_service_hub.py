"""The service's event log: catch-up by Last-Event-ID, the snapshot fallbacks, slow readers."""

from __future__ import annotations

import asyncio
import json
import math

from runner.service import hub
from runner.service.hub import EPOCH, EventLog, SlowReader
from runner.service.payloads import (
    GameFinishedEvent,
    GameStartedEvent,
    MoveEvent,
    SnapshotEvent,
    StreamEvent,
    TournamentFinishedEvent,
)


def _started(index: int) -> GameStartedEvent:
    return GameStartedEvent(index=index, round=1, white="a", black="b", fen=None, ply=0,
                            white_clock=60.0, black_clock=60.0, last_move=None, last_uci=None,
                            score_cp=None, mate=None, depth=None, moved_at=0.0)


def _move(ply: int) -> MoveEvent:
    return MoveEvent(index=0, ply=ply, san="e4", uci="e2e4", fen="8/8/8/8/8/8/8/8 w - - 0 1",
                     white_clock=60.0, black_clock=60.0, score_cp=None, mate=None, depth=None,
                     moved_at=0.0)


def _game(index: int) -> GameFinishedEvent:
    return GameFinishedEvent(index=index, round=1, white="a", black="b", result="1-0",
                             termination="checkmate", reason=None, plies=20, replay=False)


async def _snapshot() -> SnapshotEvent:
    # The log hands the snapshot on as it is: its content is the manager's (tested there).
    return SnapshotEvent.model_construct()


async def _collect(log: EventLog, last_id: str | None,
                   count: int) -> list[tuple[str, StreamEvent, str | None]]:
    found = []

    async def snapshot() -> SnapshotEvent:
        return await _snapshot()

    async def finished() -> list[GameFinishedEvent]:
        return [_game(0), _game(1)]

    async for event in log.follow(last_id, snapshot, finished):
        found.append((event.kind, event.data, event.id))
        if len(found) >= count:
            break
    return found


def test_a_new_reader_gets_a_snapshot_then_live_events() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        log.publish(_started(0))
        reader = asyncio.create_task(_collect(log, None, 3))
        await asyncio.sleep(0.01)
        log.publish(_move(1))
        log.publish(_game(0))
        return await reader

    events = asyncio.run(scenario())
    assert [kind for kind, _, _ in events] == ["snapshot", "move", "game_finished"]
    assert events[0][2] == f"{EPOCH}-1" and events[2][2] == f"{EPOCH}-3"


def test_a_reconnecting_reader_gets_exactly_what_it_missed() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        for index in range(5):
            log.publish(_game(index))
            log.publish(_move(index))
        return await _collect(log, f"{EPOCH}-4", 6)

    events = asyncio.run(scenario())
    # seq 4 is the move of ply 1: everything after it, in order
    assert [(kind, data) for kind, data, _ in events] == [
        ("game_finished", _game(2)), ("move", _move(2)), ("game_finished", _game(3)),
        ("move", _move(3)), ("game_finished", _game(4)), ("move", _move(4))]


def test_an_id_from_another_epoch_replays_the_stored_games_without_ids() -> None:
    async def scenario() -> list:
        log = EventLog(1)
        log.publish(_game(1))
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
            log.publish(_move(ply))
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
            log.publish(_move(ply))
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
        log.publish(TournamentFinishedEvent(status="finished"))
        log.close()
        return await asyncio.wait_for(reader, 2)

    assert [kind for kind, _, _ in asyncio.run(scenario())] == ["snapshot", "tournament_finished"]


async def _nothing() -> list[GameFinishedEvent]:
    return []


def test_an_event_is_strict_json_with_null_for_a_figure_that_is_not_finite() -> None:
    """A clock that is not finite (no time limit) is null on the wire: the old encoder wrote
    a bare Infinity, which a browser's JSON.parse refuses (the page lost that event)."""
    log = EventLog(1)
    move = MoveEvent(index=0, ply=1, san="e4", uci="e2e4", fen="8/8/8/8/8/8/8/8 b - - 0 1",
                     white_clock=math.inf, black_clock=math.nan, score_cp=12, mate=None,
                     depth=3, moved_at=0.0)
    event = log.publish(move)

    def refuse(name: str) -> object:
        raise AssertionError(f"{name} is not JSON")

    data = json.loads(event.text, parse_constant=refuse)
    assert event.kind == "move"
    assert data["white_clock"] is None and data["black_clock"] is None
    assert (data["score_cp"], data["depth"], data["san"]) == (12, 3, "e4")
