"""Tournaments end to end through the CLI: runs, resume after kill -9, Ctrl-C, changed configs,
bad configs, exports read back by python-chess and by our reader, the cutechess-style form.

The engines are the bundled engine at its quickest levels (moves in milliseconds), and games
are capped at 40 moves by adjudication, so a dozen games take a few seconds.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Iterable
from datetime import UTC, datetime
from pathlib import Path

import chess
import chess.pgn
import pytest
from conftest import REPO, require_binary

from runner.config.parse import parse_config
from runner.game.job import GameJob
from runner.game.record import GameRecord, GameTermination
from runner.pgn.reader import read_games
from runner.store import GameFilter, open_database, stream_games, tournaments
from runner.tournament.run import Tournament
from runner.tournament.scheduler import JobFinished, JobStarted, Scheduler, SchedulerEvent
from runner.types import MoveRecord

PY = sys.executable
BUNDLED = ["python", "-m", "engine"]


def _config_text(tmp_path: Path, *, name: str = "t", rounds: int = 3, concurrency: int = 2,
                 fmt: str = "gauntlet", extra: str = "", engines: int = 3) -> Path:
    """A small tournament file of quick bundled engines, with an EPD book."""
    book = tmp_path / "book.epd"
    book.write_text(
        "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1\n"
        "rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R b KQkq - 1 1\n")
    levels = [("one", "1"), ("greedy", "greedy"), ("random", "random"), ("two", "2")][:engines]
    blocks = "\n".join(
        f'[[engines]]\nname = "{name_}"\ncommand = ["python", "-m", "engine", "--level", "{lvl}", '
        f'"--seed", "{i}"]\n' for i, (name_, lvl) in enumerate(levels))
    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "{name}"\nformat = "{fmt}"\nrounds = {rounds}\ngames = 2\ntc = "10+0.1"\n'
        f'concurrency = {concurrency}\n{extra}\n{blocks}\n'
        '[openings]\nfile = "book.epd"\norder = "random"\nseed = 3\n\n'
        '[adjudication]\nmaxmoves = 40\n')
    return path


def _runner(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "runner", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONPATH": str(REPO)})


def _games(db_path: Path) -> list[tuple[int, str, str | None]]:
    with sqlite3.connect(db_path) as conn:
        return conn.execute("select job_index, status, result from games order by job_index").fetchall()


def _engine_pids(directory: Path) -> set[int]:
    """Bundled-engine processes working in `directory` (engines inherit the runner's cwd)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            args = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if b"engine" in args and cwd == str(directory):
            found.add(int(entry.name))
    return found


@pytest.mark.timeout(120)
def test_run_stores_every_game_and_prints_cutechess_summary(tmp_path):
    config = _config_text(tmp_path)
    db = tmp_path / "r.db"
    done = _runner("run", str(config), "--db", f"sqlite:///{db}", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    games = _games(db)
    assert [g[0] for g in games] == list(range(12))  # 2 encounters x 2 games x 3 rounds
    assert all(status == "done" and result in ("1-0", "0-1", "1/2-1/2")
               for _, status, result in games)
    lines = [line for line in done.stdout.splitlines() if line.startswith("Score of ")]
    assert len(lines) == 2
    for line in lines:  # Score of A vs B: W - L - D  [ratio] N
        head, _, tail = line.partition(": ")
        wld, _, rest = tail.partition("  [")
        wins, losses, draws = (int(x) for x in wld.split(" - "))
        ratio, _, total = rest.partition("] ")
        assert wins + losses + draws == int(total) == 6
        assert float(ratio) == pytest.approx((wins + draws / 2) / 6, abs=5e-4)
    assert "Elo difference:" in done.stdout
    assert "finished: 12 of 12 games" in done.stderr
    # A second run of a finished tournament starts a new one (nothing to resume).
    listing = _runner("list", "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert "finished" in listing.stdout and "12/12" in listing.stdout


@pytest.mark.timeout(180)
def test_resume_after_kill_9_plays_exactly_the_missing_games(tmp_path):
    config = _config_text(tmp_path, rounds=6)
    db = tmp_path / "r.db"
    proc = subprocess.Popen([PY, "-m", "runner", "run", str(config), "--db", f"sqlite:///{db}",
                             "--quiet"], cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.2)
        if db.exists():
            try:
                if sum(1 for g in _games(db) if g[1] == "done") >= 5:
                    break
            except sqlite3.OperationalError:
                pass
    proc.kill()  # SIGKILL: no cleanup at all
    proc.wait()
    stored = _games(db)
    played = [g for g in stored if g[1] == "done"]
    assert 5 <= len(played) < 24, stored
    # The engines see their input close and exit on their own.
    deadline = time.monotonic() + 10
    while _engine_pids(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_engine_pids(tmp_path))
    again = _runner("run", str(config), "--db", f"sqlite:///{db}", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Resuming" not in again.stderr  # --quiet
    final = _games(db)
    assert [g[0] for g in final] == list(range(24))
    assert all(g[1] == "done" for g in final)
    assert f"({24 - len(played)} in this run" in again.stderr
    # Games stored before the kill are untouched.
    assert [g for g in final if g[0] in {p[0] for p in played}] == played
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from tournaments").fetchone()[0] == 1
        pairs = conn.execute("select pair_index, count(*) from games group by pair_index").fetchall()
    assert all(count == 2 for _, count in pairs) and len(pairs) == 12


@pytest.mark.timeout(120)
@pytest.mark.parametrize("presses", [1, 2])
def test_ctrl_c_once_finishes_running_games_twice_aborts_them(tmp_path, presses):
    config = _config_text(tmp_path, rounds=20, extra="")
    db = tmp_path / "r.db"
    proc = subprocess.Popen([PY, "-m", "runner", "run", str(config), "--db", f"sqlite:///{db}",
                             "--quiet"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            if db.exists() and sum(1 for g in _games(db) if g[1] == "done") >= 3:
                break
        except sqlite3.OperationalError:
            pass
    for _ in range(presses):
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # 128 + SIGINT: scripts can tell (issue 21 item 10)
    assert "interrupted" in err and "Run the same command again" in err
    games = _games(db)
    done = [g for g in games if g[1] == "done"]
    assert 3 <= len(done) < 80
    assert not [g for g in games if g[1] == "running"]  # in-flight games: replay or finished
    if presses == 2:
        assert any("aborting" in line for line in err.splitlines())
    deadline = time.monotonic() + 5
    while _engine_pids(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not (_engine_pids(tmp_path)), "an engine outlived the runner"
    assert out.count("Score of ") == 2


@pytest.mark.timeout(120)
def test_changed_config_is_refused_unless_forced(tmp_path):
    config = _config_text(tmp_path, rounds=2)
    db = f"sqlite:///{tmp_path / 'r.db'}"
    db_file = tmp_path / "r.db"
    open_database(db).close()
    # Interrupt a run by faking an unfinished tournament: one played game, the rest missing.
    cfg = parse_config(_table(config), source=str(config), base_dir=tmp_path)
    database = open_database(db)
    try:
        tournament = Tournament(cfg, database)
        tournament.prepare(lease=False)  # a row, and no runner on it
    finally:
        database.close()
    changed = config.read_text().replace('tc = "10+0.1"', 'tc = "5+0.1"')
    config.write_text(changed)
    refused = _runner("run", str(config), "--db", db, "--quiet", cwd=tmp_path)
    assert refused.returncode == 2
    assert "different configuration" in refused.stderr and "--force" in refused.stderr
    assert _games(db_file) == []
    forced = _runner("run", str(config), "--db", db, "--quiet", "--force", cwd=tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert len(_games(db_file)) == 8


def _table(path: Path) -> dict:
    import tomllib

    return tomllib.loads(path.read_text())


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mutation,expected", [
    ('rounds = 3', "rounds = \"three\""),
    ('tc = "10+0.1"', 'tc = "10+0.1"\nbogus = 1'),
    ('"--seed", "0"]', '"--seed", "0"]\nprotocol = "telepathy"'),
    ('file = "book.epd"', 'file = "missing.epd"'),
])
def test_bad_configs_exit_2_with_file_key_and_value_and_write_nothing(tmp_path, mutation, expected):
    config = _config_text(tmp_path)
    config.write_text(config.read_text().replace(mutation, expected, 1))
    db = tmp_path / "r.db"
    done = _runner("run", str(config), "--db", f"sqlite:///{db}", cwd=tmp_path)
    assert done.returncode == 2
    assert str(config) in done.stderr or config.name in done.stderr
    assert not db.exists(), "a bad configuration must not touch the database"
    key = {"rounds = 3": "rounds", 'tc = "10+0.1"': "bogus",
           '"--seed", "0"]': "protocol", 'file = "book.epd"': "openings.file"}[mutation]
    assert key in done.stderr


@pytest.mark.timeout(60)
def test_missing_engine_binary_is_a_config_error(tmp_path):
    config = _config_text(tmp_path)
    config.write_text(config.read_text().replace('command = ["python", "-m", "engine", "--level", "1"',
                                                 'command = ["no-such-engine-xyz", "--level", "1"', 1))
    done = _runner("run", str(config), "--db", f"sqlite:///{tmp_path / 'r.db'}", cwd=tmp_path)
    assert done.returncode == 2
    assert "no-such-engine-xyz" in done.stderr


@pytest.mark.timeout(120)
def test_export_reads_back_in_python_chess_and_our_reader(tmp_path):
    config = _config_text(tmp_path, rounds=2, extra='pgnout = "live.pgn"')
    db = f"sqlite:///{tmp_path / 'r.db'}"
    assert _runner("run", str(config), "--db", db, "--quiet", cwd=tmp_path).returncode == 0
    out = tmp_path / "all.pgn"
    export = _runner("export", "--out", str(out), "--db", db, cwd=tmp_path)
    assert export.returncode == 0, export.stderr
    database = open_database(db)
    try:
        with database.session() as session:
            stored = list(stream_games(session, GameFilter(tournament_id=1)))
            assert tournaments(session)[0].done == 8
    finally:
        database.close()
    for path in (out, tmp_path / "live.pgn"):
        text = path.read_text()
        handle = io.StringIO(text)
        oracle = []
        while (game := chess.pgn.read_game(handle)) is not None:
            assert not game.errors, game.errors
            oracle.append(game)
        ours = list(read_games(io.BytesIO(text.encode())))
        assert all(game.error is None for game in ours)
        assert len(oracle) == len(ours) == len(stored) == 8
        by_round = {g.headers["Round"]: g for g in oracle}
        assert len(by_round) == 8
        results = sorted(g.headers["Result"] for g in oracle)
        assert results == sorted(g.result for g in stored)
        for game, mine in zip(oracle, ours, strict=True):
            assert game.headers["Result"] == mine.tags["Result"] == mine.result
            board = game.end().board()
            assert board.fen() == mine.final_fen
            assert len(list(game.mainline_moves())) == len(mine.moves)
            if game.headers["Result"] != "*" and game.headers.get("Termination") == "normal":
                assert board.is_game_over(claim_draw=True)
    # Filters: only one engine's games, only one result.
    only = _runner("export", "1", "--engine", "random", "--db", db, cwd=tmp_path)
    assert only.returncode == 0
    assert only.stdout.count("[Event ") == 4
    wins = _runner("export", "1", "--result", "1-0", "--db", db, cwd=tmp_path)
    assert wins.stdout.count("[Event ") == sum(1 for g in stored if g.result == "1-0")


@pytest.mark.timeout(120)
def test_match_from_the_command_line_in_the_cutechess_vocabulary(tmp_path):
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = _runner(
        "match", "--engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", "arg=1",
        "name=alpha", "--engine", "cmd=python -m engine --level random", "name=beta",
        "--each", "tc=10+0.1", "timemargin=50", "--rounds", "3", "--games", "2",
        "--concurrency", "2", "--maxmoves", "40", "--draw", "movenumber=30", "movecount=4",
        "score=5", "--resign", "movecount=3", "score=700", "--pgnout", "m.pgn", "--db", db,
        "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("Score of "))
    assert line.startswith("Score of alpha vs beta: ") and line.endswith(" 6")
    assert (tmp_path / "m.pgn").read_text().count("[Event ") == 6
    bad = _runner("match", "--engine", "cmd=python", "--engine", "cmd=python", "bogus=1",
                  "--each", "tc=1+0", cwd=tmp_path)
    assert bad.returncode == 2 and "bogus" in bad.stderr


@pytest.mark.timeout(120)
def test_chess960_round_robin_draws_start_positions(tmp_path):
    config = _config_text(tmp_path, rounds=1, fmt="round-robin", extra='variant = "fischerandom"')
    config.write_text(config.read_text().split("[openings]")[0] + "[adjudication]\nmaxmoves = 30\n")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = _runner("run", str(config), "--db", db, "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    database = open_database(db)
    try:
        with database.session() as session:
            games = list(stream_games(session, GameFilter(tournament_id=1)))
    finally:
        database.close()
    assert len(games) == 6
    fens = {g.pair_index: g.opening_fen for g in games}
    for game in games:
        assert game.opening_fen == fens[game.pair_index]  # both games of a pair share it
        board = chess.Board(game.opening_fen, chess960=True)
        assert board.is_valid()
        assert '[Variant "fischerandom"]' in game.pgn
    assert len(set(fens.values())) > 1


@pytest.mark.timeout(180)
@pytest.mark.slow
def test_sprt_match_stops_when_the_test_decides(tmp_path):
    extra = "[sprt]\nelo0 = 0\nelo1 = 300\nalpha = 0.05\nbeta = 0.05\nmodel = \"logistic\"\n"
    config = _config_text(tmp_path, rounds=200, fmt="match", engines=2,
                          extra="")
    text = config.read_text().replace("[openings]", extra + "\n[openings]")
    # level 1 against greedy (1-ply) is a mismatch: H1 is accepted long before 400 games.
    config.write_text(text)
    db = tmp_path / "r.db"
    done = _runner("run", str(config), "--db", f"sqlite:///{db}", "--quiet", cwd=tmp_path,
                   timeout=170)
    assert done.returncode == 0, done.stderr
    assert "SPRT: llr" in done.stdout and "H1" in done.stdout
    played = len(_games(db))
    assert played < 400
    with sqlite3.connect(db) as conn:
        status, decision = conn.execute("select status, sprt_decision from tournaments").fetchone()
    assert (status, decision) == ("finished", "H1")


@pytest.mark.timeout(240)
@pytest.mark.slow
def test_gauntlet_with_real_debian_engines(tmp_path):
    fairymax = require_binary("fairymax")
    phalanx = require_binary("phalanx")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = _runner(
        "gauntlet", "--engine", "cmd=python -m engine --level 2", "name=bundled",
        "--engine", f"cmd={fairymax}", "name=fairymax", "--engine", f"cmd={phalanx}",
        "name=phalanx", "--each", "tc=5+0.05", "--rounds", "1", "--games", "2",
        "--concurrency", "2", "--maxmoves", "60", "--db", db, "--quiet", cwd=tmp_path,
        timeout=230)
    assert done.returncode == 0, done.stderr
    database = open_database(db)
    try:
        with database.session() as session:
            games = list(stream_games(session, GameFilter(tournament_id=1)))
    finally:
        database.close()
    assert len(games) == 4
    bad = {GameTermination.TIME_FORFEIT, GameTermination.STALL, GameTermination.DISCONNECT,
           GameTermination.ILLEGAL_MOVE, GameTermination.ERROR}
    assert not [g for g in games if g.termination in bad], [(g.white, g.black, g.reason)
                                                             for g in games]


@pytest.mark.timeout(60)
def test_engine_refusing_a_fixed_depth_stops_the_run_with_the_reason(tmp_path):
    """phalanx XXII (like gnuchess 6.2.7) knows no "sd": a depth=3 match stops before its
    first game and says why, instead of letting phalanx think for a day per move on
    "st 86400"."""
    phalanx = require_binary("phalanx")
    db = f"sqlite:///{tmp_path / 'r.db'}"
    done = _runner(
        "match", "--engine", f"cmd={phalanx}", "name=ph", "--engine",
        "cmd=python -m engine --level 1", "name=bundled", "--each", "depth=3", "--rounds", "1",
        "--db", db, "--quiet", cwd=tmp_path, timeout=50)
    assert done.returncode == 2, done.stderr  # a configuration refusal (issue 31)
    message = " ".join(done.stderr.split())
    assert "engine ph cannot play to a fixed depth" in message, done.stderr
    assert "sd 3" in message, done.stderr
    assert "0 of 2 games stored" in message, done.stderr


@pytest.mark.timeout(240)
def test_tournament_with_resume_on_postgresql(tmp_path, postgres_server):
    url = postgres_server.new_database()
    config = _config_text(tmp_path, rounds=2, concurrency=2)
    cfg = parse_config(_table(config), source=str(config), base_dir=tmp_path)
    database = open_database(url)
    try:
        import asyncio

        first = Tournament(cfg, database)
        first.prepare()
        # Stop after the first finished game: a soft stop, then a resume plays the rest.
        outcome = asyncio.run(first.run(on_event=lambda event: first.stop()
                                        if type(event).__name__ == "GameFinished" else None))
        assert outcome.status.value == "interrupted" and 1 <= outcome.done < 8
        second = Tournament(cfg, database)
        second.prepare()
        assert second.done_games == outcome.done
        final = asyncio.run(second.run())
        assert final.status.value == "finished" and final.done == 8
        assert final.played_now == 8 - outcome.done
        with database.session() as session:
            games = list(stream_games(session, GameFilter(tournament_id=final.tournament_id)))
        assert sorted(g.job_index for g in games) == list(range(8))
    finally:
        database.close()


@pytest.mark.timeout(120)
def test_the_run_is_given_its_observer_and_whether_it_watches_moves(tmp_path, monkeypatch):
    """Issue 27: nothing is wired into a tournament after it is built; `run` takes the
    observer of that run, and reports every move only when asked to."""
    import asyncio

    from runner.tournament.events import GameFinished, MovePlayed

    monkeypatch.chdir(REPO)  # the bundled engine runs as "python -m engine"
    config = _config_text(tmp_path, rounds=1, concurrency=1, engines=2)
    cfg = parse_config(_table(config), source=str(config), base_dir=tmp_path)
    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        seen: dict[bool, list[object]] = {}
        for watch in (False, True):
            tournament = Tournament(cfg, database, new=True)
            tournament.prepare()
            seen[watch] = []
            outcome = asyncio.run(tournament.run(on_event=seen[watch].append, watch_moves=watch))
            assert outcome.done == 2
    finally:
        database.close()
    for watch in (False, True):
        assert sum(isinstance(event, GameFinished) for event in seen[watch]) == 2
    assert not any(isinstance(event, MovePlayed) for event in seen[False])
    assert sum(isinstance(event, MovePlayed) for event in seen[True]) >= 2


@pytest.mark.timeout(120)
def test_affinity_pins_each_slot_s_engines_to_one_cpu(tmp_path, monkeypatch):
    import asyncio

    monkeypatch.chdir(tmp_path)  # the engines inherit it: that is how _engine_pids finds them
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs at least 2 CPUs to tell the slots apart")
    config = _config_text(tmp_path, rounds=1, concurrency=2, extra="affinity = true")
    cfg = parse_config(_table(config), source=str(config), base_dir=tmp_path)
    assert cfg.affinity
    latest: dict[int, set[int]] = {}

    def watch(event: object) -> None:
        # An engine of the other slot may be starting (not pinned yet): keep the last sight.
        for pid in _engine_pids(tmp_path):
            with contextlib.suppress(OSError):
                latest[pid] = os.sched_getaffinity(pid)

    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        tournament = Tournament(cfg, database)
        tournament.prepare()
        outcome = asyncio.run(tournament.run(on_event=watch))
    finally:
        database.close()
    assert outcome.done == 4
    seen = list(latest.values())
    assert seen and all(len(cpus) == 1 for cpus in seen), seen
    assert len({min(cpus) for cpus in seen}) == 2  # the two slots use different CPUs


@pytest.mark.timeout(180)
@pytest.mark.slow
def test_the_demo_configuration_runs_as_the_readme_says(tmp_path):
    done = _runner("run", str(REPO / "configs" / "demo.toml"), "--db",
                   f"sqlite:///{tmp_path / 'runner.db'}", "--quiet", cwd=tmp_path, timeout=170)
    assert done.returncode == 0, done.stderr
    assert "finished: 48 of 48 games" in done.stderr
    assert done.stdout.count("Score of level-2 vs ") == 3
    assert (tmp_path / "demo.pgn").read_text().count("[Event ") == 48


class _ScriptedScheduler(Scheduler):
    """A scheduler without engines: every job 'ends' at once, White winning even indices.

    Shows that the tournament needs nothing from a scheduler but its events, and records
    which jobs it was given."""

    def __init__(self, replay_first: bool = False) -> None:
        self.jobs: list[GameJob] = []
        self.replay_first = replay_first
        self.stopped = False

    def submit(self, jobs: Iterable[GameJob]) -> None:
        self._source = iter(jobs)

    def stop(self, hard: bool = False) -> None:
        self.stopped = True

    async def events(self) -> AsyncGenerator[SchedulerEvent, None]:
        while not self.stopped and (job := next(self._source, None)) is not None:
            self.jobs.append(job)
            yield JobStarted(job, 0)
            now = datetime.now(UTC)
            replay = self.replay_first and len(self.jobs) == 1
            record = GameRecord(
                white=job.white.name, black=job.black.name, spec=job.spec,
                moves=(MoveRecord("e4", uci="e2e4", time=0.25, depth=3, score_cp=20),),
                result="*" if replay else ("1-0" if job.index % 2 == 0 else "1/2-1/2"),
                termination=GameTermination.ERROR if replay else GameTermination.ADJUDICATION,
                reason="scripted", started_at=now, ended_at=now, final_fen=job.spec.start_fen
                or "", replay=replay)
            yield JobFinished(job, record, 0.0)


def test_the_tournament_stores_what_any_scheduler_reports_and_resumes(tmp_path, monkeypatch):
    """A tournament run through a scripted scheduler: games marked, stored with their moves
    and PGN, a replayed game not counted, a soft stop, then a resume that submits only the
    missing games."""
    monkeypatch.chdir(tmp_path)  # pgnout is taken from the working directory
    config = _config_text(tmp_path, rounds=2, extra='pgnout = "live.pgn"')
    cfg = parse_config(_table(config), source=str(config), base_dir=tmp_path)
    database = open_database(f"sqlite:///{tmp_path / 'r.db'}")
    try:
        import asyncio

        scripted = _ScriptedScheduler(replay_first=True)
        seen: list[object] = []
        first = Tournament(cfg, database, scheduler=scripted)

        def watch(event: object) -> None:
            seen.append(event)
            if sum(type(e).__name__ == "GameFinished" and not e.replay for e in seen) == 3:
                first.stop()

        outcome = asyncio.run(first.run(on_event=watch))
        assert (outcome.status.value, outcome.done, outcome.played_now) == ("interrupted", 3, 3)
        assert [job.index for job in scripted.jobs] == [0, 1, 2, 3]  # job 0 reported a replay
        assert [type(e).__name__ for e in seen].count("GameStarted") == 4
        assert any(getattr(e, "replay", False) for e in seen)
        second_scheduler = _ScriptedScheduler()
        second = Tournament(cfg, database, scheduler=second_scheduler)
        second.prepare()
        final = asyncio.run(second.run())
        assert final.status.value == "finished" and final.done == 8
        assert [job.index for job in second_scheduler.jobs] == [0, 4, 5, 6, 7]
        with database.session() as session:
            games = list(stream_games(session, GameFilter(tournament_id=final.tournament_id)))
        assert [(g.job_index, g.result) for g in games] == [
            (i, "1-0" if i % 2 == 0 else "1/2-1/2") for i in range(8)]
        assert all(g.termination is GameTermination.ADJUDICATION and g.plies == 1 for g in games)
        assert all(g.pgn is not None and '[Termination "adjudication"]' in g.pgn for g in games)
    finally:
        database.close()
    assert (tmp_path / "live.pgn").read_text().count("[Event ") == 8
