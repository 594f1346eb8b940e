"""The compiled hot modules and their Python source: the switch between them, and the same results.

`setup.py` compiles the modules of `runner.compiled.COMPILED` with mypyc when it can;
``RUNNER_PURE=1`` makes the package import the source instead, as does a checkout whose
sources are newer than their compiled modules. Each check runs in a fresh interpreter, the
only place where the choice is made. The agreement test compares the two on perft, seeded
random games (SAN, FEN, keys, outcome, claims) and engine lines; it skips when nothing is
compiled (a pure install, RUNNER_COMPILE=0, or no C compiler).
"""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner.compiled import COMPILED

ROOT = Path(__file__).resolve().parent.parent


def _extension(name: str, root: Path = ROOT) -> Path | None:
    base = root.joinpath(*name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if base.with_name(base.name + suffix).exists():
            return base.with_name(base.name + suffix)
    return None


COMPILED_HERE = _extension("runner.rules.board") is not None
needs_compiled = pytest.mark.skipif(not COMPILED_HERE, reason="no compiled modules in this checkout "
                                    "(RUNNER_COMPILE=0 install, or no C compiler)")

AGREEMENT = r'''
import random, runner.rules.board as b
from runner.rules import Board, perft
from runner.protocol import cecp_parse, uci_parse
print(b.__file__.rsplit(".", 1)[-1])
for fen, depth in [(None, 3), ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2),
                   ("8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 3)]:
    print(perft(Board() if fen is None else Board(fen), depth))
for seed in range(12):
    rng = random.Random(seed)
    board = Board()
    while not board.is_game_over(claim_draw=True) and len(board.move_stack) < 160:
        move = rng.choice(list(board.legal_moves))
        print(board.san_and_push(move), board.fen(), board.zobrist_hash(), board.is_repetition(2),
              board.can_claim_fifty_moves())
    print(board.outcome(claim_draw=True))
for line in ["move e2e4", "1. ... e7e5", "12 -35 104 1234567 e4 e5 Nf3", "resign", "1-0 {White mates}",
             "Illegal move (bad): e2e5", "feature myname=\"x y\" usermove=1 done=0", "tellusererror no"]:
    print(repr(cecp_parse.parse_engine_line(line)))
for line in ["info depth 12 seldepth 18 score cp -31 nodes 123456 nps 1000 pv e2e4 e7e5",
             "info depth 3 score mate -2 pv a1a2", "info string hello there"]:
    print(repr(uci_parse.parse_info(line)))
print(uci_parse.parse_bestmove("bestmove e2e4 ponder e7e5"))
'''


HOT = ("runner.game.play", "runner.game.core", "runner.game.relay", "runner.game.arbiter",
       "runner.game.adjudication", "runner.clock", "runner.protocol.cecp",
       "runner.protocol.uci", "runner.protocol.engine", "runner.protocol.reading",
       "runner.protocol.process", "runner.protocol.pipe", "runner.stats.tally")
"""Issue 30's hot modules beyond the rules core and the line parsers: compiled too."""

# The game loop, the clock, the clients and the tally where compiled code is stricter than
# Python: pydantic's conversions of the classes it reads, documented exceptions, engine faults.
AGREEMENT_LOOP = r'''
import asyncio, sys
import runner.game.play as p
from runner.clock import Clock, TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.play import play_game
from runner.game.record import GameSpec
from runner.protocol.cecp import CecpEngine
from runner.protocol.engine import EngineConfig
from runner.stats.tally import Tally
print(p.__file__.rsplit(".", 1)[-1])
tc = TimeControl.parse("40/60+0.5 timemargin=20")
adjudication = AdjudicationRules(draw_move_number=30, max_moves=80, tablebases=("/tb",))
spec = GameSpec(tc, TimeControl.parse("depth=3"), opening_moves=("e2e4",),
                adjudication=adjudication, tags={"Event": "x"}, white_pov=(True, False))
config = EngineConfig("a", ("a", "-x"), env={"A": "1"}, memory_mb=64, options={"Hash": "16"})
job = GameJob(3, config, EngineConfig("b", ("b",)), spec)
print(GameJob.from_json(job.to_json()) == job, job.to_json())
for bad in ['"depth":2.5', '"memory_mb":"x"']:
    try:
        GameJob.from_json(job.to_json().replace('"depth":3', bad).replace('"memory_mb":64', bad))
        print("accepted", bad)
    except ValueError as exc:
        print("ValueError", type(exc).__name__)
clock = Clock(tc)
print(clock.spend(1), clock.spend(0.25), clock.remaining, clock.moves_to_go, clock.increment)
tally = Tally(["a", "b"])
for result in ["1-0", "*", "2-0"]:
    try:
        print(tally.add("a", "b", result, 0))
    except Exception as exc:
        print(type(exc).__name__, exc)
crash = EngineConfig("crash", (sys.executable, "-c", "print('feature done=1', flush=True); import sys; "
                                "[sys.stdin.readline() for _ in range(9)]; sys.exit(3)"))
FLOOD = """import sys
print('feature ping=1 done=1', flush=True)
for line in sys.stdin:
    if line.startswith('ping'):
        print('pong' + line[4:], end='', flush=True)
    elif line.startswith(('go', 'usermove')):
        print('x' * 5000, flush=True)
"""
flood = EngineConfig("flood", (sys.executable, "-c", FLOOD), line_limit=1024)
async def game(white, black):
    engines = CecpEngine(white), CecpEngine(black)
    try:
        await asyncio.gather(*(e.start() for e in engines))
        record = await play_game(*engines, GameSpec(tc, tc))
        return record.termination, record.result, record.replay
    except Exception as exc:
        return type(exc).__name__
    finally:
        await asyncio.gather(*(e.quit() for e in engines), return_exceptions=True)
print(asyncio.run(game(crash, crash)))
print(asyncio.run(game(flood, flood)))
'''


def _python(code: str, *args: str, pure: bool = False, root: Path = ROOT,
            cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    env.pop("RUNNER_PURE", None)
    if pure:
        env["RUNNER_PURE"] = "1"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True,
                          timeout=600, env=env, cwd=cwd)


def test_version_says_whether_the_compiled_modules_run() -> None:
    main = "import sys; sys.argv = ['runner', '--version']; from runner.cli.app import main; main()"
    default, pure = _python(main), _python(main, pure=True)
    assert default.returncode == 0 and pure.returncode == 0, default.stderr + pure.stderr
    line, pure_line = default.stdout.splitlines()[1], pure.stdout.splitlines()[1]
    if COMPILED_HERE:
        assert line == f"compiled: yes (mypyc, {len(COMPILED)} modules)"
        assert pure_line == "compiled: no (RUNNER_PURE=1; compiled modules installed)"
    else:
        assert line == pure_line == "compiled: no (pure Python build)"


def test_pure_switch_imports_every_module_from_its_source() -> None:
    code = ("import importlib, sys\n"
            "for name in sys.argv[1:]:\n"
            "    print(name, importlib.import_module(name).__file__.endswith('.py'))\n")
    done = _python(code, *COMPILED, pure=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [word for name in COMPILED for word in (name, "True")]
    if COMPILED_HERE:
        compiled = _python(code, *COMPILED)
        assert compiled.returncode == 0, compiled.stderr
        assert "True" not in compiled.stdout.split()


@needs_compiled
def test_compiled_and_pure_modules_give_the_same_results() -> None:
    compiled, pure = _python(AGREEMENT), _python(AGREEMENT, pure=True)
    assert compiled.returncode == 0 and pure.returncode == 0, compiled.stderr + pure.stderr
    first, *results = compiled.stdout.splitlines()
    pure_first, *pure_results = pure.stdout.splitlines()
    assert (first, pure_first) == (importlib.machinery.EXTENSION_SUFFIXES[0].rsplit(".", 1)[-1], "py")
    assert results[:3] == ["8902", "2039", "2812"]
    assert len(results) > 500
    assert results == pure_results


@needs_compiled
def test_a_source_edited_after_the_build_runs_as_source_with_a_notice(tmp_path: Path) -> None:
    # A copy of the checkout (with its compiled modules), so the real one stays untouched.
    shutil.copytree(ROOT / "runner", tmp_path / "runner",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for library in ROOT.glob("*__mypyc*"):
        shutil.copy2(library, tmp_path)
    shutil.copy2(ROOT / "pyproject.toml", tmp_path)
    code = "import runner.rules.board as b, runner.compiled as c; print(b.__file__); print(c.describe())"
    fresh = _python(code, root=tmp_path, cwd=tmp_path)
    assert fresh.returncode == 0 and fresh.stderr == "", fresh.stderr
    assert not fresh.stdout.splitlines()[0].endswith(".py")
    edited = tmp_path / "runner" / "rules" / "san.py"
    built = _extension("runner.rules.san", tmp_path)
    assert built is not None
    stamp = built.stat().st_mtime + 5
    os.utime(edited, (stamp, stamp))
    stale = _python(code, root=tmp_path, cwd=tmp_path)
    assert stale.returncode == 0, stale.stderr
    assert "older than their sources" in stale.stderr
    path, line = stale.stdout.splitlines()
    assert path.endswith(".py")
    assert line == "compiled: no (sources edited since the build; compiled modules installed)"


def test_the_hot_modules_are_compiled() -> None:
    """The game loop, the clock, the protocol clients and the tally are in the compiled list,
    and a compiled checkout has each of them as an extension module."""
    assert set(HOT) <= set(COMPILED)
    if COMPILED_HERE:
        assert [name for name in HOT if _extension(name) is None] == []


@needs_compiled
def test_compiled_and_pure_game_loop_clock_and_tally_agree() -> None:
    """Compiled code checks the declared types Python lets pass: the same conversions,
    exceptions and game endings either way (a crash is a disconnect, a flood a protocol loss)."""
    compiled, pure = _python(AGREEMENT_LOOP), _python(AGREEMENT_LOOP, pure=True)
    assert compiled.returncode == 0 and pure.returncode == 0, compiled.stderr + pure.stderr
    first, *results = compiled.stdout.splitlines()
    pure_first, *pure_results = pure.stdout.splitlines()
    assert (first, pure_first) == (importlib.machinery.EXTENSION_SUFFIXES[0].rsplit(".", 1)[-1], "py")
    assert results[0].startswith("True ")
    assert results[1:3] == ["ValueError ValidationError"] * 2
    assert results[4:6] == ["True", "False"] and results[6].startswith("ValueError")
    assert "DISCONNECT" in results[7] and "DISCONNECT" in results[8]
    assert results == pure_results
