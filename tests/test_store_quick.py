"""``runner list`` read without SQLAlchemy (runner.store.quick, issue 30): the store's own
statements, compiled once and run by sqlite3, answer exactly what the store answers, and any
doubt (another schema revision, a changed source, a broken cache) sends the caller back to
the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from runner.store import EngineRowValues, Store, create_tournament, mark_running
from runner.store.models import LeaseRow, TournamentRow
from runner.store.quick import cache_key, load, read_list, save
from runner.store.recording import JobKey
from runner.store.records import TournamentStatus


def _dead_pid() -> int:
    """The id of a process that has ended (and been reaped)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _database(path: Path) -> Store:
    """A store holding a tournament in each state the list shows differently: finished with
    an SPRT decision, running under a live lease with a game being played, marked running
    with a dead runner's lease (shown interrupted), stopped by an engine that never moved."""
    store = Store.open(f"sqlite:///{path}")
    with store.db.session() as session:
        ids = []
        for name in ("finished", "live", "killed", "silent"):
            row = create_tournament(session, name=name, config={}, fingerprint=f"fp-{name}",
                                    engines=[EngineRowValues(n, ["x"]) for n in ("a", "b")],
                                    total_games=4)
            ids.append(row.id)
        finished, live, killed, silent = ids
        for tid in (live, killed):
            mark_running(session, tid, JobKey(0, 1, 0, 0, "a", "b", 0))
        now = datetime.now(UTC)
        # A live lease: this test's parent process, on this host (the reader is another
        # process, whose pid it is not).
        session.add(LeaseRow(tournament_id=live, owner="o1", pid=os.getppid(),
                             host=os.uname().nodename, acquired_at=now, heartbeat_at=now,
                             timeout_seconds=60.0))
        session.add(LeaseRow(tournament_id=killed, owner="o2", pid=_dead_pid(),
                             host=os.uname().nodename, acquired_at=now, heartbeat_at=now))
        session.get(TournamentRow, finished).status = TournamentStatus.FINISHED
        session.get(TournamentRow, finished).sprt_decision = "H1"
        session.get(TournamentRow, finished).finished_at = now
        session.get(TournamentRow, silent).status = TournamentStatus.INTERRUPTED
        session.get(TournamentRow, silent).reason = (
            "engine 'b' lost 2 games without making a move")
    return store


def test_the_compiled_statements_answer_what_the_store_answers(tmp_path: Path) -> None:
    store = _database(tmp_path / "r.db")
    try:
        reads = store.list_reads()
        assert reads is not None and reads.key == cache_key()
        expected = (store.tournaments(), store.failures())
    finally:
        store.close()
    statuses = [t.status for t in expected[0]]
    assert statuses == ["finished", "running", "interrupted", "interrupted"]
    assert [t.running for t in expected[0]] == [0, 1, 0, 0]
    save(tmp_path / "cache" / "reads.json", reads)
    cached = load(tmp_path / "cache" / "reads.json", reads.key)
    assert cached == reads
    assert read_list(tmp_path / "r.db", cached) == expected


def test_any_doubt_sends_the_reader_back_to_the_store(tmp_path: Path) -> None:
    store = _database(tmp_path / "r.db")
    try:
        reads = store.list_reads()
    finally:
        store.close()
    assert reads is not None
    path = tmp_path / "reads.json"
    save(path, reads)
    assert load(path, "another key") is None  # the store's sources or SQLAlchemy changed
    path.write_text("{not json")
    assert load(path, reads.key) is None
    path.write_text(json.dumps({"key": reads.key}))
    assert load(path, reads.key) is None  # a file of another layout
    assert load(tmp_path / "absent.json", reads.key) is None
    # Another schema revision: the store migrates it (or says why not), never this reader.
    assert read_list(tmp_path / "r.db", replace(reads, revision="0123abcd")) is None
    broken = replace(reads, statements={**reads.statements, "progress": "SELECT nonsense"})
    assert read_list(tmp_path / "r.db", broken) is None
    (tmp_path / "text.db").write_text("not a database")
    assert read_list(tmp_path / "text.db", reads) is None


def test_a_cache_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    store = _database(tmp_path / "r.db")
    try:
        reads = store.list_reads()
    finally:
        store.close()
    assert reads is not None
    blocker = tmp_path / "a-file"  # where the cache's directory would be (fails for root too)
    blocker.write_text("")
    save(blocker / "cecp-runner" / "reads.json", reads)
    assert blocker.read_text() == ""
