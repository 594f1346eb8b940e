"""Issue 31's errors and output: one line for what the user must fix (a missing extra, a
database kind the runner cannot use), and no line cut in two on a log or a pipe."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import EVENT_TIMEOUT, REPO, require_binary

# Imported first by every Python started with it on its path: the modules named in
# $BLOCK_MODULES fail to import, as on a machine where the extra was never installed.
_BLOCKER = """\
import os
import sys

for name in os.environ.get("BLOCK_MODULES", "").split(","):
    if name:
        sys.modules[name] = None
"""


def _runner(*args: str, cwd: Path, blocked: str = "",
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    blocker = cwd / "blocker"
    blocker.mkdir(exist_ok=True)
    (blocker / "sitecustomize.py").write_text(_BLOCKER)
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    env.update(PYTHONPATH=f"{blocker}{os.pathsep}{REPO}", BLOCK_MODULES=blocked)
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


def _one_line(run: subprocess.CompletedProcess[str]) -> str:
    """The single line of stderr of a run that stopped with exit 2."""
    assert run.returncode == 2, run.stderr
    lines = run.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    return lines[0]


def test_workers_without_the_cluster_extra_say_what_to_install(tmp_path: Path) -> None:
    run = _runner("run", str(REPO / "configs" / "demo.toml"), "--db", str(tmp_path / "r.db"),
                  "--workers", "1", "--quiet", cwd=tmp_path, blocked="distributed")
    assert "pip install 'cecp-runner[cluster]'" in _one_line(run)
    check = _runner("worker", "check", "--cluster", "tcp://127.0.0.1:1", cwd=tmp_path,
                    blocked="distributed")
    assert "pip install 'cecp-runner[cluster]'" in _one_line(check)


# CI time: the commands that only read open the database by one path; `list` stands for them
# in the fast run, the others are slow.
@pytest.mark.parametrize("command", [
    ["list"], pytest.param(["report"], marks=pytest.mark.slow),
    pytest.param(["export"], marks=pytest.mark.slow),
    pytest.param(["resume", "1"], marks=pytest.mark.slow),
    ["run", str(REPO / "configs" / "demo.toml")]])
def test_a_database_driver_that_is_not_installed_is_one_line(tmp_path: Path,
                                                             command: list[str]) -> None:
    blocked = "psycopg,psycopg2,MySQLdb"  # the same answer whatever this machine has
    postgres = _runner(*command, "--db", "postgresql+psycopg://u@localhost:1/db", cwd=tmp_path,
                       blocked=blocked)
    assert "needs the postgres extra" in _one_line(postgres)
    assert "pip install 'cecp-runner[postgres]'" in postgres.stderr
    for url in ("postgresql+psycopg2://u@localhost:1/db", "mysql://u@localhost:1/db"):
        other = _runner(*command, "--db", url, cwd=tmp_path, blocked=blocked)
        line = _one_line(other)
        assert "is not installed" in line and "postgresql+psycopg://" in line, line


def test_finished_game_lines_are_not_cut_on_a_pipe(tmp_path: Path) -> None:
    name = "an-engine-whose-name-alone-fills-most-of-an-eighty-column-line-" + "x" * 20
    engine = f"cmd={sys.executable} -m engine --level 1"
    run = _runner("match", "--engine", engine, f"name={name}", "proto=cecp",
                  "--engine", engine, "name=b", "proto=cecp", "--each", "tc=2+0.05",
                  "--rounds", "1", "--db", str(tmp_path / "r.db"), cwd=tmp_path,
                  timeout=4 * EVENT_TIMEOUT)
    assert run.returncode == 0, run.stderr
    finished = [line for line in run.stderr.splitlines() if line.startswith("Finished game")]
    assert len(finished) == 2, run.stderr
    assert all(name in line and line.endswith("}") for line in finished), run.stderr
    assert any(line.startswith(f"Score of {name} vs b: ") for line in run.stdout.splitlines())


def _match(tmp_path: Path, *words: str) -> subprocess.CompletedProcess[str]:
    engine = f"cmd={sys.executable} -m engine --level 1"
    return _runner("match", "--engine", engine, "name=a", "proto=cecp", "--engine", engine,
                   "name=b", "proto=cecp", "--each", "tc=2+0.05", "--rounds", "1",
                   "--db", str(tmp_path / "r.db"), *words, cwd=tmp_path,
                   timeout=4 * EVENT_TIMEOUT)


@pytest.mark.parametrize("where", ["missing", "sysfs", "empty"])
def test_a_pgnout_file_that_cannot_be_opened_stops_before_game_1(tmp_path: Path,
                                                                 where: str) -> None:
    """--pgnout in a directory that does not exist used to create it (export -o refuses the
    same path); a file the permissions allow but the file system refuses (root on /sys) used
    to stop the run after its first game."""
    if where == "sysfs" and not Path("/sys/kernel").is_dir():
        pytest.skip("no sysfs mounted at /sys")
    path = {"missing": str(tmp_path / "no" / "dir" / "out.pgn"), "sysfs": "/sys/runner-x.pgn",
            "empty": ""}[where]
    run = _match(tmp_path, "--pgnout", path)
    assert run.returncode == 2, run.stderr
    assert "Finished game" not in run.stderr and not (tmp_path / "r.db").exists()
    expected = {"missing": "cannot be created: directory " + str(tmp_path / "no" / "dir") + " does not exist",
                "sysfs": "cannot be created", "empty": "name is empty"}[where]
    assert f"the PGN output file {expected}" in run.stderr, run.stderr
    assert not (tmp_path / "no").exists()


def _read_only(directory: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``runner ARGS`` with `directory` read-only: a read-only bind mount in a mount
    namespace of its own for root (whom permissions do not stop), permissions otherwise."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "runner", *args]
    if os.geteuid() != 0:
        for path in directory.iterdir():
            path.chmod(0o444)
        directory.chmod(0o555)
        try:
            return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        finally:
            directory.chmod(0o755)
    mounted = ["unshare", "-m", "sh", "-c", 'mount -o bind,ro "$0" "$0" && exec "$@"',
               str(directory), *command]
    return subprocess.run(mounted, capture_output=True, text=True, timeout=60, env=env)


def test_a_database_on_a_read_only_file_system_is_read(tmp_path: Path) -> None:
    """Issue 31: list, report and export said "unable to open database file" on a database
    they could read but not write (SQLite's WAL wants to write beside it)."""
    if os.geteuid() == 0:
        probe = subprocess.run(["unshare", "-m", "sh", "-c", f'mount -o bind,ro "{tmp_path}" '
                                f'"{tmp_path}"'], capture_output=True, text=True)
        if probe.returncode != 0:
            pytest.skip(f"running as root and cannot make a read-only mount: {probe.stderr}")
    stored = tmp_path / "stored"
    stored.mkdir()
    played = _match(stored)
    assert played.returncode == 0, played.stderr
    db = str(stored / "r.db")
    listed = _read_only(stored, "list", "--db", db)
    assert listed.returncode == 0, listed.stderr
    assert "finished" in listed.stdout
    report = _read_only(stored, "report", "--db", db)
    assert report.returncode == 0 and "Elo" in report.stdout, report.stderr
    exported = _read_only(stored, "export", "--db", db)
    assert exported.returncode == 0 and exported.stdout.count("[Event ") == 2, exported.stderr
    assert not list(stored.glob("r.db-*"))  # nothing written beside it (a WAL left behind)


def test_running_a_finished_tournament_writes_its_deleted_pgn_file_again(tmp_path: Path) -> None:
    """Issue 31: `runner run` of a finished tournament stopped before looking at the PGN file
    (`runner resume` rewrote it); the README says every run checks the file."""
    config = tmp_path / "t.toml"
    config.write_text(f'name = "t"\nformat = "match"\ntc = "2+0.05"\nrounds = 1\n'
                      f'pgnout = "{tmp_path / "games.pgn"}"\n'
                      f'[[engines]]\nname = "a"\ncommand = ["{sys.executable}", "-m", "engine", '
                      f'"--level", "1"]\n'
                      f'[[engines]]\nname = "b"\ncommand = ["{sys.executable}", "-m", "engine", '
                      f'"--level", "1"]\n')
    db = ["--db", str(tmp_path / "r.db"), "--quiet"]
    first = _runner("run", str(config), *db, cwd=tmp_path, timeout=4 * EVENT_TIMEOUT)
    assert first.returncode == 0, first.stderr
    written = (tmp_path / "games.pgn").read_text()
    assert written.count("[Event ") == 2
    (tmp_path / "games.pgn").unlink()
    again = _runner("run", str(config), *db, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "already finished" in again.stderr and "Finished game" not in again.stderr
    assert (tmp_path / "games.pgn").read_text() == written
    assert "2 stored games written again" in again.stderr


def _help(*words: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "250"}
    done = subprocess.run([sys.executable, "-m", "runner", *words, "--help"], capture_output=True,
                          text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_help_shows_every_option_with_its_text() -> None:
    assert "the file's [cluster] address" in _help("worker", "check")  # was eaten as markup
    resume = _help("resume")
    assert "Games at once (overrides the stored setting)." in resume
    assert "No live view; summary lines only." in resume


def test_command_line_mistakes_point_to_the_right_words(tmp_path: Path) -> None:
    unknown = _runner("match", "--bogus", cwd=tmp_path)
    assert "--name, --event," in _one_line(unknown)  # an alias is accepted, so it is listed
    engine = f"cmd={sys.executable}"
    three = _runner("match", "--engine", engine, "--engine", engine, "--engine", engine,
                    "--each", "tc=1+0", cwd=tmp_path)
    assert three.returncode == 2
    assert "a match needs exactly 2 engines; for more, play a gauntlet or a round-robin" \
        in three.stderr


def test_engine_check_of_a_uci_engine_prints_its_id_name(tmp_path: Path) -> None:
    stockfish = require_binary("stockfish")
    done = _runner("engine", "check", "--proto", "uci", "--movetime", "0.1", "--", stockfish,
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("id name: ")]
    assert "Stockfish" in line


def test_a_failure_is_not_told_as_an_interrupt(tmp_path: Path) -> None:
    """An engine that cannot start stops the run; the notice used to speak of Ctrl-C
    ("interrupt again to abort them") although nobody interrupted anything."""
    dead = ["--engine", f"cmd={sys.executable}", "arg=-c", "arg=raise SystemExit(3)", "name=dead"]
    alive = ["--engine", f"cmd={sys.executable} -m engine --level 1", "name=alive"]
    done = _runner("match", *dead, *alive, "--each", "tc=2+0.05", "proto=cecp", "--rounds", "2",
                   "--db", str(tmp_path / "r.db"), cwd=tmp_path, timeout=4 * EVENT_TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert "stopping after this failure" in done.stderr, done.stderr
    assert "interrupt again" not in done.stderr


def test_after_a_failure_running_again_is_offered_only_once_the_cause_is_fixed(
        tmp_path: Path) -> None:
    """A run that failed used to end with "Run the same command again to play the missing
    games", which fails the same way until the cause is fixed."""
    dead = ["--engine", f"cmd={sys.executable}", "arg=-c", "arg=raise SystemExit(3)", "name=dead"]
    alive = ["--engine", f"cmd={sys.executable} -m engine --level 1", "name=alive"]
    done = _runner("match", *dead, *alive, "--each", "tc=2+0.05", "proto=cecp", "--rounds", "2",
                   "--db", str(tmp_path / "r.db"), cwd=tmp_path, timeout=4 * EVENT_TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert "Run the same command again" not in done.stderr
    assert "Once the cause above is fixed, the same command plays the missing games" \
        in " ".join(done.stderr.split()), done.stderr


def test_a_match_whose_engine_never_starts_prints_no_score(tmp_path: Path) -> None:
    """Issue 39: "Score of dead vs alive: 0 - 0 - 0" was printed on stdout although no game
    was played; the error says what happened, and stdout has no score."""
    dead = ["--engine", f"cmd={sys.executable}", "arg=-c", "arg=raise SystemExit(3)", "name=dead"]
    alive = ["--engine", f"cmd={sys.executable} -m engine --level 1", "name=alive"]
    done = _runner("match", *dead, *alive, "--each", "tc=2+0.05", "proto=cecp", "--rounds", "2",
                   "--db", str(tmp_path / "r.db"), cwd=tmp_path, timeout=4 * EVENT_TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert "engine dead failed to start" in done.stderr, done.stderr
    assert "Score of" not in done.stdout and "Elo difference" not in done.stdout, done.stdout


def test_one_match_shows_one_figure_in_its_lines_and_its_report(tmp_path: Path) -> None:
    """Issue 39: a 4-1-1 match printed "Elo difference: 190.8 +/- 619.3, LOS: 94.6 %" (from
    single games) and `runner report` "+190.5 +/- 337.1, LOS 98.3%" (from game pairs), with
    nothing telling them apart: the match's line now shows the report's figure and says so."""
    import re

    strong = ["--engine", f"cmd={sys.executable} -m engine --level 2 --seed 3", "name=strong"]
    weak = ["--engine", f"cmd={sys.executable} -m engine --level random --seed 5", "name=weak"]
    db = str(tmp_path / "r.db")
    done = _runner("match", *strong, *weak, "--each", "tc=inf", "depth=1", "proto=cecp",
                   "--rounds", "3", "--maxmoves", "40", "--db", db, "--quiet", cwd=tmp_path,
                   timeout=4 * EVENT_TIMEOUT)
    assert done.returncode == 0, done.stderr
    found = re.search(r"Elo difference: ([-\d.]+) \+/- ([\d.]+), LOS: ([\d.]+) %, "
                      r"DrawRatio: [\d.]+ %, from 3 game pairs", done.stdout)
    assert found, done.stdout
    elo, margin, los = (float(x) for x in found.groups())
    report = _runner("report", "--db", db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    text = " ".join(report.stdout.split())
    assert f"{elo:+.1f} +/- {margin:.1f}" in text, report.stdout
    assert f"{los:.1f}%" in text, report.stdout


def test_a_configuration_the_engine_refuses_exits_2_without_offering_a_rerun(
        tmp_path: Path) -> None:
    """An option the engine does not declare is a configuration refusal, found when the
    engine starts: exit 2 as the check before the run would, and no "Run ... again"."""
    stockfish = require_binary("stockfish")
    engine = ["--engine", f"cmd={stockfish}", "name=sf", "proto=uci", "option.NoSuchOption=1"]
    alive = ["--engine", f"cmd={sys.executable} -m engine --level 1", "name=alive", "proto=cecp"]
    done = _runner("match", *engine, *alive, "--each", "tc=2+0.05", "--rounds", "2",
                   "--db", str(tmp_path / "r.db"), cwd=tmp_path, timeout=4 * EVENT_TIMEOUT)
    assert done.returncode == 2, done.stderr
    text = " ".join(done.stderr.split())
    assert "error: game 1 cannot be played: engine sf: it declares no option 'NoSuchOption'" \
        in text, done.stderr
    assert "same command" not in text


def test_the_live_views_elapsed_time_runs_between_games(tmp_path: Path) -> None:
    """The live view (a terminal on stderr) shows the time elapsed, redrawn while a game is
    played: more distinct values than there are games, not one per finished game."""
    import fcntl
    import pty
    import re
    import select
    import struct
    import termios

    # Full strength uses its 0.3 s a move: two games of some 3 s each, at any load.
    engine = f"cmd={sys.executable} -m engine --level 8"
    command = [sys.executable, "-m", "runner", "match", "--engine", engine, "name=a",
               "proto=cecp", "--engine", engine, "name=b", "proto=cecp", "--each", "st=0.3",
               "--maxmoves", "5", "--rounds", "1", "--concurrency", "1",
               "--db", str(tmp_path / "r.db")]
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("COLUMNS", None)
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=slave, cwd=tmp_path, env=env)
    os.close(slave)
    shown = b""
    try:
        while True:  # until the runner exits and the terminal has nothing more to read
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the other end closed (Linux says EIO)
                    break
                if not data:
                    break
                shown += data
            elif process.poll() is not None:
                break
        assert process.wait(timeout=4 * EVENT_TIMEOUT) == 0
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
            process.wait()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown.decode("utf-8", "replace"))
    elapsed = set(re.findall(r"(\d+:\d\d:\d\d) elapsed", text))
    assert len(elapsed) >= 3, text[-2000:]  # two games, so more than the finished ones
