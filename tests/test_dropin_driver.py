"""The drop-in driver (issue 28) on real runner processes and the bundled engine over UCI, through
the test-only peer of tests/dropin_peer.py (the real peers' parsers and outputs have their
own tests):

- a run stores every game in the runner's database, where ``runner export`` finds them;
- the same command line run again after an interrupt plays only the missing games, and the
  output is first handed the stored games, with their moves;
- SIGINT or SIGTERM in the middle of a game ends the run: the output's final lines say
  interrupted, the exit status is 128 + the signal, no engine is left;
- SIGKILL loses no game the output had written;
- ``runner fastchess ARGS`` / ``runner cutechess ARGS`` hand every word over untouched.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import REPO

from runner.cluster.sizing import GAMES_PER_PROCESS

pytestmark = pytest.mark.timeout(240)

PEER = Path(__file__).resolve().parent / "dropin_peer.py"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "RUNNER_DB": ""}


def _engine_script(tmp_path: Path, level: str) -> str:
    """A wrapper starting the bundled engine over UCI that notes its pid in ``pids``."""
    script = tmp_path / f"engine-{level}.sh"
    script.write_text(f"#!/bin/sh\necho $$ >> {tmp_path / 'pids'}\n"
                      f"exec {sys.executable} -m engine --uci --level {level}\n")
    script.chmod(0o755)
    return f"engine={script}"


def _words(tmp_path: Path, *, rounds: int, tc: str) -> list[str]:
    return [f"db={tmp_path / 'r.db'}", f"games={tmp_path / 'g.txt'}", f"rounds={rounds}",
            f"tc={tc}", _engine_script(tmp_path, "1"), _engine_script(tmp_path, "greedy")]


class _Peer:
    """The test peer's run in the background, its stdout in a file."""

    def __init__(self, words: list[str], cwd: Path) -> None:
        self.out = cwd / f"stdout-{time.monotonic_ns()}.txt"
        with open(self.out, "wb") as out:
            self.proc = subprocess.Popen([sys.executable, str(PEER), *words], cwd=cwd,
                                         env=_env(), stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, start_new_session=True)

    def text(self) -> str:
        return self.out.read_text(errors="replace")

    def wait_for(self, text: str, seconds: float = 120.0) -> None:
        """Wait until `text` is printed (an event, never a time bound)."""
        deadline = time.monotonic() + seconds
        while text not in self.text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no {text!r}:\n{self.text()}")
            time.sleep(0.05)


def _run(words: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PEER), *words], cwd=cwd, env=_env(),
                          capture_output=True, text=True, timeout=200)


def _stored(db: Path) -> list[tuple[int, str]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select job_index, result from games where status = 'done' "
                            "order by job_index").fetchall()


def _alive(pids: list[int]) -> list[int]:
    """The processes of `pids` still there (a zombie counts as gone)."""
    alive = []
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        try:
            state = stat.read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            continue
        if state != "Z":
            alive.append(pid)
    return alive


