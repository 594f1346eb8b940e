"""The parts of the Dask scheduler that need no cluster: the record's JSON round trip, the
``[cluster]`` table, the worker's own engines, the report's per-worker faults, and that the
default run never imports Dask."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from runner.clock import TimeControl
from runner.cluster.worker import ENGINES_FILE_ENV, JobReply, MoveMessage, local_engines, resolve
from runner.config.check import ConfigError
from runner.config.model import ClusterConfig
from runner.config.parse import parse_config
from runner.game.live import LiveMove
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.game.slot import CannotSetUp, EngineFailed, Played
from runner.protocol.engine import EngineConfig, TranscriptEntry
from runner.report.build import build_report
from runner.report.render import render_html, render_text, report_json
from runner.rules import Result
from runner.store import Database, create_tournament, open_database, record_game
from runner.store.recording import EngineRowValues
from runner.store.store import ReportRows
from runner.tournament.pairing import match
from runner.types import MoveRecord
from tests.conftest import REPO

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _record(white: str, black: str, result: Result, termination: GameTermination, *,
            worker: str | None = None, reason: str = "") -> GameRecord:
    control = TimeControl.parse("10+0.1")
    return GameRecord(
        white=white, black=black, spec=GameSpec(control, control, tags={"Event": "t"}),
        moves=(MoveRecord("e4", score_cp=20, depth=3, time=0.25, uci="e2e4", nodes=99),
               MoveRecord("e5", book=True, uci="e7e5", comment="{odd} text")),
        result=result, termination=termination, reason=reason, started_at=T0,
        ended_at=T0 + timedelta(seconds=7.5), final_fen="8/8/8/8/8/8/8/K6k w - - 0 1",
        protocol_lines=((TranscriptEntry(1.5, ">", "new"),), (TranscriptEntry(2.0, "<", "move e5"),)),
        worker=worker)


def test_a_record_survives_json() -> None:
    """A worker's record arrives equal: moves, enums, times, transcripts, worker name."""
    record = _record("A", "B", Result.WHITE_WINS, GameTermination.CHECKMATE, worker="host/1")
    back = GameRecord.from_json(record.to_json())
    assert back == record
    assert back.transcripts == record.transcripts and back.duration == 7.5
    with pytest.raises(ValueError, match="termination"):
        GameRecord.from_json(record.to_json().replace('"checkmate"', '"bored"'))


def test_a_worker_s_reply_is_the_slot_s_typed_outcome_in_json() -> None:
    """Each outcome a slot returns crosses to the coordinator as itself (the kind included);
    an unknown kind is refused rather than read as some other outcome."""
    record = _record("A", "B", Result.DRAW, GameTermination.ADJUDICATION, worker="host/1")
    for outcome in (Played(record, 7.25), EngineFailed("B", "exited with code 3"),
                    CannotSetUp("engine B: it declares no option 'X'")):
        reply = JobReply(outcome, "host/1", "tcp://10.0.0.2:4000")
        assert JobReply.from_json(reply.to_json()) == reply
    with pytest.raises(ValueError, match="kind"):
        JobReply.from_json(reply.to_json().replace('"setup"', '"played"'))
    live = LiveMove(ply=3, move=MoveRecord("Nf3", uci="g1f3", time=0.1), fen="fen",
                    white_clock=9.5, black_clock=None)
    message = MoveMessage("game-t-1", live)
    assert MoveMessage.read(message.to_json()) == message
    assert MoveMessage.read({"key": "game-t-1"}) is None and MoveMessage.read("{}") is None


def _parse(cluster: dict[str, object]) -> object:
    table = {"name": "c", "format": "match", "tc": "1+0.1", "cluster": cluster,
             "engines": [{"name": "a", "command": [sys.executable]},
                         {"name": "b", "command": [sys.executable]}]}
    return parse_config(table, source="c.toml")


def test_the_cluster_table() -> None:
    """workers or address; problems name the file, the key and the value."""
    assert _parse({"workers": 3}).cluster == ClusterConfig(workers=3)  # type: ignore[attr-defined]
    config = _parse({"address": "tcp://10.0.0.5:8786"})
    assert config.cluster == ClusterConfig(address="tcp://10.0.0.5:8786")  # type: ignore[attr-defined]
    # Where the games run does not change which games they are.
    assert config.fingerprint() == _parse({"workers": 2}).fingerprint()  # type: ignore[attr-defined]
    for table, key, words in (({"workers": 0}, "cluster.workers", "at least 1"),
                              ({"workers": "two"}, "cluster.workers", "expected integer"),
                              ({"address": "nowhere"}, "cluster.address", "tcp://HOST:8786"),
                              ({"workers": 2, "address": "tcp://h:1"}, "cluster", "not both"),
                              ({"worker": 2}, "cluster.worker", "did you mean 'workers'")):
        with pytest.raises(ConfigError) as caught:
            _parse(table)
        text = str(caught.value)
        assert "c.toml" in text and key in text and words in text, text


