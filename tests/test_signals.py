"""Signals to a real runner process: nothing left running, the tournament marked, the exit status.

Issue 21 items 8, 9 and 10. Each test starts ``python -m runner`` in its own session (so that
only it gets the signals sent here, as a terminal would send them to it), finds the engine
processes it started by a marker in their arguments, and checks that none survives.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import shutil
import signal
import sqlite3
import subprocess
import sys
import termios
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(90)


class Runner:
    """A ``python -m runner`` process with its output in files."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self.out = cwd / "stdout.txt"
        self.err = cwd / "stderr.txt"
        with open(self.out, "wb") as out, open(self.err, "wb") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "runner", *args], cwd=cwd,
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                                         start_new_session=True)

    def stderr(self) -> str:
        """What the runner wrote to stderr so far."""
        return self.err.read_text(errors="replace")

    def wait_for(self, text: str, seconds: float = 30.0) -> None:
        """Wait until `text` appears on the runner's stderr."""
        deadline = time.monotonic() + seconds
        while text not in self.stderr():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"no {text!r} on stderr:\n{self.stderr()}")
            time.sleep(0.05)

    def signal(self, number: int) -> None:
        """Send the runner a signal (as a terminal or a service manager would)."""
        self.proc.send_signal(number)

    def finish(self, seconds: float = 30.0) -> int:
        """The exit status once the runner has exited."""
        return self.proc.wait(seconds)


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes with `marker` as one of their arguments (the runner has
    ``arg=MARKER``, its engines ``MARKER``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1][0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if marker.encode() in cmdline.split(b"\0") and state != "Z":
            found.append(int(entry))
    return found


def children_of(pid: int) -> list[int]:
    """The live processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text().rsplit(") ", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if int(stat[1]) == pid and stat[0] != "Z":
            found.append(int(entry))
    return found


def gone(pids: list[int], seconds: float) -> list[int]:
    """The pids still alive after waiting up to `seconds` for them to go."""
    deadline = time.monotonic() + seconds
    while True:
        alive = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(") ", 1)[1][0]
            except (FileNotFoundError, ProcessLookupError):
                continue
            if state != "Z":
                alive.append(pid)
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.05)


@pytest.fixture()
def marker() -> Iterator[str]:
    """A seed given to the bundled engines (``--seed N``), found again in their command lines;
    whatever still carries it at the end is killed."""
    word = str(uuid.uuid4().int % 10**12 + 10**12)
    yield word
    for pid in processes_with(word):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def bundled(name: str, marker: str, *args: str) -> list[str]:
    """An --engine group running the bundled engine with ``--seed MARKER`` and `args`."""
    return ["--engine", "cmd=python", "arg=-m", "arg=engine", f"name={name}", "arg=--seed",
            f"arg={marker}", *(f"arg={a}" for a in args)]


def match(tmp_path: Path, *engines: list[str], tc: str, games: int = 2) -> list[str]:
    """``runner match`` words for `engines`, stored in a database of the test's own."""
    return ["match", *engines[0], *engines[1], "--each", f"tc={tc}", "--rounds", str(games // 2),
            "--games", "2", "--db", str(tmp_path / "runner.db"), "--name", "signals"]


def game_running(tmp_path: Path) -> bool:
    """Whether the run in `tmp_path` has stored a game as running (its games have begun)."""
    path = tmp_path / "runner.db"
    if not path.exists():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True,
                                                timeout=1.0)) as db:
            return db.execute("SELECT 1 FROM games WHERE status = 'running' "
                              "LIMIT 1").fetchone() is not None
    except sqlite3.Error:  # not created yet, or its schema not yet written
        return False


def stored_status(tmp_path: Path) -> str:
    """The status ``runner list`` shows for the tournament."""
    listed = subprocess.run([sys.executable, "-m", "runner", "list", "--db",
                             str(tmp_path / "runner.db")], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=True)
    return listed.stdout


# ------------------------------------------------------------------------------- item 8


@pytest.mark.slow  # CI time: about 16 s; the same stop for runner play stays fast below
def test_second_ctrl_c_while_engines_ignore_quit_does_not_leave_them_running(tmp_path, marker):
    """Ctrl-C once (running games finish), the game ends, the runner quits the engines, which
    ignore quit; Ctrl-C again meanwhile must not cut quit -> SIGTERM -> SIGKILL short."""
    runner = Runner(match(tmp_path, bundled("a", marker, "--level", "1", "--fault", "ignore-quit"),
                          bundled("b", marker, "--level", "1", "--fault", "ignore-quit"),
                          tc="5+0.05", games=4), tmp_path)
    runner.wait_for("Started game 1")
    engines = processes_with(marker)
    assert len(engines) == 2
    runner.signal(signal.SIGINT)
    runner.wait_for("Finished game 1")
    time.sleep(0.5)  # the runner is waiting for the engines to obey quit (they never do)
    assert processes_with(marker), "the engines were already gone"
    runner.signal(signal.SIGINT)
    assert runner.finish() == 130, runner.stderr()
    assert gone(engines, 1.0) == [], "engines that ignore quit survived the runner"
    assert "interrupted" in runner.stderr()