def _pids(tmp_path: Path) -> list[int]:
    path = tmp_path / "pids"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def test_a_run_stores_every_game_where_runner_export_finds_it(tmp_path: Path) -> None:
    done = _run(_words(tmp_path, rounds=2, tc="inf depth=1"), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("Finished game") == 4
    assert "Ended interrupted=False done=4 of 4 status=finished" in done.stdout
    assert [index for index, _result in _stored(tmp_path / "r.db")] == [0, 1, 2, 3]
    exported = subprocess.run([sys.executable, "-m", "runner", "export", "--db",
                               str(tmp_path / "r.db")], cwd=tmp_path, env=_env(),
                              capture_output=True, text=True, timeout=100)
    assert exported.returncode == 0, exported.stderr
    assert exported.stdout.count("[Event ") == 4


def test_the_same_command_line_again_plays_only_the_missing_games(tmp_path: Path) -> None:
    words = _words(tmp_path, rounds=3, tc="2+0.05")
    first = _Peer(words, tmp_path)
    first.wait_for("Finished game 2")
    first.proc.send_signal(signal.SIGINT)
    assert first.proc.wait(60) == 128 + signal.SIGINT
    assert "Ended interrupted=True" in first.text()
    written = (tmp_path / "g.txt").read_text().splitlines()
    stored = _stored(tmp_path / "r.db")
    assert 2 <= len(stored) < 6 and len(written) == len(stored)

    again = _run(words, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    numbers = " ".join(str(index + 1) for index, _result in stored)
    assert f"Resumed {len(stored)} games: {numbers}" in again.stdout
    started = [int(line.split()[2]) for line in again.stdout.splitlines()
               if line.startswith("Started game")]
    assert sorted(started) == [n for n in range(1, 7) if n - 1 not in dict(stored)]
    # The stored games reach the output as they were played: results and every move.
    assert (tmp_path / "g.resumed").read_text().splitlines() == written
    assert [index for index, _result in _stored(tmp_path / "r.db")] == list(range(6))
    assert "Ended interrupted=False done=6 of 6 status=finished" in again.stdout


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_in_the_middle_ends_the_run_with_its_summary(tmp_path: Path,
                                                                     stop: signal.Signals) -> None:
    # A clock long enough that the first game is still being played when the signal comes.
    run = _Peer(_words(tmp_path, rounds=2, tc="120+2"), tmp_path)
    run.wait_for("Started game 1")
    while len(_pids(tmp_path)) < 2:  # both engines started
        assert run.proc.poll() is None, run.text()
        time.sleep(0.05)
    run.proc.send_signal(stop)
    assert run.proc.wait(60) == 128 + stop, run.text()
    assert "Ended interrupted=True done=0 of 4 status=interrupted" in run.text()
    assert "Finished game" not in run.text()  # the aborted game is not a result
    assert _alive(_pids(tmp_path)) == []
    assert _stored(tmp_path / "r.db") == []


def test_sigkill_loses_no_game_already_written(tmp_path: Path) -> None:
    run = _Peer(_words(tmp_path, rounds=3, tc="2+0.05"), tmp_path)
    run.wait_for("Finished game 2")
    run.proc.kill()
    run.proc.wait(30)
    written = (tmp_path / "g.txt").read_text().splitlines()
    assert len(written) >= 2 and all(line.split()[1] in ("1-0", "0-1", "1/2-1/2")
                                     for line in written)
    assert len(_stored(tmp_path / "r.db")) >= len(written) - 1  # the DB commits first


PROBE = (
    "import sys\n"
    "import runner.dropin.main as dropin\n"
    "def echo(peer, argv):\n"
    "    print(peer, repr(list(argv)))\n"
    "    return 7\n"
    "dropin.main = echo\n"
    "sys.argv = ['runner', *sys.argv[1:]]\n"
    "from runner.cli.app import main\n"
    "main()\n"
)


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_the_runner_subcommand_hands_every_word_to_the_peer(peer: str) -> None:
    words = ["-help", "--version", "-engine", "cmd=x", "name=a", "-each", "tc=1+0", "--help",
             "-h"]
    done = subprocess.run([sys.executable, "-c", PROBE, peer, *words], env=_env(),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 7, done.stderr
    assert done.stdout.strip() == f"{peer} {words!r}"


def test_the_subcommand_through_click_keeps_the_words_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Invoked as a Typer application (no `main` in front), the words still pass untouched."""
    from typer.testing import CliRunner

    import runner.dropin.main as dropin
    from runner.cli.app import app

    seen: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(dropin, "main", lambda peer, argv: seen.append((peer, argv)) or 3)
    words = ["-engine", "cmd=x", "-each", "tc=1+0", "-help", "--version", "-rounds", "2"]
    result = CliRunner().invoke(app, ["fastchess", *words])
    assert result.exit_code == 3, result.output
    assert seen == [("fastchess", words)]


def test_a_run_name_is_short_and_the_same_for_the_same_words() -> None:
    from runner.dropin.contract import NAME_LIMIT, run_name

    words = ["-engine", "cmd=" + "x" * 300, "-rounds", "2"]
    name = run_name("fastchess", words, "a vs b")
    assert name == run_name("fastchess", list(words), "a vs b")
    assert len(name) <= NAME_LIMIT and name.startswith("fastchess a vs b [")
    assert run_name("fastchess", [*words[:-1], "3"], "a vs b") != name
    assert len(run_name("cutechess", words, "e" * 500)) == NAME_LIMIT


def test_the_entry_module_and_the_contract_load_no_run_code() -> None:
    """A drop-in's ``--version`` or ``-help`` pays for the peer's parser, not for the database,
    the event loop or the config model (frameworks ask for the version on every start)."""
    heavy = ("sqlalchemy", "pydantic", "asyncio", "runner.tournament", "runner.store", "typer",
             "rich")
    code = ("import sys\nimport runner.dropin.main, runner.dropin.contract\n"
            f"print(sorted(n for n in {heavy!r} if n in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_a_concurrency_past_one_process_plays_on_local_workers(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="local workers need the cluster extra")
    words = [*_words(tmp_path, rounds=1, tc="inf depth=1"),
             f"concurrency={GAMES_PER_PROCESS * 2}"]
    # Counted as four cores (RUNNER_CPUS), so that two workers are due on any machine.
    done = subprocess.run([sys.executable, str(PEER), *words], cwd=tmp_path,
                          env={**_env(), "RUNNER_CPUS": "4"}, capture_output=True, text=True,
                          timeout=200)
    assert done.returncode == 0, done.stdout + done.stderr
    with sqlite3.connect(tmp_path / "r.db") as conn:
        workers = [row[0] for row in conn.execute("select worker from games order by job_index")]
    assert len(workers) == 2 and all(workers), workers  # each game names the worker it ran on


def test_a_stop_as_a_resumed_run_starts_plays_nothing_and_keeps_it_resumable(
        tmp_path: Path) -> None:
    """A signal while the stored games are read back (the tournament taken, its games not
    started) ends the run as interrupted, through the output, with nothing played."""
    words = _words(tmp_path, rounds=3, tc="2+0.05")
    first = _Peer(words, tmp_path)
    first.wait_for("Finished game 2")
    first.proc.send_signal(signal.SIGINT)
    assert first.proc.wait(60) == 128 + signal.SIGINT
    stored = _stored(tmp_path / "r.db")

    stopped = subprocess.run([sys.executable, str(PEER), *words], cwd=tmp_path,
                             env={**_env(), "DROPIN_PEER_SELFSTOP": "1"}, capture_output=True,
                             text=True, timeout=200)
    assert stopped.returncode == 128 + signal.SIGINT, stopped.stdout + stopped.stderr
    assert f"Ended interrupted=True done={len(stored)} of 6 status=interrupted" in stopped.stdout
    assert "Started game" not in stopped.stdout
    assert _stored(tmp_path / "r.db") == stored
    assert _alive(_pids(tmp_path)) == []

    again = _run(words, tmp_path)  # and the next run still continues it
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"Resumed {len(stored)} games" in again.stdout
    assert [index for index, _result in _stored(tmp_path / "r.db")] == list(range(6))


def test_an_output_that_ends_the_run_ends_it(tmp_path: Path) -> None:
    """A peer that stops at an engine's crash: its output sets ``stop_run`` and no further game
    is played; the run ends (not interrupted by a signal) with its final lines."""
    done = subprocess.run([sys.executable, str(PEER), *_words(tmp_path, rounds=3,
                                                               tc="inf depth=1")],
                          cwd=tmp_path, env={**_env(), "DROPIN_PEER_STOP_AFTER": "2"},
                          capture_output=True, text=True, timeout=200)
    assert "Ended interrupted=False done=2 of 6 status=interrupted" in done.stdout, done.stdout
    assert done.stdout.count("Started game") == 2
    assert len(_stored(tmp_path / "r.db")) == 2
