"""``--events FILE`` (issue 43): a run's events as JSON lines for scripts, on every front door.

Each test plays a real short run (fairymax at depth 1, or stockfish at depth 1 for fastchess's
UCI-only command line) as a real process, then parses every line it wrote with the typed models
(`runner.report.stream.read_event_line`): the same models the service's stream sends.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from runner.report.stream import (
    EVENTS_VERSION,
    GameFinishedEvent,
    LineEvent,
    MoveEvent,
    RunFinishedEvent,
    StandingsEvent,
    read_event_line,
)
from runner.service import payloads

pytestmark = pytest.mark.timeout(180)

FAIRYMAX = shutil.which("fairymax") or shutil.which("fairymax", path="/usr/games")
STOCKFISH = shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
needs_fairymax = pytest.mark.skipif(FAIRYMAX is None, reason="fairymax is not installed")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), **extra}


def _fairymax(name: str) -> list[str]:
    return ["--engine", f"cmd={FAIRYMAX}", f"name={name}", "proto=cecp"]


def _parsed(text: str) -> list[LineEvent]:
    """Every line of an events file, each checked against its kind's model."""
    lines = text.splitlines(keepends=True)
    assert lines and all(line.endswith("\n") for line in lines), text[-200:]
    events = [read_event_line(line) for line in lines]
    assert all(e.version == EVENTS_VERSION for e in events)
    return events


def _types(events: list[LineEvent]) -> list[str]:
    return [e.type for e in events]


def test_the_lines_are_the_service_stream_s_own_models() -> None:
    """One serializer: every kind the service streams, but its snapshot, is a line kind, the
    very same class, and its data names its type and version."""
    for kind, model in payloads.event_kinds().items():
        if kind == "snapshot":
            continue
        assert model.kind() == kind
        assert model.model_fields["type"].default == kind
        assert model.model_fields["version"].default == EVENTS_VERSION
    assert payloads.GameFinishedEvent.__module__ == "runner.report.stream"


@needs_fairymax
def test_runner_run_writes_every_event_and_a_rerun_appends(tmp_path: Path) -> None:
    """``runner run --events FILE --events-moves``: starts, moves, ends, standings and the
    run's end with its exit status; the same command again appends its own lines."""
    config = tmp_path / "t.toml"
    config.write_text(f"""name = "events"\nformat = "match"\ngames = 2\nrounds = 1\n
[[engines]]\nname = "a"\ncommand = ["{FAIRYMAX}"]\nprotocol = "cecp"\ntc = "inf depth=1"\n
[[engines]]\nname = "b"\ncommand = ["{FAIRYMAX}"]\nprotocol = "cecp"\ntc = "inf depth=1"\n""",
                      encoding="utf-8")
    events = tmp_path / "events.jsonl"
    command = [sys.executable, "-m", "runner", "run", str(config), "--db",
               str(tmp_path / "r.db"), "--workers", "0", "--quiet", "--events", str(events),
               "--events-moves"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, env=_env())
    assert done.returncode == 0, done.stderr
    first = _parsed(events.read_text(encoding="utf-8"))
    kinds = _types(first)
    assert kinds.count("game_started") == 2 and kinds.count("game_finished") == 2
    assert kinds[-2:] == ["standings", "run_finished"]
    moves = [e for e in first if isinstance(e, MoveEvent)]
    finished = [e for e in first if isinstance(e, GameFinishedEvent)]
    assert sum(e.plies or 0 for e in finished) == len(moves)
    assert all(e.result in ("1-0", "0-1", "1/2-1/2") for e in finished)
    assert all(e.termination for e in finished)
    standings = [e for e in first if isinstance(e, StandingsEvent)]
    assert standings[-1].done_games == 2
    assert standings[-1].report.model_dump()["tournament"]["games_played"] == 2
    end = first[-1]
    assert isinstance(end, RunFinishedEvent)
    assert (end.exit_status, end.status, end.done_games, end.played_now) == (0, "finished", 2, 2)

    again = subprocess.run(command, capture_output=True, text=True, timeout=150, env=_env())
    assert again.returncode == 0, again.stderr
    both = _parsed(events.read_text(encoding="utf-8"))
    assert both[:len(first)] == first  # appended, not rewritten
    assert _types(both[len(first):]) == ["run_finished"]
    assert isinstance(both[-1], RunFinishedEvent) and both[-1].played_now == 0