def test_second_ctrl_c_while_play_stops_its_engines_does_not_leave_them_running(tmp_path, marker):
    """``runner play`` alike: Ctrl-C aborts the game, a second one comes while the engines
    are being quit."""
    runner = Runner(["play", *bundled("a", marker, "--fault", "ignore-quit"),
                     *bundled("b", marker, "--fault", "ignore-quit"), "--each", "tc=60+0"],
                    tmp_path)
    deadline = time.monotonic() + 20
    while len(processes_with(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    engines = processes_with(marker)
    assert len(engines) == 2
    time.sleep(0.5)
    runner.signal(signal.SIGINT)
    time.sleep(0.5)  # the game is aborted, the engines are sent quit and ignore it
    assert processes_with(marker), "the engines were already gone"
    runner.signal(signal.SIGINT)
    assert runner.finish() == 130, runner.stderr()
    assert gone(engines, 1.0) == []
    assert "interrupted" in runner.stderr()
    assert runner.out.read_text() == ""  # no PGN of a game that was not played out


# ------------------------------------------------------------------------------- items 9, 10


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_sigterm_and_sighup_abort_the_run_like_ctrl_c_twice(tmp_path, marker, number):
    runner = Runner(match(tmp_path, bundled("a", marker), bundled("b", marker), tc="60+0"),
                    tmp_path)
    runner.wait_for("Started game 1")
    engines = processes_with(marker)
    assert len(engines) == 2
    runner.signal(number)
    assert runner.finish(20) == 128 + number, runner.stderr()
    assert gone(engines, 1.0) == []
    assert "interrupted" in stored_status(tmp_path)


def test_sigterm_to_play_stops_the_engines_and_exits_143(tmp_path, marker):
    runner = Runner(["play", *bundled("a", marker), *bundled("b", marker),
                     "--each", "tc=60+0"], tmp_path)
    deadline = time.monotonic() + 20
    while len(processes_with(marker)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    engines = processes_with(marker)
    assert len(engines) == 2
    runner.signal(signal.SIGTERM)
    assert runner.finish(20) == 128 + signal.SIGTERM, runner.stderr()
    assert gone(engines, 1.0) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_engines_die_with_a_runner_killed_by_sigkill(tmp_path, marker):
    """sjeng ignores the end of its input (it spins on it, burning CPU): only the death signal
    set in it stops it. It plays Black and waits for White's move, which never comes."""
    sjeng = shutil.which("sjeng") or shutil.which("sjeng", path="/usr/games")
    if sjeng is None:
        pytest.skip("sjeng is not installed (apt-get install sjeng)")
    runner = Runner(match(tmp_path, bundled("a", marker, "--fault", "hang@1"),
                          ["--engine", f"cmd={sjeng}", "name=sjeng"], tc="60+0"), tmp_path)
    runner.wait_for("Started game 1")
    engines = children_of(runner.proc.pid)
    assert len(engines) == 2, engines
    time.sleep(0.3)  # sjeng has read its new game and waits for a move
    runner.signal(signal.SIGKILL)
    runner.finish()
    left = gone(engines, 3.0)
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert left == [], "an engine outlived the runner killed with SIGKILL"


def _controlling_terminal() -> None:
    """In the child: a session of its own, with the pty on its stdin as its terminal."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def test_closing_the_terminal_aborts_the_run_and_exits_129(tmp_path, marker):
    """The real SIGHUP: the runner's terminal goes away while the live view draws on it.
    The run is aborted and stored as interrupted, the engines stopped, and writing to the
    dead terminal is no reason for a traceback or another exit status."""
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "runner", *match(
            tmp_path, bundled("a", marker), bundled("b", marker), tc="60+0")],
            stdin=slave, stdout=slave, stderr=slave, cwd=tmp_path,
            preexec_fn=_controlling_terminal)
    finally:
        os.close(slave)
    os.set_blocking(master, False)
    try:
        deadline = time.monotonic() + 120  # generous: engines start slowly under load
        said = b""
        # Two engine processes alone may be the protocol detection's, before the run has
        # stored anything: the terminal closing then leaves nothing to mark interrupted.
        while not (len(processes_with(marker)) >= 2 and game_running(tmp_path)) \
                and time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                said = (said + os.read(master, 65536))[-4000:]  # keep the terminal drained
            time.sleep(0.05)
        engines = processes_with(marker)
        assert len(engines) == 2 and game_running(tmp_path), (
            proc.poll(), said.decode(errors="replace"))
        time.sleep(0.5)
    finally:
        os.close(master)  # the terminal is gone: the kernel sends SIGHUP to the runner
    assert proc.wait(120) == 128 + signal.SIGHUP
    # The runner has exited; its engines may still be going away on a loaded machine.
    assert gone(engines, 30.0) == []
    assert "interrupted" in stored_status(tmp_path)