def test_a_worker_s_own_engines_file_wins_by_name(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """RUNNER_WORKER_ENGINES: the worker's command for a named engine; others unchanged."""
    (tmp_path / "bin").mkdir()
    program = tmp_path / "bin" / "fm"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    own = tmp_path / "engines.toml"
    own.write_text('[[engines]]\nname = "fm"\ncommand = "bin/fm -x"\nenv = { FM = "1" }\n')
    monkeypatch.setenv(ENGINES_FILE_ENV, str(own))
    mine = local_engines()
    sent = EngineConfig(name="fm", argv=("/usr/games/fairymax",), options={"Hash": "16"})
    got = resolve(sent, mine)
    assert got.argv == (str(program), "-x") and got.env == {"FM": "1"}
    assert got.options == {"Hash": "16"}  # the tournament's settings stay
    other = EngineConfig(name="other", argv=("x",))
    assert resolve(other, mine) is other


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(f"sqlite:///{tmp_path / 'runner.db'}")
    try:
        yield database
    finally:
        database.close()


def test_faults_per_worker_flag_a_bad_worker(db: Database) -> None:
    """B crashes 4 times on w2 (> 3: flagged); w1's one time loss in 6 games of A is over a
    tenth but of fewer than 20 games (not flagged: fishtest's rule, the report's only one)."""
    schedule = match("A", "B", games=20)
    plan: list[tuple[str | None, GameTermination, str]] = (
        [("w1", GameTermination.CHECKMATE, "")] * 5
        + [("w1", GameTermination.TIME_FORFEIT, "A")]
        + [("w2", GameTermination.DISCONNECT, "B")] * 4
        + [("w2", GameTermination.CHECKMATE, "")] * 6
        + [(None, GameTermination.CHECKMATE, "")] * 4)
    with db.session() as session:
        tid = create_tournament(session, name="t", config={"name": "t", "format": "match"},
                                fingerprint="fp", engines=[EngineRowValues(e, [e]) for e in "AB"],
                                total_games=schedule.total()).id
    for job, (worker, termination, loser) in zip(schedule.jobs(), plan, strict=True):
        if loser:
            result = Result.BLACK_WINS if job.white == loser else Result.WHITE_WINS
        else:
            result = Result.WHITE_WINS
        record = _record(job.white, job.black, result, termination, worker=worker)
        with db.session() as session:
            record_game(session, tid, job, record)
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    rows = {(w.worker, w.engine): (w.games, w.crashes, w.time_losses, w.flagged)
            for w in report.worker_faults}
    assert rows == {("w1", "A"): (6, 0, 1, False), ("w1", "B"): (6, 0, 0, False),
                    ("w2", "A"): (10, 0, 0, False), ("w2", "B"): (10, 4, 0, True)}
    assert report_json(report)["worker_faults"][3] == {
        "worker": "w2", "engine": "B", "games": 10, "crashes": 4, "time_losses": 0,
        "flagged": True}


def test_the_residual_test_flags_the_worker_whose_pairs_differ(db: Database) -> None:
    """Three workers of 40 pairs each: on w1 and w2 the pairs are won, lost and even alike;
    on w3 A wins every pair. The report's worker table flags w3 by fishtest's residual test
    (red, the worst residual), and no one by crashes; its JSON carries the same."""
    schedule = match("A", "B", games=240)
    with db.session() as session:
        tid = create_tournament(session, name="t", config={"name": "t", "format": "match"},
                                fingerprint="fp", engines=[EngineRowValues(e, [e]) for e in "AB"],
                                total_games=schedule.total()).id
    jobs = list(schedule.jobs())
    for number, job in enumerate(jobs):
        worker = ("w1", "w2", "w3")[number // 80]
        kind = (number // 2) % 3 if worker != "w3" else 0  # a pair A wins, loses or splits
        a_wins = kind == 0 or (kind == 2 and number % 2 == 0)
        if kind == 1:
            a_wins = False
        result = Result.WHITE_WINS if (job.white == "A") == a_wins else Result.BLACK_WINS
        with db.session() as session:
            record_game(session, tid, job, _record(job.white, job.black, result,
                                                   GameTermination.CHECKMATE, worker=worker))
    with db.session() as session:
        report = build_report(ReportRows(session), tid)
    standings = {w.worker: w for w in report.workers}
    assert [standings[w].games for w in ("w1", "w2", "w3")] == [80, 80, 80]
    assert standings["w3"].pentanomial == (0, 0, 0, 0, 40)
    assert standings["w3"].flagged and standings["w3"].colour == "red"
    assert "residual" in standings["w3"].why
    assert not standings["w1"].flagged and not standings["w2"].flagged
    assert (standings["w3"].residual or 0) > (standings["w1"].residual or 0)
    assert report_json(report)["workers"][2]["flagged"] is True
    text = render_text(report, width=200)
    assert "Workers (fishtest's residual test)" in text and "0-0-0-0-40" in text
    assert text.count("BAD WORKER") == 1
    assert "BAD WORKER: the residual test" in render_html(report)


def test_the_default_run_does_not_import_dask(tmp_path: Path) -> None:
    """Without --workers, --cluster or [cluster], the scheduler is local and Dask stays out."""
    code = (
        "import sys\n"
        "from runner.config.parse import parse_config\n"
        "from runner.cluster import cluster_scheduler, make_scheduler\n"
        "from runner.tournament.scheduler import LocalScheduler\n"
        "import runner.cli.app, runner.tournament.run\n"
        "c = parse_config({'name': 'c', 'format': 'match', 'tc': '1+0.1', 'engines': [\n"
        "    {'name': 'a', 'command': [sys.executable]}, {'name': 'b', 'command': [sys.executable]}]})\n"
        "assert cluster_scheduler(c, 2) is None\n"
        "s = make_scheduler(c, 3)\n"
        "assert type(s) is LocalScheduler and s.concurrency == 3, s\n"
        "import dataclasses\n"
        "from runner.config.model import ClusterConfig\n"
        "filed = dataclasses.replace(c, cluster=ClusterConfig(address='tcp://10.0.0.9:8786'))\n"
        "assert type(make_scheduler(filed, 2, from_file=False)) is LocalScheduler\n"
        "assert 'distributed' not in sys.modules and 'dask' not in sys.modules\n"
        "print('clean')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.stdout.strip() == "clean", done.stderr
