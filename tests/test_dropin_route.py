"""Both drop-ins enter the configuration by one checked route (runner.dropin.contract.
checked_config): the checks every tournament file passes, held to the peer's bounds, so that
each drop-in still takes what its peer takes (fastchess's odd game totals, its SPRT error
rates below 1, its adjudication numbers) and refuses what the checks find with its own line."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.config.check import ConfigError
from runner.config.parse import parse_config
from runner.dropin import cutechess, fastchess
from runner.dropin.contract import DropinRun, PeerUsageError, checked_config

REPO = Path(__file__).resolve().parent.parent
FASTCHESS = REPO.parent / "shared" / "peers" / "fastchess"
FAIRYMAX = shutil.which("fairymax") or shutil.which("fairymax", path="/usr/games")
STOCKFISH = shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
needs_fairymax = pytest.mark.skipif(FAIRYMAX is None, reason="fairymax is not installed")
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")

TWO = ["-engine", f"cmd={STOCKFISH}", "name=a", "-engine", f"cmd={STOCKFISH}", "name=b",
       "-each", "tc=1+0.01"]


def _run(module: object, argv: list[str]) -> DropinRun:
    run = module.parse(argv)  # type: ignore[attr-defined]
    assert isinstance(run, DropinRun)
    return run


@needs_stockfish
@pytest.mark.skipif(not os.access(FASTCHESS, os.X_OK), reason=f"fastchess not at {FASTCHESS}")
def test_fastchess_odd_totals_are_taken_as_the_real_fastchess_takes_them(tmp_path: Path) -> None:
    words = [*TWO, "depth=1", "-rounds", "3", "-games", "1"]
    peer = subprocess.run([str(FASTCHESS), *words], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120, check=False)
    assert peer.returncode == 0, peer.stdout + peer.stderr
    config = _run(fastchess, words).config
    assert (config.rounds, config.games) == (3, 1)  # three games: odd, as fastchess plays them


@needs_stockfish
def test_fastchess_numbers_past_the_runner_bounds_pass_the_route_unchanged() -> None:
    config = _run(fastchess, [*TWO, "-sprt", "elo0=0", "elo1=5", "alpha=0.6", "beta=0.3",
                              "-draw", "movenumber=20", "movecount=0", "score=0",
                              "-resign", "movecount=0", "score=0", "-maxmoves", "0"]).config
    assert config.sprt is not None and (config.sprt.alpha, config.sprt.beta) == (0.6, 0.3)
    adjudication = config.adjudication
    assert adjudication.draw is not None and adjudication.draw.movecount == 0
    assert adjudication.resign is not None
    assert (adjudication.resign.movecount, adjudication.resign.score) == (0, 0)
    assert adjudication.maxmoves == 0
    # A tournament file is still held to the runner's own bounds.
    with pytest.raises(ConfigError, match="must be between 0 and 0.5"):
        parse_config({"format": "match", "tc": "1+0.01",
                      "engines": [{"name": n, "command": [FAIRYMAX]} for n in "ab"],
                      "sprt": {"elo0": 0, "elo1": 5, "alpha": 0.6}})


@needs_fairymax
@needs_stockfish
def test_a_problem_the_checks_find_is_refused_with_each_peers_line(tmp_path: Path) -> None:
    program = tmp_path / "engine"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o644)  # there, but not executable: fastchess's reader lets it through
    # fastchess itself looks for the program only when a game starts it, and fails there
    # ("Fatal; a engine startup failure", tests/test_dropin_startup.py against the real
    # one): runner-fastchess keeps the argv for that game rather than refusing it here.
    config = fastchess.parse(["-engine", f"cmd={program}", "name=a", *TWO[3:]])
    assert config is not None
    with pytest.raises(PeerUsageError) as refused:
        cutechess.parse(["-engine", f"cmd={program}", "proto=uci", "-engine", "cmd=fairymax",
                         "proto=xboard", "-each", "tc=1+0.01"])
    assert refused.value.exit_code == 1 and refused.value.stream == "stderr"
    assert str(refused.value).startswith("runner-cutechess: command line: engines[0].command")


@needs_fairymax
def test_checked_config_sets_what_a_table_has_no_key_for() -> None:
    table = {"name": "t", "format": "match", "tc": "1+0.01",
             "engines": [{"name": n, "command": ["fairymax"]} for n in "ab"]}
    config = checked_config(table, program="runner-x", games=1, rounds=3, wait_ms=5)
    assert (config.games, config.rounds, config.wait_ms) == (1, 3, 5)
    assert config.engines[0].command[0] == FAIRYMAX