@needs_fairymax
def test_a_script_reads_match_events_on_stdout_while_human_lines_go_to_stderr(
        tmp_path: Path) -> None:
    """``runner match --events -``: a consumer reading stdout as it comes gets JSON lines only,
    each as soon as it is written; the score lines and the summary are on stderr."""
    command = [sys.executable, "-m", "runner", "match", *_fairymax("a"), *_fairymax("b"),
               "--each", "tc=inf", "depth=1", "--games", "2", "--db", str(tmp_path / "r.db"),
               "--workers", "0", "--events", "-"]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=_env(), cwd=tmp_path) as process:
        assert process.stdout is not None and process.stderr is not None
        seen: list[LineEvent] = []
        for line in process.stdout:  # as a script tails it: one event a line
            seen.append(read_event_line(line))
        errors = process.stderr.read()
        assert process.wait(timeout=60) == 0, errors
    assert _types(seen)[0] == "game_started" and _types(seen)[-1] == "run_finished"
    assert _types(seen).count("game_finished") == 2
    assert "Score of a vs b:" in errors and "Tournament 1 finished" in errors


@needs_fairymax
def test_runner_cutechess_keeps_its_lines_and_writes_events(tmp_path: Path) -> None:
    """``runner-cutechess ... -events FILE``: cutechess-cli's own lines unchanged on stdout,
    the events in the file, the last one with the process's exit status."""
    events = tmp_path / "ev.jsonl"
    command = [sys.executable, "-m", "runner", "cutechess",
               "-engine", f"cmd={FAIRYMAX}", "name=a", "proto=xboard",
               "-engine", f"cmd={FAIRYMAX}", "name=b", "proto=xboard",
               "-each", "tc=inf", "depth=1", "-games", "2", "-events", str(events)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, cwd=tmp_path,
                          env=_env(RUNNER_DB=str(tmp_path / "r.db")))
    assert done.returncode == 0, done.stderr
    assert "Score of a vs b: " in done.stdout
    assert not any(line.startswith('{"type"') for line in done.stdout.splitlines())
    parsed = _parsed(events.read_text(encoding="utf-8"))
    assert _types(parsed).count("game_finished") == 2
    assert isinstance(parsed[-1], RunFinishedEvent) and parsed[-1].exit_status == 0


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_runner_fastchess_events_on_stdout_move_its_lines_to_stderr(tmp_path: Path) -> None:
    """``runner-fastchess ... -events - -events-moves``: stdout holds JSON lines only (moves
    included), fastchess's own lines go to stderr unchanged."""
    command = [sys.executable, "-m", "runner", "fastchess",
               "-engine", f"cmd={STOCKFISH}", "name=a", "-engine", f"cmd={STOCKFISH}", "name=b",
               "-each", "tc=1+0.01", "depth=1", "-rounds", "1", "-games", "2",
               "-events", "-", "-events-moves"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, cwd=tmp_path,
                          env=_env(RUNNER_DB=str(tmp_path / "r.db")))
    assert done.returncode == 0, done.stderr
    parsed = _parsed(done.stdout)
    kinds = _types(parsed)
    assert kinds.count("game_finished") == 2 and "move" in kinds
    assert kinds[-1] == "run_finished"
    assert "Finished match" in done.stderr


@pytest.mark.slow  # 20 s under load; the fast run's rerun test covers appending
@needs_fairymax
def test_a_killed_run_leaves_whole_lines_and_its_resume_appends(tmp_path: Path) -> None:
    """SIGKILL in the middle of a run: every line of the file is whole; the same command
    continues the tournament and appends, ending with its run_finished."""
    events = tmp_path / "ev.jsonl"
    command = [sys.executable, "-m", "runner", "match", *_fairymax("a"), *_fairymax("b"),
               "--each", "tc=inf", "depth=2", "--games", "4", "--db", str(tmp_path / "r.db"),
               "--workers", "0", "--quiet", "--events", str(events), "--events-moves"]
    env = _env(RUNNER_LEASE_TIMEOUT="2")
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while '"game_finished"' not in (events.read_text(encoding="utf-8")
                                        if events.exists() else ""):
            assert process.poll() is None, "the run ended before it could be killed"
            assert time.monotonic() < deadline, "no game finished"
            time.sleep(0.05)
    finally:
        # The engines die with it (the runner starts them with a parent-death signal).
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    killed = _parsed(events.read_text(encoding="utf-8"))
    assert "run_finished" not in _types(killed)
    done = subprocess.run(command, capture_output=True, text=True, timeout=150, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    both = _parsed(events.read_text(encoding="utf-8"))
    assert both[:len(killed)] == killed
    end = both[-1]
    assert isinstance(end, RunFinishedEvent) and end.status == "finished"
    assert end.done_games == 4
