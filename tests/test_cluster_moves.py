"""Live moves from Dask workers (issue 19 on a cluster), with real processes on 127.0.0.1.

A watched tournament on a LocalCluster reports every move as `MovePlayed` while its games run:
plies rising within a game, the last position equal to the stored game's final position (the
stored moves replayed on the rules core). Unwatched, no move is reported and the workers put
nothing on the moves topic. The local cluster a scheduler starts is gone when its tournament
ends, for each of several tournaments run one after another in one process (the service).
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.clock import TimeControl
from runner.cluster import make_scheduler
from runner.config.model import ClusterConfig, TournamentConfig
from runner.config.parse import load_config
from runner.game.job import GameJob
from runner.game.live import LiveMove
from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig
from runner.rules import STARTING_FEN, Board
from runner.store import open_database
from runner.tournament.events import Event, GameFinished, MovePlayed, RunOutcome
from runner.tournament.run import Tournament
from runner.tournament.scheduler import LocalScheduler, Scheduler
from runner.types import MoveRecord

distributed = pytest.importorskip("distributed", reason="distributed is not installed "
                                  "(pip install '.[cluster]')")
psutil = pytest.importorskip("psutil", reason="psutil (a dependency of distributed) is missing")

from runner.cluster.scheduler import (  # noqa: E402  (needs distributed)
    SLOTS,
    DaskScheduler,
    _Moves,
    _Watched,
)
from runner.cluster.worker import MOVES_TOPIC, MoveMessage  # noqa: E402


def _config(tmp_path: Path, name: str, rounds: int = 2) -> TournamentConfig:
    """A quick round robin of depth-limited bundled engines (each game 20 moves at most)."""
    blocks = "".join(
        f'[[engines]]\nname = "{n}"\ncommand = ["python", "-m", "engine", "--depth", "{d}", '
        f'"--level", "1"]\n' for n, d in (("d1", "1"), ("d2", "2")))
    (tmp_path / "book.epd").write_text(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n")
    path = tmp_path / f"{name}.toml"
    path.write_text(
        f'name = "{name}"\nformat = "roundrobin"\nrounds = {rounds}\ngames = 2\n'
        f'tc = "10+0.1"\nconcurrency = 2\n{blocks}\n'
        '[openings]\nfile = "book.epd"\norder = "sequential"\n\n'
        '[adjudication]\nmaxmoves = 12\n')
    return load_config(path)


def _run(config: TournamentConfig, db_path: Path, scheduler: Scheduler,
         ) -> tuple[RunOutcome, list[Event]]:
    """Play a tournament in this process with `scheduler`; its outcome and every event."""
    events: list[Event] = []
    db = open_database(f"sqlite:///{db_path}")
    try:
        tournament = Tournament(config, db, new=True, scheduler=scheduler)
        return asyncio.run(tournament.run(on_event=events.append)), events
    finally:
        db.close()


def _stored(db_path: Path) -> dict[int, tuple[str, list[str], int]]:
    """Each stored game by job index: its final position (the stored moves replayed on the
    rules core from the opening's position), its moves, its plies."""
    games: dict[int, tuple[str, list[str], int]] = {}
    with sqlite3.connect(db_path) as conn:
        rows = conn.execute("select id, job_index, opening_fen, plies from games "
                            "where status = 'done'").fetchall()
        for game_id, index, fen, plies in rows:
            moves = [uci for (uci,) in conn.execute(
                "select uci from moves where game_id = ? order by ply", (game_id,))]
            board = Board(fen or STARTING_FEN)
            for uci in moves:
                board.push_uci(uci)
            games[index] = (board.fen(), moves, plies)
    return games


def _check_moves(events: list[Event], db_path: Path) -> int:
    """Every game's live moves against its stored record; returns how many moves there were."""
    stored = _stored(db_path)
    seen: dict[int, list[MovePlayed]] = {}
    finished: set[int] = set()
    for event in events:
        if isinstance(event, MovePlayed):
            index = event.job.index
            assert index not in finished, f"a move of game {index + 1} after its end"
            seen.setdefault(index, []).append(event)
        elif isinstance(event, GameFinished):
            finished.add(event.job.index)
    assert set(seen) == set(stored), (sorted(seen), sorted(stored))
    for index, moves in seen.items():
        final_fen, ucis, plies = stored[index]
        played = [m.move.ply for m in moves]
        assert played == sorted(set(played)), f"game {index + 1}: plies not rising: {played}"
        last = moves[-1].move
        assert last.fen == final_fen and last.ply == plies == len(ucis)
        # Each reported move is the stored move of its ply, clocks counted on the worker.
        assert all(m.move.move.uci == ucis[m.move.ply - 1] for m in moves)
        for m in moves:  # 10 s and 0.1 s a move on each clock
            for left in (m.move.white_clock, m.move.black_clock):
                assert left is not None and 0 < left <= 10 + 0.1 * m.move.ply, m
    return sum(len(m) for m in seen.values())


def _children() -> set[int]:
    """The live processes below this one (a local cluster's nannies, workers, engines), but
    multiprocessing's resource tracker: one per process, started once, staying by design."""
    alive = set()
    for child in psutil.Process().children(recursive=True):
        try:
            if (child.status() != psutil.STATUS_ZOMBIE
                    and "multiprocessing.resource_tracker" not in " ".join(child.cmdline())):
                alive.add(child.pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def test_watched_runs_on_local_clusters_report_every_move(tmp_path: Path) -> None:
    """Two watched tournaments one after another in this process, each on a 2-worker local
    cluster the scheduler starts (as `runner serve --workers 2` runs them): every move is
    reported, matching the stored games, and each cluster is gone when its tournament ends."""
    before = _children()
    for name in ("first", "second"):
        config = _config(tmp_path, name)
        scheduler = make_scheduler(config, workers=2)
        assert isinstance(scheduler, DaskScheduler) and scheduler.local_workers == 2
        scheduler.watch_moves = True
        outcome, events = _run(config, tmp_path / f"{name}.db", scheduler)
        assert outcome.status.value == "finished" and outcome.done == 4, outcome
        assert _check_moves(events, tmp_path / f"{name}.db") > 4 * 6
        assert _children() <= before, [psutil.Process(p).cmdline() for p in _children() - before]


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A LocalCluster of this test's own (2 workers, 2 slots each), outliving the runs on it."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                  resources={SLOTS: 2}, dashboard_address="127.0.0.1:0",
                                  silence_logs=40) as made:
        yield made.scheduler_address


def _topic_count(address: str) -> int:
    with distributed.Client(address, timeout=20) as client:
        return len(client.get_events(MOVES_TOPIC))


def test_unwatched_run_sends_no_move(tmp_path: Path, cluster: str) -> None:
    """Without watch_moves no move is reported and none reaches the scheduler's moves topic;
    the same tournament watched on the same cluster fills it (so the check can see moves)."""
    config = _config(tmp_path, "quiet")
    scheduler = make_scheduler(config, cluster=cluster)
    assert isinstance(scheduler, DaskScheduler) and not scheduler.watch_moves
    outcome, events = _run(config, tmp_path / "quiet.db", scheduler)
    assert outcome.done == 4 and sum(isinstance(e, GameFinished) for e in events) == 4
    assert not [e for e in events if isinstance(e, MovePlayed)]
    assert _topic_count(cluster) == 0
    watched = make_scheduler(config, cluster=cluster)
    watched.watch_moves = True
    _outcome, events = _run(config, tmp_path / "watched.db", watched)
    moves = _check_moves(events, tmp_path / "watched.db")
    assert _topic_count(cluster) >= moves > 0  # (a late move would be sent, yet not reported)


def test_where_make_scheduler_plays(tmp_path: Path) -> None:
    """The arguments, else the file's [cluster] (unless told to ignore it), else in-process;
    a local cluster or a running scheduler, never both. Nothing is started yet."""
    config = dataclasses.replace(_config(tmp_path, "where"),
                                 cluster=ClusterConfig(address="tcp://10.0.0.9:8786"))
    filed = make_scheduler(config)
    assert isinstance(filed, DaskScheduler) and filed.address == "tcp://10.0.0.9:8786"
    assert filed.concurrency == 2 and filed.local_workers is None
    local = make_scheduler(config, 3, workers=1)
    assert isinstance(local, DaskScheduler) and local.local_workers == 1
    assert local.address is None and local.concurrency == 3
    assert isinstance(make_scheduler(config, from_file=False), LocalScheduler)
    with pytest.raises(ValueError, match="not both"):
        make_scheduler(config, workers=2, cluster="tcp://127.0.0.1:8786")


def test_the_coordinator_keeps_moves_of_running_jobs_in_order() -> None:
    """Moves of jobs in flight only, each game's plies rising; a finished job's late move and
    another run's move are dropped; a slow consumer loses the oldest waiting moves."""

    tc = TimeControl.parse("10+0.1")
    engine = EngineConfig(name="e", argv=("e",))
    jobs = [GameJob(index=i, white=engine, black=engine, spec=GameSpec(tc, tc)) for i in (0, 1)]

    def sent(key: str, ply: int) -> tuple[float, object]:
        live = LiveMove(ply=ply, move=MoveRecord("e4", uci="e2e4", time=0.5, score_cp=12),
                        fen=f"fen {ply}", white_clock=9.5, black_clock=None)
        return (0.0, MoveMessage(key, live).to_json())

    moves = _Moves(backlog=3)
    moves.jobs.update({"a": _Watched(jobs[0]), "b": _Watched(jobs[1])})
    for event in (sent("a", 1), sent("b", 1), sent("a", 2), sent("a", 2), sent("other", 5),
                  (0.0, {"not": "a move"})):
        moves.receive(event)
    assert moves.arrived.is_set()
    taken = moves.take()
    assert [(m.job.index, m.move.ply) for m in taken] == [(0, 1), (1, 1), (0, 2)]
    assert taken[0].move.move == MoveRecord("e4", uci="e2e4", time=0.5, score_cp=12)
    assert taken[0].move.white_clock == 9.5 and taken[0].move.black_clock is None
    assert not moves.arrived.is_set() and moves.take() == []
    moves.receive(sent("a", 1))  # older than what was reported: out of order
    moves.receive(sent("b", 2))
    del moves.jobs["b"]  # b's record came back: its waiting and late moves go
    moves.receive(sent("b", 3))
    assert moves.take() == []
    for ply in range(3, 8):  # nobody reads: the oldest are dropped
        moves.receive(sent("a", ply))
    assert [m.move.ply for m in moves.take()] == [5, 6, 7] and moves.dropped == 2
