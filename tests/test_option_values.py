"""Engine option values stay typed from the configuration to the protocol client (issue 37):
an int for a spin, a bool for a check, a str for a combo or a string; a value written as text
is read as the engine's declaration in one place (`declared_value`), and each client spells
the value in its own words (UCI ``true``/``false``, CECP ``1``/``0``). A submitter's value is
checked as it is sent; no control character is ever sent.

The tables need no process; the rest speaks to real engines (fairymax over CECP, stockfish
over UCI), skipping when one is absent.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest
from conftest import require_binary

from runner.clock import TimeControl
from runner.config.model import EngineSpec
from runner.protocol.cecp import CecpEngine
from runner.protocol.cecp_commands import option_command
from runner.protocol.engine import ClockState, EngineConfig, EngineOption, GameSetup, Side
from runner.protocol.options import declared_value, sent_value, spelt
from runner.protocol.uci import UciEngine
from runner.protocol.uci_parse import option_value
from runner.tournament.runtime import engine_config
from runner.types import OptionValue, Protocol

SPIN = EngineOption("Hash", "spin", "16", 1, 1024)
CHECK = EngineOption("Resign", "check", "false")
COMBO = EngineOption("Style", "combo", "Normal", choices=("Solid", "Normal"))
STRING = EngineOption("Book", "string", "")
BUTTON = EngineOption("Clear Hash", "button")


@pytest.mark.parametrize(("value", "uci", "cecp"), [
    (True, "true", "1"), (False, "false", "0"), (1, "1", "1"), (0, "0", "0"),
    (-3, "-3", "-3"), ("text", "text", "text"), (1.5, "1.5", "1.5"),
])
def test_each_protocol_spells_a_typed_value_in_its_own_words(
        value: OptionValue, uci: str, cecp: str) -> None:
    assert (spelt(value, Protocol.UCI), spelt(value, Protocol.CECP)) == (uci, cecp)


@pytest.mark.parametrize(("option", "written", "typed"), [
    (SPIN, 64, 64), (SPIN, "64", 64), (SPIN, " +8 ", 8),
    (CHECK, True, True), (CHECK, "true", True), (CHECK, "0", False), (CHECK, 1, True),
    (CHECK, "Off", False),
    (COMBO, "solid", "Solid"), (COMBO, "Normal", "Normal"),
    (STRING, "a b", "a b"), (STRING, 7, "7"),
    (BUTTON, "", None), (BUTTON, True, None),
])
def test_a_written_value_is_read_as_its_declaration(
        option: EngineOption, written: OptionValue, typed: OptionValue | None) -> None:
    """The one place text meets a declared type: the result has the declaration's type, and
    a typed value that fits comes back as it is (a bool is never taken for an int)."""
    for protocol in Protocol:
        got = declared_value(option, written, protocol)
        assert got == typed and type(got) is type(typed)
        if typed is not None:
            assert declared_value(option, typed, protocol) == typed


def test_each_client_spells_the_value_read_from_the_declaration() -> None:
    assert [option_value(o, v) for o, v in ((SPIN, "64"), (CHECK, 1), (CHECK, False),
                                            (COMBO, "SOLID"), (BUTTON, ""))] == \
        ["64", "true", "false", "Solid", None]
    assert [option_command(o, v) for o, v in ((SPIN, 64), (CHECK, "true"), (CHECK, False),
                                              (COMBO, "solid"), (BUTTON, True))] == \
        ["option Hash=64", "option Resign=1", "option Resign=0", "option Style=Solid",
         "option Clear Hash"]


@pytest.mark.parametrize(("option", "written", "message"), [
    (SPIN, True, "a spin: an integer, not 'true'"), (SPIN, 64.0, "an integer, not '64.0'"),
    (SPIN, 0, "0 is outside 1..1024"), (SPIN, "2000", "outside 1..1024"),
    (CHECK, 2, "a check: true or false"), (CHECK, "maybe", "a check"),
    (COMBO, "Wild", "not one of Solid, Normal"), (BUTTON, 7, "takes no value"),
    (STRING, "a\nquit", "U\\+000A"), (STRING, "a\x85b", "U\\+0085"),
    (COMBO, "Solid\x00", "control character"), (SPIN, "6\r4", "control character"),
])
def test_a_value_its_declaration_forbids_is_refused_naming_the_option(
        option: EngineOption, written: OptionValue, message: str) -> None:
    with pytest.raises(ValueError, match=f"option '{option.name}'.*{message}"):
        declared_value(option, written, Protocol.UCI)


@pytest.mark.parametrize(("option", "written", "message"), [
    (SPIN, "٨", "ASCII digits"), (SPIN, "1_0", "ASCII digits"), (SPIN, True, "ASCII digits"),
    (SPIN, 2000, "outside its declared range 1..1024"),
    (CHECK, "yes", "a check"), (STRING, "x", "is a string option"),
    (BUTTON, "", "is a button option"), (COMBO, "Wild", "not one of its declared values"),
])
def test_a_submitted_value_is_checked_as_written_and_as_sent(
        option: EngineOption, written: OptionValue, message: str) -> None:
    for protocol in Protocol:
        with pytest.raises(ValueError, match=f"engine e: option '{option.name}'.*{message}"):
            sent_value("e", option, written, protocol, submitted=True)
    # What a trusted configuration may write (Python's integers, a check's other words).
    assert sent_value("e", SPIN, "1_0", Protocol.UCI, submitted=False) == 10
    assert sent_value("e", CHECK, "yes", Protocol.CECP, submitted=False) is True


def test_the_configuration_hands_the_protocol_its_typed_values() -> None:
    spec = EngineSpec(name="e", command=("e",), written_command=("e",),
                      options=(("Hash", 64), ("Ponder", True), ("Style", "solid"),
                               ("Threads", "2"), ("memory", 32)))
    options = engine_config(spec).options
    assert [(k, v, type(v)) for k, v in options.items()] == [
        ("Hash", 64, int), ("Ponder", True, bool), ("Style", "solid", str),
        ("Threads", "2", str)]  # "2" becomes a number only against a declared spin


# ----------------------------------------------------------------------------- real engines


def _sent(engine: CecpEngine | UciEngine, since: int = 0) -> list[str]:
    return [e.text for e in list(engine.transcript)[since:] if e.direction == ">"]


@pytest.mark.timeout(60)
def test_fairymax_is_sent_typed_values_in_cecp_words_and_new_ones_between_games(
        tmp_path: Path) -> None:
    """A spin, a slider, a check, a combo and a string, typed or written as text; then, as
    the tuner does between games, only the values that changed (a check now True)."""
    config = EngineConfig("fairymax", (require_binary("fairymax"),), working_dir=tmp_path,
                          options={"Resign Threshold": 900, "Dummy Slider Example": "30",
                                   "Resign": False, "Makruk rules": "cambodian",
                                   "Dummy String Example": "many happy returns"})

    async def scenario() -> tuple[list[str], list[str], bool]:
        engine = CecpEngine(config)
        try:
            await engine.start()
            first = _sent(engine)
            mark = len(engine.transcript)
            changed = dict(config.options, **{"Resign": True, "Resign Threshold": 900})
            taken = await engine.change_options(dataclasses.replace(config, options=changed))
            await engine.ping()
            return first, _sent(engine, mark), taken
        finally:
            await engine.quit()

    first, later, taken = asyncio.run(scenario())
    assert [line for line in first if line.startswith("option ")] == [
        "option Resign Threshold=900", "option Dummy Slider Example=30", "option Resign=0",
        "option Makruk rules=Cambodian", "option Dummy String Example=many happy returns"]
    assert taken and [line for line in later if line.startswith("option ")] == ["option Resign=1"]


@pytest.mark.timeout(60)
def test_stockfish_is_sent_typed_values_in_uci_words(tmp_path: Path) -> None:
    """An int and a text spin, a bool check; stockfish shows it took the check (``wdl``)."""
    config = EngineConfig("stockfish", (require_binary("stockfish"),), working_dir=tmp_path,
                          protocol=Protocol.UCI,
                          options={"Hash": 8, "Skill Level": "07", "UCI_ShowWDL": True},
                          options_submitted=True)

    async def scenario() -> tuple[list[str], dict[str, str | None], list[str]]:
        engine = UciEngine(config)
        try:
            await engine.start()
            await engine.new_game(GameSetup(TimeControl.parse("depth=1"), Side.WHITE))
            await engine.play([], ClockState(), timeout=30)
            read = [e.text for e in engine.transcript if e.direction == "<"]
            return _sent(engine), dict(engine.option_values), read
        finally:
            await engine.quit()

    sent, values, read = asyncio.run(scenario())
    assert [line for line in sent if line.startswith("setoption")][:3] == [
        "setoption name Hash value 8", "setoption name Skill Level value 7",
        "setoption name UCI_ShowWDL value true"]
    assert values == {"Hash": "8", "Skill Level": "7", "UCI_ShowWDL": "true"}
    assert any(" wdl " in line for line in read), read


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("options", "message"), [
    ({"Resign Threshold": True}, "a spin: an integer in ASCII digits, not True"),
    ({"Resign Threshold": 1300}, "1300 is outside its declared range 200..1200"),
    ({"Makruk rules": "Cambodian\n"}, "control character"),
])
def test_fairymax_is_sent_nothing_when_a_submitted_value_does_not_fit(
        tmp_path: Path, options: dict[str, OptionValue], message: str) -> None:
    config = EngineConfig("fairymax", (require_binary("fairymax"),), working_dir=tmp_path,
                          options=options, options_submitted=True)

    async def scenario() -> list[str]:
        engine = CecpEngine(config)
        try:
            with pytest.raises(ValueError, match=f"engine fairymax: option .*{message}"):
                await engine.start()
            return _sent(engine)
        finally:
            await engine.quit()

    assert not any(line.startswith("option") for line in asyncio.run(scenario()))
