"""The results store on real databases: SQLite files and a real PostgreSQL server.

Games are recorded through `record_game` and read back through the streaming queries; the
unique job key, one-transaction-per-game and resume bookkeeping are checked on both backends.
A 100,000-game database checks that streaming keeps memory flat.
"""

from __future__ import annotations

import gc
import os
import random
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, select, text
from sqlalchemy.exc import IntegrityError

from runner.clock import TimeControl
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.rules import Result
from runner.stats import PairingCounts, Tally
from runner.store import (
    Database,
    DuplicateGameError,
    EngineRowValues,
    GameFilter,
    GameStatus,
    TournamentStatus,
    create_tournament,
    find_tournament,
    finish_tournament,
    finished_job_keys,
    mark_running,
    open_database,
    record_game,
    reset_unfinished,
    resolve_url,
    stream_games,
    tournaments,
)
from runner.store.models import EngineRow, GameRow, MoveRow
from runner.store.queries import game_moves, stream_played
from runner.tournament.pairing import Pairing, ScheduledGame, gauntlet, match
from runner.types import MoveRecord

T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
RESULTS = ("1-0", "0-1", "1/2-1/2")
TERMINATIONS = ("checkmate", "adjudication", "time forfeit", "stalemate")


@pytest.fixture
def database(any_db: Database) -> Database:
    """The shared database on each backend, under the name these tests use."""
    return any_db


def _tournament(db: Database, schedule: Pairing, name: str = "t") -> int:
    """A tournament row with the schedule's engines; returns its id."""
    names = sorted({n for pair in schedule.encounters for n in pair})
    with db.session() as session:
        row = create_tournament(
            session, name=name, config={"format": "test"}, fingerprint=f"fp-{name}",
            engines=[EngineRowValues(n, ["python", "-m", "engine"], options={"x": 1}) for n in names],
            total_games=schedule.total(), book_state={"order": "sequential", "served": 0},
        )
        return row.id


START = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"


def _record(job: ScheduledGame, result: str, termination: str, start: datetime,
            moves: list[MoveRecord], *, reason: str = "", seconds: float = 42) -> GameRecord:
    """The game loop's record of a game of `job`, as plain as the store needs it."""
    control = TimeControl.parse("10+0.1")
    return GameRecord(
        white=job.white, black=job.black, spec=GameSpec(control, control, start_fen=START),
        moves=tuple(moves), result=result, termination=GameTermination(termination),
        reason=reason, started_at=start, ended_at=start + timedelta(seconds=seconds),
        final_fen=START)


def _finished(job: ScheduledGame, rng: random.Random) -> GameRecord:
    """A plausible finished game for `job` with a few moves carrying search info."""
    moves = [MoveRecord("e4", uci="e2e4", book=True), MoveRecord("e5", uci="e7e5", book=True)]
    for ply in range(rng.randrange(0, 6)):
        moves.append(MoveRecord("Nf3" if ply % 2 == 0 else "Nc6", uci="g1f3" if ply % 2 == 0
                                else "b8c6", time=rng.randrange(1, 500) / 1000, depth=ply + 1,
                                score_cp=rng.randrange(-90, 90), nodes=rng.randrange(10**9)))
    if rng.random() < 0.2:
        moves.append(MoveRecord("Qxf7#", uci="d1f7", time=0.0034, depth=2, mate=1,
                                nodes=5 * 10**9))
    return _record(job, rng.choice(RESULTS), rng.choice(TERMINATIONS),
                   T0 + timedelta(minutes=job.index), moves, reason=f"game {job.index}")


def _pgn(job: ScheduledGame) -> str:
    return f'[Event "t"]\n\n{job.index} *\n'


def _ms(seconds: float | None) -> int | None:
    return None if seconds is None else round(seconds * 1000)


