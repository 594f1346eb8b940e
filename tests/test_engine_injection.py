"""Engines hear only what the runner means to say (issue 26): no text from a configuration or a
submission becomes a protocol line of its own, options are those the engine declared (and of
a kind a submitter may set), and a position is never misstated to an engine.

Real engines over real pipes (Debian's gnuchess, hoichess, fairymax, stockfish); each test
skips when its engine is absent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, require_binary

from runner.clock import TimeControl
from runner.protocol.cecp import CecpEngine
from runner.protocol.cecp_commands import edit_loses_castling, option_command
from runner.protocol.engine import (
    EngineConfig,
    EngineOption,
    GameSetup,
    Side,
    UnsafeCommandError,
)
from runner.protocol.factory import make_engine
from runner.protocol.process import EngineProcess
from runner.protocol.uci import UciEngine

CONTROL_CHARACTERS = ["\n", "\r", "\x00", "\t", "\x1b", "\x7f", "\x85", "\x9b", "\u2028",
                      "\u2029"]


def _config(name: str, argv: tuple[str, ...], workdir: Path, **changes: object) -> EngineConfig:
    workdir.mkdir(exist_ok=True)
    values: dict[str, object] = {"name": name, "argv": argv, "working_dir": workdir,
                                 "quit_timeout": 2.0, "terminate_timeout": 1.0}
    values.update(changes)
    return EngineConfig(**values)  # type: ignore[arg-type]


def _gnuchess(tmp_path: Path, **changes: object) -> EngineConfig:
    gnuchess = require_binary("gnuchess")
    # gnuchess block-buffers its output on a pipe (configs/engines.toml): stdbuf, as there.
    stdbuf = require_binary("stdbuf")
    return _config("gnuchess", (stdbuf, "-oL", gnuchess, "-x"), tmp_path / "gnuchess",
                   **changes)


def _hoichess(tmp_path: Path, **changes: object) -> EngineConfig:
    return _config("hoichess", (require_binary("hoichess"),), tmp_path / "hoichess", **changes)


def _fairymax(tmp_path: Path, **changes: object) -> EngineConfig:
    return _config("fairymax", (require_binary("fairymax"),), tmp_path / "fairymax", **changes)


def _stockfish(tmp_path: Path, **changes: object) -> EngineConfig:
    return _config("stockfish", (require_binary("stockfish"),), tmp_path / "stockfish",
                   protocol="uci", **changes)


async def _settle(engine: object) -> None:
    """Give an engine a moment to act on anything it was sent, then make it quit."""
    await asyncio.sleep(0.5)
    await engine.quit()  # type: ignore[attr-defined]


# ----------------------------------------------------------------------------- the process layer


@pytest.mark.timeout(30)
@pytest.mark.parametrize("char", CONTROL_CHARACTERS, ids=lambda c: f"U+{ord(c):04X}")
def test_the_process_layer_refuses_a_line_with_a_control_character(char: str) -> None:
    """Nothing of a batch holding a bad line is written, by either write path."""

    async def scenario() -> list[str]:
        process = EngineProcess(["cat"], name="echo-engine")
        await process.start()
        try:
            with pytest.raises(UnsafeCommandError, match="echo-engine") as refused:
                await process.write_lines(["first", f"bad{char}line"])
            assert f"U+{ord(char):04X}" in str(refused.value)
            with pytest.raises(UnsafeCommandError, match="echo-engine"):
                process.write_nowait([f"x{char}y"])
            await process.write_lines(["after"])
            # cat echoes what it got: only the line written after the refusals.
            return [(await process.read_line()).text]
        finally:
            await process.stop(None, quit_timeout=0.1)

    assert asyncio.run(scenario()) == ["after"]


# ----------------------------------------------------------------------------- injection


@pytest.mark.timeout(60)
def test_an_option_name_with_line_breaks_makes_gnuchess_write_no_file(tmp_path: Path) -> None:
    """The issue's example: ``{"x\\npgnsave PATH\\nfoo": 1}`` made gnuchess save a game there."""
    target = tmp_path / "injected.pgn"
    config = _gnuchess(tmp_path, options={f"x\npgnsave {target}\nfoo": "1"})

    async def scenario() -> None:
        engine = CecpEngine(config)
        try:
            with pytest.raises(ValueError, match="gnuchess") as refused:
                await engine.start()
            assert "pgnsave" in str(refused.value)
        finally:
            await _settle(engine)

    asyncio.run(scenario())
    assert not target.exists()


