"""``runner serve`` as users start it: its checks before listening, and a clean stop with
clients still connected (uvicorn waits for open connections; event streams must end)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn", reason="the service extra (uvicorn) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

from typer.testing import CliRunner  # noqa: E402

from runner.cli.app import app  # noqa: E402
from tests.conftest import EVENT_TIMEOUT  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def test_a_bad_engines_file_is_named_before_anything_starts(tmp_path: Path) -> None:
    bad = tmp_path / "engines.toml"
    bad.write_text("[[engines]]\nname = 3\n")
    result = CliRunner().invoke(app, ["serve", "--engines", str(bad),
                                      "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 2
    assert str(bad) in result.output and "name" in result.output
    missing = CliRunner().invoke(app, ["serve", "--engines", str(tmp_path / "none.toml")])
    assert missing.exit_code == 2 and "none.toml" in missing.output


def test_outside_a_checkout_it_says_how_to_give_the_engines_file(tmp_path: Path) -> None:
    # Issue 31: an installed wheel has no configs/engines.toml; the error was
    # 'configs/engines.toml = "": engines file not found or not a file'.
    env = {key: value for key, value in os.environ.items() if key != "RUNNER_ENGINES"}
    done = subprocess.run([sys.executable, "-m", "runner", "serve", "--db", str(tmp_path / "x.db")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    # One message (whose line a narrow non-terminal stderr may still wrap), naming both ways.
    message = " ".join(done.stderr.split())
    assert message.count("error:") == 1 and "Traceback" not in message
    assert "--engines FILE" in message and "RUNNER_ENGINES=FILE" in message
    assert not (tmp_path / "x.db").exists()  # refused before anything was made
    # The variable is read: with it the service gets past the check (a bad file is named).
    bad = tmp_path / "mine.toml"
    bad.write_text("[[engines]]\nname = 3\n")
    named = CliRunner().invoke(app, ["serve", "--db", str(tmp_path / "x.db")],
                               env={"RUNNER_ENGINES": str(bad)})
    assert named.exit_code == 2 and "mine.toml" in named.output


def test_workers_and_cluster_exclude_each_other(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["serve", "--workers", "2", "--cluster", "tcp://x:1",
                                      "--db", str(tmp_path / "x.db")])
    assert result.exit_code == 2 and "exclude" in result.output


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.timeout(90)
# CI time: the fast run keeps SIGTERM; Ctrl-C twice is slow.
@pytest.mark.parametrize("signals", [(signal.SIGTERM,),
                                     pytest.param((signal.SIGINT, signal.SIGINT),
                                                  marks=pytest.mark.slow)],
                         ids=["sigterm", "ctrl-c-twice"])
def test_a_stop_with_an_event_stream_open_is_clean(tmp_path: Path, signals: tuple[int, ...],
                                                   ) -> None:
    """One SIGTERM, or Ctrl-C twice (uvicorn would skip the app's shutdown on the second)."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "RUNNER_TOKEN": "tok"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port),
         "--db", str(tmp_path / "s.db"), "--engines", str(REPO / "configs" / "engines.toml")],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", timeout=1)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline
                time.sleep(0.01)
        text = ('name = "t"\nengines = ["bundled", "bundled-v1"]\ntc = "10+0.1"\n'
                'rounds = 5\nconcurrency = 1\n')
        created = httpx.post(f"{base}/api/tournaments", content=text, headers={
            "Authorization": "Bearer tok", "Content-Type": "application/toml"})
        assert created.status_code == 201
        tournament_id = created.json()["id"]
        with httpx.stream("GET", f"{base}/api/tournaments/{tournament_id}/events",
                          timeout=30) as stream:
            for line in stream.iter_lines():
                if line == "event: move":
                    break
            for number in signals:
                proc.send_signal(number)
                time.sleep(0.01)
            output, _ = proc.communicate(timeout=EVENT_TIMEOUT)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "Application shutdown complete" in output, output
    assert "Traceback" not in output, output
    listed = subprocess.run([sys.executable, "-m", "runner", "list", "--db", str(tmp_path / "s.db")],
                            capture_output=True, text=True, cwd=tmp_path)
    assert "interrupted" in listed.stdout, listed.stdout
    assert _running_in(tmp_path) == [], "a process (an engine?) outlived the service"


def _running_in(directory: Path) -> list[str]:
    """Live processes whose working directory is `directory` (the service and its engines)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if Path(os.readlink(f"/proc/{entry}/cwd")) == directory:
                state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(Path(f"/proc/{entry}/cmdline").read_text().replace("\0", " "))
        except OSError:
            continue
    return found