def test_record_and_read_back_games_with_moves(database: Database) -> None:
    schedule = gauntlet("a", ["b", "c"], rounds=2)
    tid = _tournament(database, schedule)
    rng = random.Random(5)
    written = {}
    for job in schedule:
        record = _finished(job, rng)
        with database.session() as session:
            record_game(session, tid, job.key, record, pgn=_pgn(job))
        written[job.index] = (job, record)

    with database.session() as session:
        games = list(stream_games(session, GameFilter(tournament_id=tid)))
        assert [g.job_index for g in games] == list(range(schedule.total()))
        for game in games:
            job, record = written[game.job_index]
            assert (game.white, game.black) == job.engines
            assert (game.round, game.pair_index, game.game_in_pair) == (
                job.round, job.pair, job.game_in_pair)
            assert game.opening_index == job.opening_index
            assert (game.result, game.termination, game.reason) == (
                record.result, record.termination, record.reason)
            assert game.plies == len(record.moves)
            assert game.status is GameStatus.DONE and game.pgn == _pgn(job)
            assert game.opening_fen == START
            assert game.started_at == record.started_at and game.ended_at == record.ended_at
            assert game.started_at.tzinfo is not None
            assert game.opening_moves == "e2e4 e7e5"
            stored = game_moves(session, game.id)
            assert [(m.ply, m.san, m.uci, m.time_ms, m.depth, m.score_cp, m.mate, m.nodes)
                    for m in stored] == [
                (ply, m.san, m.uci, _ms(m.time), m.depth, m.score_cp, m.mate, m.nodes)
                for ply, m in enumerate(record.moves, start=1)]


def test_filters_select_by_engine_result_and_termination(database: Database) -> None:
    schedule = gauntlet("a", ["b", "c"], rounds=3)
    tid = _tournament(database, schedule)
    rng = random.Random(11)
    records = {}
    for job in schedule:
        records[job.index] = (job, _finished(job, rng))
        with database.session() as session:
            record_game(session, tid, job.key, records[job.index][1])
    with database.session() as session:
        for where, keep in [
            (GameFilter(tid, engine="c"), lambda j, r: "c" in j.engines),
            (GameFilter(tid, result=Result.DRAW), lambda j, r: r.result == "1/2-1/2"),
            (GameFilter(tid, termination=GameTermination.CHECKMATE),
             lambda j, r: r.termination is GameTermination.CHECKMATE),
            (GameFilter(tid, engine="b", result=Result.WHITE_WINS),
             lambda j, r: "b" in j.engines and r.result == "1-0"),
        ]:
            got = [g.job_index for g in stream_games(session, where, batch=3)]
            expected = [i for i, (j, r) in sorted(records.items()) if keep(j, r)]
            assert got == expected, where
            assert got, f"the random results left {where} empty; pick another seed"


def test_a_job_is_stored_once(database: Database) -> None:
    schedule = match("a", "b")
    tid = _tournament(database, schedule)
    job = schedule.job(0)
    rng = random.Random(1)
    with database.session() as session:
        record_game(session, tid, job.key, _finished(job, rng))
    with pytest.raises(DuplicateGameError), database.session() as session:
        record_game(session, tid, job.key, _finished(job, rng))
    with pytest.raises(DuplicateGameError), database.session() as session:
        mark_running(session, tid, job.key)
    # The unique key holds even for a writer that bypasses record_game.
    with pytest.raises(IntegrityError), database.session() as session:
        white = session.scalar(select(GameRow.white_id).where(GameRow.tournament_id == tid))
        session.execute(insert(GameRow).values(
            tournament_id=tid, job_index=0, round=1, pair_index=0, game_in_pair=0,
            white_id=white, black_id=white, opening_index=0, status=GameStatus.PLANNED))
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(GameRow)) == 1
        # Another tournament may use the same job index.
        other = _tournament(database, schedule, name="other")
        record_game(session, other, job, _finished(job, rng))


