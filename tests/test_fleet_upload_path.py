"""The upload path's shortcuts, on a real SQLite store: the counted games' group commits
(`CountedLedger`) and the worker routes' token cache (`CachedTokens`), whose revocation
rule (a fresh lookup for new work, `ttl` seconds at most for the rest) is checked here."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.fleet.ledger import CountedLedger
from runner.service.app import StoreTokens
from runner.service.security import CachedTokens, Principal
from runner.store.recording import EngineRowValues, create_tournament
from runner.store.store import FleetGameRecord, Store


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh SQLite store."""
    opened = Store.open(f"sqlite:///{tmp_path / 'fleet.db'}")
    try:
        yield opened
    finally:
        opened.close()


def _tournament(store: Store) -> int:
    with store.db.session() as session:
        return create_tournament(session, name="t", config={"name": "t", "format": "match"},
                                 fingerprint="fp",
                                 engines=[EngineRowValues(e, [e]) for e in "AB"],
                                 total_games=100).id


def test_games_counted_together_are_noted_in_fewer_commits_and_none_is_lost(
        store: Store) -> None:
    tid = _tournament(store)
    workers = [store.fleet.register(f"w{n}", "tok", {"engines": ["A", "B"]}) for n in (1, 2)]
    ledger = CountedLedger(store)
    games = [FleetGameRecord(tid, index, workers[index % 2], 7, 1.5) for index in range(40)]

    async def upload_all() -> None:
        await asyncio.gather(*(ledger.note(game) for game in games))
        # Noted again (an index played again after its first batch was lost): replaced.
        await ledger.note(FleetGameRecord(tid, 3, workers[0], 9, 2.0))

    asyncio.run(upload_all())
    stored = store.fleet.games(tid)
    assert [g.job_index for g in stored] == list(range(40))
    assert stored[3] == FleetGameRecord(tid, 3, workers[0], 9, 2.0)
    assert 2 <= ledger.commits < 41  # the forty waiting uploads shared transactions
    counts = {w.id: w.games for w in store.fleet.workers()}
    assert counts == {workers[0]: 21, workers[1]: 20}


def test_a_failed_write_reaches_each_upload_waiting_for_it(store: Store) -> None:
    ledger = CountedLedger(store)
    missing = FleetGameRecord(tournament_id=999, job_index=0, worker_id=999, batch_id=1,
                              factor=1.0)

    async def note() -> None:
        await ledger.note(missing)

    with store.db.session() as session:
        foreign_keys = session.connection().exec_driver_sql("PRAGMA foreign_keys").scalar()
    if not foreign_keys:
        pytest.skip("this SQLite connection does not enforce foreign keys")
    with pytest.raises(Exception, match="(?i)foreign key"):
        asyncio.run(note())
    assert store.fleet.games() == []


def test_a_revoked_token_gets_no_new_work_at_once_and_the_rest_within_its_ttl(
        store: Store) -> None:
    text = store.tokens.add("w", "worker")
    cache = CachedTokens(StoreTokens(store), ttl=3600)
    assert cache.find(text) == Principal("w", "worker")
    assert cache.kept(text) and not cache.kept("another")
    assert store.tokens.revoke("w")
    # Uploads and heartbeats of the batch it holds: still trusted (the entry is young).
    assert cache.find(text) == Principal("w", "worker")
    # A batch request or a registration reads the database: refused at once.
    assert cache.fresh().find(text) is None
    # ... and the entry is gone: the next upload is refused too.
    assert not cache.kept(text) and cache.find(text) is None


def test_an_entry_older_than_its_ttl_is_read_again(store: Store) -> None:
    text = store.tokens.add("w", "worker")
    cache = CachedTokens(StoreTokens(store), ttl=0.0)
    assert cache.find(text) == Principal("w", "worker")
    assert not cache.kept(text)
    store.tokens.revoke("w")
    assert cache.find(text) is None
    assert cache.find("not a token") is None


def test_an_upload_body_is_what_the_route_reads_and_sheds_transcripts_over_its_limit() -> None:
    from datetime import UTC, datetime

    from runner.clock import TimeControl
    from runner.fleet.uploads import upload_body
    from runner.game.record import GameRecord, GameSpec
    from runner.game.termination import GameTermination
    from runner.protocol.engine import TranscriptEntry
    from runner.rules import Result
    from runner.service.fleet_api import Upload
    from runner.types import MoveRecord

    now = datetime.now(UTC)
    moves = tuple(MoveRecord(san, uci=uci, time=0.01) for san, uci in (
        ("f3", "f2f3"), ("e5", "e7e5"), ("g4", "g2g4"), ("Qh4#", "d8h4")))
    tc = TimeControl.parse("10+0.1")
    record = GameRecord("A", "B", GameSpec(tc, tc), moves, Result.BLACK_WINS,
                        GameTermination.CHECKMATE, "mate \"quoted\"", now, now,
                        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",
                        protocol_lines=((TranscriptEntry(1.0, ">", "x" * 500),),
                                        (TranscriptEntry(1.5, "<", "y" * 500),)))
    body = upload_body(7, record, 2.5)
    upload = Upload.model_validate_json(body)
    assert (upload.index, upload.seconds) == (7, 2.5)
    assert GameRecord.from_json(json.dumps(upload.record)) == record
    shorter = upload_body(7, record, float("nan"), limit=len(body) - 1)
    again = Upload.model_validate_json(shorter)
    assert again.seconds == 0.0 and len(shorter) < len(body) - 900
    assert GameRecord.from_json(json.dumps(again.record)).protocol_lines == ((), ())