@pytest.mark.timeout(60)
def test_an_opponent_name_with_a_line_break_makes_hoichess_write_no_file(
        tmp_path: Path) -> None:
    """The issue's example: an engine named ``"fm\\nsavegame PATH"`` made hoichess (which
    takes ``name``) save a game there."""
    target = tmp_path / "injected.game"

    async def scenario() -> None:
        engine = CecpEngine(_hoichess(tmp_path))
        try:
            await engine.start()
            assert engine.features.flag("name", False)
            setup = GameSetup(TimeControl.parse("40/60"), Side.WHITE,
                              opponent=f"fm\nsavegame {target}")
            with pytest.raises(UnsafeCommandError, match="hoichess") as refused:
                await engine.new_game(setup)
            assert "savegame" in str(refused.value)
        finally:
            await _settle(engine)

    asyncio.run(scenario())
    assert not target.exists()


# ----------------------------------------------------------------------------- declared options


@pytest.mark.timeout(60)
def test_an_option_hoichess_did_not_declare_is_refused_with_the_declared_names(
        tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        engine = CecpEngine(_hoichess(tmp_path, options={"Hash": "16"}))
        try:
            with pytest.raises(ValueError, match="engine hoichess: it declares no option "
                                                 "'Hash'") as refused:
                await engine.start()
            assert "'search_pvs_mode'" in str(refused.value)  # the declared names are listed
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await _settle(engine)

    sent = asyncio.run(scenario())
    assert not any(line.startswith("option") for line in sent)


@pytest.mark.timeout(60)
def test_a_declared_cecp_option_is_sent_checked_against_its_declaration(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        engine = CecpEngine(_hoichess(tmp_path, options={"search_pvs_mode": "0"}))
        try:
            await engine.start()
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    assert "option search_pvs_mode=0" in asyncio.run(scenario())


@pytest.mark.timeout(60)
def test_an_option_stockfish_did_not_declare_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        engine = UciEngine(_stockfish(tmp_path, options={"Contempt": "10"}))
        try:
            with pytest.raises(ValueError, match="engine stockfish: it declares no option "
                                                 "'Contempt'") as refused:
                await engine.start()
            assert "'Skill Level'" in str(refused.value)
        finally:
            await engine.quit()

    asyncio.run(scenario())


def test_cecp_option_commands_follow_the_declaration() -> None:
    spin = EngineOption("Depth", "spin", "3", 1, 9)
    assert option_command(spin, " 4 ") == "option Depth=4"
    with pytest.raises(ValueError, match="outside 1..9"):
        option_command(spin, "10")
    assert option_command(EngineOption("Resign", "check", "0"), "true") == "option Resign=1"
    assert option_command(EngineOption("Clear Hash", "button"), "") == "option Clear Hash"
    combo = EngineOption("Style", "combo", "solid", choices=("solid", "wild"))
    assert option_command(combo, "WILD") == "option Style=wild"
    with pytest.raises(ValueError, match="not one of"):
        option_command(combo, "calm")
    with pytest.raises(ValueError, match="'='"):
        option_command(EngineOption("a=b", "spin", "1", 0, 2), "1")


# ----------------------------------------------------------------------------- submitted types


@pytest.mark.timeout(60)
def test_a_submitted_string_option_is_refused_and_stockfish_writes_no_file(
        tmp_path: Path) -> None:
    """The issue's example: ``{"Debug Log File": 4242}`` made stockfish log to a file 4242."""
    config = _stockfish(tmp_path, options={"Debug Log File": "4242"}, options_submitted=True)

    async def scenario() -> list[str]:
        engine = make_engine(config)
        try:
            with pytest.raises(ValueError, match="'Debug Log File' is a string option"):
                await engine.start()
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await _settle(engine)

    sent = asyncio.run(scenario())
    assert not any(line.startswith("setoption") for line in sent)
    assert not (tmp_path / "stockfish" / "4242").exists()


@pytest.mark.timeout(60)
def test_the_same_option_from_the_trusted_configuration_is_sent(tmp_path: Path) -> None:
    """The CLI's user is trusted for types: a string option they set is sent."""
    config = _stockfish(tmp_path, options={"Debug Log File": "debug.log"})

    async def scenario() -> None:
        engine = make_engine(config)
        try:
            await engine.start()
            assert await engine.ping() is not None
        finally:
            await engine.quit()

    asyncio.run(scenario())
    assert (tmp_path / "stockfish" / "debug.log").exists()


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("options", "message"), [
    ({"Makruk rules": "Thai"}, "'Thai' is not one of its declared values"),
    ({"Resign Threshold": "5000"}, "outside its declared range 200..1200"),
    ({"Ini File": "/tmp/x.ini"}, "is a file option"),
    ({"Clear Hash": "1"}, "is a button option"),
])
def test_submitted_options_of_fairymax_are_held_to_their_declaration(
        tmp_path: Path, options: dict[str, str], message: str) -> None:
    config = _fairymax(tmp_path, options=options, options_submitted=True)

    async def scenario() -> list[str]:
        engine = CecpEngine(config)
        try:
            with pytest.raises(ValueError, match=f"engine fairymax: option .*{message}"):
                await engine.start()
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    assert not any(line.startswith("option") for line in asyncio.run(scenario()))


@pytest.mark.timeout(60)
def test_a_submitted_combo_value_of_the_declared_ones_is_sent(tmp_path: Path) -> None:
    config = _fairymax(tmp_path, options={"Makruk rules": "cambodian", "Resign": "1"},
                       options_submitted=True)

    async def scenario() -> list[str]:
        engine = CecpEngine(config)
        try:
            await engine.start()
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    sent = asyncio.run(scenario())
    assert "option Makruk rules=Cambodian" in sent and "option Resign=1" in sent


# ----------------------------------------------------------------------------- positions


CASTLING_LOST = "r3k2r/8/8/8/8/8/8/R3K2R w Kq - 0 1"


def test_edit_loses_castling_names_the_rights_edit_would_grant() -> None:
    assert edit_loses_castling(CASTLING_LOST) == "Qk"
    assert edit_loses_castling("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1") is None
    assert edit_loses_castling("r3k2r/8/8/8/8/8/8/R3K2R b - - 0 1") == "KQkq"
    assert edit_loses_castling("4k3/8/8/8/8/8/8/R4K1R w - - 0 1") is None  # king not at home
    assert edit_loses_castling("1r2k3/8/8/8/8/8/8/4K2R w K - 0 1") is None


@pytest.mark.timeout(60)
def test_fairymax_is_not_told_castling_rights_the_position_lost(tmp_path: Path) -> None:
    """fairymax has no setboard (it says setboard=0 and ignores the command): ``edit`` would
    give it back the rights, and it castled illegally and was forfeited. The game is refused
    before anything of the position is sent."""

    async def scenario() -> list[str]:
        engine = CecpEngine(_fairymax(tmp_path))
        try:
            await engine.start()
            assert not engine.features.flag("setboard", False)
            setup = GameSetup(TimeControl.parse("40/60"), Side.WHITE, start_fen=CASTLING_LOST)
            with pytest.raises(ValueError, match="castling rights Qk") as refused:
                await engine.new_game(setup)
            assert "fairymax" in str(refused.value) and "setboard" in str(refused.value)
            # The same pieces with every right kept are what edit says: that game is played.
            await engine.new_game(GameSetup(TimeControl.parse("40/60"), Side.WHITE,
                                            start_fen="r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"))
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    sent = asyncio.run(scenario())
    assert sent.count("edit") == 1


@pytest.mark.timeout(60)
def test_an_engine_with_setboard_gets_the_position_with_its_rights(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        engine = CecpEngine(_hoichess(tmp_path))
        try:
            await engine.start()
            await engine.new_game(GameSetup(TimeControl.parse("40/60"), Side.WHITE,
                                            start_fen=CASTLING_LOST))
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    assert f"setboard {CASTLING_LOST}" in asyncio.run(scenario())


# ----------------------------------------------------------------------------- the run


@pytest.mark.timeout(120)
def test_a_run_with_an_undeclared_option_stops_before_its_first_game(tmp_path: Path) -> None:
    """`runner run`: the refusal is the run's one-line reason, and no game is played."""
    hoichess = require_binary("hoichess")
    (tmp_path / "t.toml").write_text(
        'name = "t"\nformat = "match"\ntc = "40/60"\ngames = 2\n'
        f'[[engines]]\nname = "hoi"\ncommand = ["{hoichess}"]\n'
        'options = { "x\\npgnsave injected.pgn\\nfoo" = 1 }\n'
        '[[engines]]\nname = "bundled"\ncommand = ["python", "-m", "engine"]\n')
    done = subprocess.run([sys.executable, "-m", "runner", "run", "t.toml", "--db", "r.db"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=100,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    out = done.stdout + done.stderr
    assert done.returncode != 0, out
    assert "hoi" in out and "declares no option" in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "injected.pgn").exists()
    assert "1-0" not in done.stdout and "0-1" not in done.stdout and "1/2-1/2" not in done.stdout


def _polyglot_stockfish(tmp_path: Path, **changes: object) -> EngineConfig:
    """stockfish behind polyglot, as configs/engines.toml has it (stockfish-polyglot)."""
    polyglot, stockfish = require_binary("polyglot"), require_binary("stockfish")
    return _config("stockfish-polyglot", (polyglot, "-noini", "-ec", stockfish),
                   tmp_path / "polyglot", **changes)


@pytest.mark.timeout(60)
def test_polyglots_log_file_cannot_be_chosen_by_a_submitter(tmp_path: Path) -> None:
    """Seen: injected lines set polyglot's log file to a path of the submitter's choosing."""
    config = _polyglot_stockfish(tmp_path, options={"Polyglot Log": "1",
                                                    "Polyglot LogFile": "run.sh"},
                                 options_submitted=True)

    async def scenario() -> None:
        engine = CecpEngine(config)
        try:
            with pytest.raises(ValueError, match="'Polyglot LogFile' is a file option"):
                await engine.start()
        finally:
            await _settle(engine)

    asyncio.run(scenario())
    assert not (tmp_path / "polyglot" / "run.sh").exists()


@pytest.mark.timeout(60)
def test_memory_and_cores_stay_commands_of_their_own_beside_declared_options(
        tmp_path: Path) -> None:
    """CECP's ``memory`` and ``cores`` are commands, not options: the declared-option check
    leaves them alone (the bundled engine declares memory=1, smp=1 and a Hash option)."""
    config = _config("bundled", (sys.executable, "-m", "engine"), tmp_path / "bundled",
                     memory_mb=8, cores=1, options={"Hash": "8"}, options_submitted=True,
                     env={"PYTHONPATH": str(REPO)})

    async def scenario() -> list[str]:
        engine = CecpEngine(config)
        try:
            await engine.start()
            await engine.new_game(GameSetup(TimeControl.parse("40/60"), Side.WHITE))
            return [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    sent = asyncio.run(scenario())
    assert {"option Hash=8", "memory 8", "cores 1"} <= set(sent)