def test_a_game_stored_by_the_id_mark_running_gave(database: Database) -> None:
    # The writer keeps the id mark_running returns and stores the game by it; a job already
    # played, or an id of another job, still goes through the checked path.
    schedule = match("a", "b", games=2)
    tid = _tournament(database, schedule)
    first, second = schedule.job(0), schedule.job(1)
    rng = random.Random(2)
    with database.session() as session:
        first_id = mark_running(session, tid, first.key)
        second_id = mark_running(session, tid, second.key)
    with database.session() as session:
        assert record_game(session, tid, first.key, _finished(first, rng),
                           game_id=first_id) == first_id
    with pytest.raises(DuplicateGameError), database.session() as session:
        record_game(session, tid, first.key, _finished(first, rng), game_id=first_id)
    with database.session() as session:  # the wrong id: the job's own row is found and used
        assert record_game(session, tid, second.key, _finished(second, rng),
                           game_id=first_id) == second_id
    with database.session() as session:
        rows = session.execute(select(GameRow.id, GameRow.status, GameRow.plies)
                               .order_by(GameRow.id)).all()
        assert [(r.id, r.status) for r in rows] == [(first_id, GameStatus.DONE),
                                                    (second_id, GameStatus.DONE)]
        moves = session.scalar(select(func.count()).select_from(MoveRow))
        assert moves == sum(r.plies for r in rows)


def test_a_failed_game_write_leaves_nothing_behind(database: Database) -> None:
    schedule = match("a", "b")
    tid = _tournament(database, schedule)
    job = schedule.job(0)
    broken = _record(job, "1-0", "checkmate", T0, [
        MoveRecord("e4", uci="e2e4"), MoveRecord(None, uci="e7e5")])  # type: ignore[arg-type]
    with pytest.raises(IntegrityError), database.session() as session:
        record_game(session, tid, job.key, broken)
    with database.session() as session:
        assert session.scalar(select(func.count()).select_from(GameRow)) == 0
        assert session.scalar(select(func.count()).select_from(MoveRow)) == 0
        assert finished_job_keys(session, tid) == set()


def test_resume_bookkeeping(database: Database) -> None:
    schedule = match("a", "b", rounds=3)
    tid = _tournament(database, schedule)
    rng = random.Random(2)
    jobs = list(schedule)
    for job in jobs[:3]:
        with database.session() as session:
            mark_running(session, tid, job.key, started_at=T0)
        with database.session() as session:
            record_game(session, tid, job.key, _finished(job, rng))
    for job in jobs[3:5]:  # in flight when the runner was killed
        with database.session() as session:
            mark_running(session, tid, job.key)
    with database.session() as session:
        progress = find_tournament(session, tournament_id=tid)
        assert progress is not None
        # Nobody holds the tournament: it shows as interrupted, and its two rows left marked
        # running are not games being played (issue 27: no "running 2" beside "interrupted").
        assert (progress.done, progress.running, progress.total_games) == (3, 0, 6)
        assert progress.status == "interrupted"
        assert reset_unfinished(session, tid) == 2
    with database.session() as session:
        done = finished_job_keys(session, tid)
        assert done == {0, 1, 2}
        todo = [job.index for job in schedule.jobs(skip=done)]
        assert todo == [3, 4, 5]
        replay = list(stream_games(session, GameFilter(tid, status=GameStatus.REPLAY)))
        assert [g.job_index for g in replay] == [3, 4]
    for index in todo:
        job = schedule.job(index)
        with database.session() as session:
            mark_running(session, tid, job.key)
        with database.session() as session:
            record_game(session, tid, job.key, _finished(job, rng))
    with database.session() as session:
        finish_tournament(session, tid, sprt_decision="H1")
    with database.session() as session:
        [progress] = tournaments(session)
        assert (progress.status, progress.done, progress.running) == ("finished", 6, 0)
        assert progress.sprt_decision == "H1" and progress.finished_at is not None
        assert find_tournament(session, fingerprint="fp-t").id == tid
        assert session.scalar(select(func.count()).select_from(GameRow)) == 6
    assert TournamentStatus.FINISHED.value == "finished"


