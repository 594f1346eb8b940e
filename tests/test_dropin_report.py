"""``-report`` (ours, issue 43): the drop-ins print the per-engine diagnostics after the
peer's last line, whose lines stay as they are without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

_ENGINES = {
    "cutechess": ["-engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", "arg=2",
                  "name=a", "proto=xboard",
                  "-engine", "cmd=python", "arg=-m", "arg=engine", "arg=--level", "arg=1",
                  "name=b", "proto=xboard", "-each", "tc=inf", "depth=1", "-games", "2"],
    "fastchess": ["-engine", "cmd=python", "args=-m engine --uci --level 2", "name=a",
                  "-engine", "cmd=python", "args=-m engine --uci --level 1", "name=b",
                  "-each", "depth=1", "-rounds", "1", "-games", "2"],
}


def _dropin(where: Path, peer: str, *extra: str) -> str:
    where.mkdir()
    done = subprocess.run([sys.executable, "-m", "runner", peer, *_ENGINES[peer], *extra],
                          cwd=where, env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("peer", ["cutechess",
                                  pytest.param("fastchess", marks=pytest.mark.slow)])
def test_report_adds_the_diagnostics_after_the_peer_s_unchanged_lines(tmp_path: Path,
                                                                      peer: str) -> None:
    plain = _dropin(tmp_path / "plain", peer)
    asked = _dropin(tmp_path / "asked", peer, "-report")
    peer_lines, _, tables = asked.partition("\nFaults per engine")
    assert tables, asked
    assert "Search per engine" in tables and "Near flag" in tables
    # The peer's own lines: the same words, but for wall-clock figures fastchess prints.
    if peer == "cutechess":
        assert peer_lines == plain
    else:
        assert [line.split()[:2] for line in peer_lines.splitlines()] == \
            [line.split()[:2] for line in plain.splitlines()]
