"""The bundled engine's line stamps (ENGINE_STAMPS): what benchmarks/concurrency.py times every
runner's relay with, from both ends of the pipes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO


def test_every_line_read_and_written_is_stamped_in_time_order(tmp_path: Path) -> None:
    engine = subprocess.Popen(
        [sys.executable, "-m", "engine", "--level", "random", "--uci", "--seed", "1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "ENGINE_STAMPS": str(tmp_path)})
    assert engine.stdin is not None and engine.stdout is not None
    engine.stdin.write("uci\nisready\nposition startpos moves e2e4\ngo wtime 1000 btime 1000\n")
    engine.stdin.flush()
    output = []
    while not (output and output[-1].startswith("bestmove ")):  # the engine moves at once
        output.append(engine.stdout.readline().rstrip("\n"))
    engine.stdin.write("quit\n")
    engine.stdin.close()
    assert engine.wait(timeout=60) == 0
    engine.stdout.close()
    (stamps,) = tmp_path.glob("stamps-*.txt")
    entries = [line.split(" ", 2) for line in stamps.read_text().splitlines()]
    read = [text for _, direction, text in entries if direction == "<"]
    written = [text for _, direction, text in entries if direction == ">"]
    assert read == ["uci", "isready", "position startpos moves e2e4", "go wtime 1000 btime 1000",
                    "quit"]
    assert written == output
    assert written[-1].startswith("bestmove ")
    go = next(int(t) for t, direction, text in entries if text.startswith("go "))
    best = next(int(t) for t, direction, text in entries if text.startswith("bestmove "))
    assert best > go  # one clock (monotonic, nanoseconds) for both directions


def test_without_the_variable_nothing_is_written(tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "ENGINE_STAMPS"}
    done = subprocess.run([sys.executable, "-m", "engine", "--uci"], input="uci\n",
                          capture_output=True, text=True, timeout=60, cwd=tmp_path,
                          env={**env, "PYTHONPATH": str(REPO)})
    assert done.returncode == 0 and "uciok" in done.stdout
    assert list(tmp_path.iterdir()) == []