def _tally(session, tournament_id: int, engines: list[str]) -> list[PairingCounts]:
    """Every pairing's counts, from the played games as the report reads them."""
    tally = Tally(engines)
    for game in stream_played(session, tournament_id):
        if game.result is not None:
            tally.add(game.white, game.black, game.result, game.pair_index)
    return sorted(tally.pairings(), key=lambda p: (p.first, p.second))


def test_played_games_read_back_as_enums(database: Database) -> None:
    schedule = match("a", "b", rounds=2)
    tid = _tournament(database, schedule)
    rng = random.Random(5)
    stored = {}
    for job in schedule:
        record = _finished(job, rng)
        stored[job.index] = record
        with database.session() as session:
            record_game(session, tid, job.key, record)
    with database.session() as session:
        played = list(stream_played(session, tid,
                                    fault_terminations=[GameTermination.TIME_FORFEIT]))
    assert [(g.result, g.termination) for g in played] == [
        (Result(r.result), GameTermination(r.termination)) for r in stored.values()]
    for game in played:
        assert isinstance(game.result, Result) and isinstance(game.termination, GameTermination)
        if game.termination is GameTermination.TIME_FORFEIT and game.result.winner is not None:
            assert game.at_fault == (game.black if game.result.winner else game.white)
        elif game.termination is not GameTermination.TIME_FORFEIT:
            assert game.at_fault is None


def test_played_games_tally_matches_an_independent_count(database: Database) -> None:
    schedule = gauntlet("a", ["b", "c"], rounds=10)
    tid = _tournament(database, schedule)
    rng = random.Random(3)
    per_pair: dict[int, list[tuple[ScheduledGame, str]]] = {}
    for job in schedule:
        if job.index == 7:
            continue  # an unfinished game: its pair must not count as a pair
        record = _finished(job, rng)
        per_pair.setdefault(job.pair, []).append((job, record.result))
        with database.session() as session:
            record_game(session, tid, job.key, record)
    expected_wdl: dict[tuple[str, str], Counter[str]] = {}
    expected_penta: dict[tuple[str, str], Counter[float]] = {}
    for games in per_pair.values():
        points = []
        for job, result in games:
            key = tuple(sorted(job.engines))
            first_white = job.white == key[0]
            score = Result(result).points(first_white)
            expected_wdl.setdefault(key, Counter())[{1.0: "w", 0.5: "d", 0.0: "l"}[score]] += 1
            points.append(score)
        if len(points) == 2:
            expected_penta.setdefault(key, Counter())[sum(points)] += 1
    with database.session() as session:
        counts = _tally(session, tid, ["a", "b", "c"])
    assert [(c.first, c.second) for c in counts] == [("a", "b"), ("a", "c")]
    for c in counts:
        wdl = expected_wdl[(c.first, c.second)]
        assert (c.trinomial.wins, c.trinomial.draws, c.trinomial.losses) == (
            wdl["w"], wdl["d"], wdl["l"])
        penta = expected_penta[(c.first, c.second)]
        assert (c.pentanomial.ll, c.pentanomial.ld, c.pentanomial.dd_wl, c.pentanomial.wd,
                c.pentanomial.ww) == tuple(penta[s] for s in (0.0, 0.5, 1.0, 1.5, 2.0))
    assert sum(c.pentanomial.ll + c.pentanomial.ld + c.pentanomial.dd_wl + c.pentanomial.wd
               + c.pentanomial.ww for c in counts) == schedule.total() // 2 - 1


def test_sqlite_runs_in_wal_mode_with_foreign_keys(tmp_path) -> None:
    db = open_database(str(tmp_path / "x.db"))
    try:
        with db.engine.connect() as connection:
            assert connection.execute(text("PRAGMA journal_mode")).scalar() == "wal"
            assert connection.execute(text("PRAGMA foreign_keys")).scalar() == 1
        with pytest.raises(IntegrityError), db.session() as session:
            session.execute(insert(MoveRow).values(game_id=999, ply=1, san="e4", uci="e2e4"))
    finally:
        db.close()


def test_database_url_resolution(tmp_path) -> None:
    assert resolve_url(None, env={}) == "sqlite:///runner.db"
    assert resolve_url(None, env={"RUNNER_DB": "sqlite:////tmp/a.db"}) == "sqlite:////tmp/a.db"
    assert resolve_url("sqlite:////tmp/b.db", env={"RUNNER_DB": "x.db"}) == "sqlite:////tmp/b.db"
    assert resolve_url(str(tmp_path / "c.db"), env={}) == f"sqlite:///{tmp_path / 'c.db'}"
    assert resolve_url("postgresql+psycopg://u@h/db", env={}) == "postgresql+psycopg://u@h/db"


def _rss_bytes() -> int:
    """Resident memory of this process (Linux /proc)."""
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
@pytest.mark.slow  # CI time: 100k games; the report's memory test reads a store the same way
def test_streaming_100k_games_keeps_memory_flat(tmp_path) -> None:
    """100,000 synthetic games (~400 bytes of PGN each, ~40 MB in all) streamed in batches."""
    db = open_database(f"sqlite:///{tmp_path / 'big.db'}")
    try:
        schedule = gauntlet("a", ["b", "c", "d"], rounds=100_000 // 6 + 1)
        tid = _tournament(db, schedule)
        with db.session() as session:
            ids = dict(session.execute(select(EngineRow.name, EngineRow.id)).all())
        pgn_body = "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 " * 12
        total = 100_000
        started = time.perf_counter()
        with db.engine.begin() as connection:
            for chunk in range(0, total, 10_000):
                connection.execute(insert(GameRow.__table__), [
                    {"tournament_id": tid, "job_index": i, "round": job.round,
                     "pair_index": job.pair, "game_in_pair": job.game_in_pair,
                     "white_id": ids[job.white], "black_id": ids[job.black],
                     "opening_index": job.pair, "status": GameStatus.DONE,
                     "result": RESULTS[i % 3], "termination": TERMINATIONS[i % 4],
                     "plies": 60, "started_at": None, "ended_at": None,
                     "pgn": f'[Round "{i}"]\n\n{pgn_body}{RESULTS[i % 3]}\n'}
                    for i in range(chunk, chunk + 10_000) for job in (schedule.job(i),)
                ])
        insert_seconds = time.perf_counter() - started

        gc.collect()
        before = peak = _rss_bytes()
        started = time.perf_counter()
        count = size = 0
        with db.session() as session:
            for game in stream_games(session, GameFilter(tournament_id=tid), batch=1000):
                count += 1
                size += len(game.pgn or "")
                if count % 5000 == 0:
                    peak = max(peak, _rss_bytes())
        stream_seconds = time.perf_counter() - started
        assert count == total and size > 35_000_000
        growth = peak - before
        # Holding the games would take well over 100 MB; a stream holds one batch at a time.
        assert growth < 25_000_000, f"memory grew {growth / 1e6:.1f} MB while streaming"
        with db.session() as session:
            started = time.perf_counter()
            counts = _tally(session, tid, ["a", "b", "c", "d"])
            pair_seconds = time.perf_counter() - started
        assert sum(c.trinomial.games for c in counts) == total
        assert sum(c.pentanomial.ll + c.pentanomial.ld + c.pentanomial.dd_wl + c.pentanomial.wd
                   + c.pentanomial.ww for c in counts) == total // 2
        print(f"\n100k games: insert {insert_seconds:.2f} s, stream {stream_seconds:.2f} s, "
              f"RSS growth {growth / 1e6:.2f} MB, tally {pair_seconds:.2f} s")
    finally:
        db.close()
