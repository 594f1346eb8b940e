"""The configuration's JSON form: config -> JSON -> config is the identity, for every field.

This JSON is what the store keeps with a tournament (and what `runner resume` reads back), so a
setting the round trip loses is a setting a resumed tournament silently changes.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.clock import TimeControl
from runner.config.check import ConfigError
from runner.config.model import (
    AdjudicationConfig,
    BookFormat,
    Castling960Style,
    ClusterConfig,
    DrawAdjudication,
    EngineSpec,
    OpeningOrder,
    OpeningsConfig,
    OrderStyle,
    PlayOrder,
    Protocol,
    ResignAdjudication,
    RestartPolicy,
    SprtConfig,
    TablebaseResults,
    TournamentConfig,
    TournamentFormat,
    is_legacy_json,
)
from runner.config.parse import load_config, parse_config
from runner.config.recipes import BuildOrder, Recipe
from runner.config.timecontrol import WrittenTimeControl
from runner.protocol.engine import CecpDialogue
from runner.types import Variant

CONFIGS = REPO / "configs"

_text = st.text(max_size=12)
_paths = st.builds(Path, st.text(min_size=1, max_size=24))
_numbers = st.floats(allow_nan=False, allow_infinity=False)
_option_values = st.one_of(st.text(max_size=8), st.integers(), _numbers, st.booleans())
_pairs = st.lists(st.tuples(_text, _text), max_size=3).map(tuple)
_argv = st.lists(_text, min_size=1, max_size=4).map(tuple)
# A time control is parsed when the configuration is built, so it is drawn from the spellings
# users write (each must come back as written, not as the parsed value's canonical text).
_time_controls = st.sampled_from([
    "40/60", "3+0.05", "0:10+0.1", "10+0.10", "60", "inf depth=1", "tc=inf nodes=500", "st=1",
    "st=0.2 depth=3 nodes=5000 timemargin=50", "tc=40/60+0.5 timemargin=50", "40/120:20/60",
    "40/1:00", "depth=8"])

# One strategy per field of each dataclass; `test_the_strategies_cover_every_field` keeps
# them complete when a field is added.
ENGINE_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "name": _text, "command": _argv, "written_command": _argv, "dir": st.none() | _paths,
    "protocol": st.sampled_from(Protocol), "tc": st.none() | _time_controls,
    "init_strings": st.lists(_text, max_size=3).map(tuple),
    "options": st.lists(st.tuples(_text, _option_values), max_size=5).map(tuple),
    "env": _pairs, "restart": st.sampled_from(RestartPolicy),
    "castling960": st.sampled_from(Castling960Style),
    "ponder": st.booleans(),
    "protocol_detect": st.booleans(),
    "options_submitted": st.booleans(),
    "stderr": st.none() | _paths,
    "timeout_scale": st.floats(0.2, 120.0),
    "white_pov": st.booleans(),
    "thread_options": st.none() | st.lists(_text, max_size=3).map(tuple),
    "memory_options": st.none() | st.lists(_text, max_size=3).map(tuple),
    "cecp_dialogue": st.sampled_from(CecpDialogue),
    "echo_lines": st.booleans(),
    "built_from": st.none() | st.builds(
        BuildOrder, recipe=st.builds(
            Recipe, name=_text, repository=_text, command=_argv, build=_argv, bench=_argv,
            bench_nodes=_text, build_timeout=st.floats(0.5, 900.0),
            bench_timeout=st.floats(0.5, 900.0), env=_pairs,
            engine=st.dictionaries(_text, _option_values, max_size=3), source=_text),
        commit=_text, side=st.sampled_from(["base", "dev"]),
        expected_nodes=st.none() | st.integers(1, 10**9), expected_on=_text),
}
OPENINGS_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "file": _paths, "format": st.sampled_from(BookFormat), "order": st.sampled_from(OpeningOrder),
    "seed": st.integers(), "plies": st.none() | st.integers(min_value=0),
    "start": st.integers(min_value=1),
}
DRAW_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "movenumber": st.integers(min_value=0), "movecount": st.integers(min_value=1),
    "score": st.integers(min_value=0),
}
RESIGN_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "movecount": st.integers(min_value=1), "score": st.integers(min_value=1),
    "twosided": st.booleans(),
}
ADJUDICATION_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "draw": st.none() | st.builds(DrawAdjudication, **DRAW_FIELDS),
    "resign": st.none() | st.builds(ResignAdjudication, **RESIGN_FIELDS),
    "maxmoves": st.none() | st.integers(min_value=1), "tb": st.just("none") | _text,
    "tablebases": st.lists(_paths, max_size=3).map(tuple), "tbpieces": st.none() | st.integers(3, 7),
    "tbignore50": st.booleans(), "tbadjudicate": st.sampled_from(TablebaseResults),
}
SPRT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "elo0": _numbers, "elo1": _numbers, "alpha": _numbers, "beta": _numbers,
    "model": st.sampled_from(["logistic", "normalized", "bayeselo"]),
    "maxgames": st.none() | st.integers(min_value=2),
}
TOURNAMENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "name": _text, "format": st.sampled_from(TournamentFormat),
    "engines": st.lists(st.builds(EngineSpec, **ENGINE_FIELDS), max_size=4).map(tuple),
    "tc": st.none() | _time_controls, "rounds": st.integers(min_value=1),
    "games": st.integers(min_value=1).map(lambda n: 2 * n),
    "openings": st.none() | st.builds(OpeningsConfig, **OPENINGS_FIELDS),
    "adjudication": st.builds(AdjudicationConfig, **ADJUDICATION_FIELDS),
    "concurrency": st.integers(min_value=1), "variant": st.sampled_from(Variant),
    "sprt": st.none() | st.builds(SprtConfig, **SPRT_FIELDS),
    "pgnout": st.none() | _paths, "database": st.none() | _text, "recover": st.booleans(),
    "affinity": st.booleans(), "source": _text,
    "cluster": st.none() | st.builds(ClusterConfig, workers=st.none() | st.integers(1, 64),
                                     address=st.none() | _text),
    "wait_ms": st.integers(min_value=0), "crash_stops": st.booleans(),
    "move_ceiling": st.none() | st.floats(0.05, 600.0),
    "sprt_trinomial": st.booleans(), "start_delay_ms": st.integers(0, 10**6),
    "order": st.none() | st.builds(
        PlayOrder, style=st.sampled_from(OrderStyle),
        tournament=st.sampled_from(["round-robin", "gauntlet", "pyramid"]),
        games=st.integers(1, 9), rounds=st.integers(1, 9), repeat=st.integers(1, 9),
        policy=st.sampled_from(["default", "encounter", "round"]), swap=st.booleans(),
        reverse=st.booleans(), seeds=st.integers(0, 9), srand=st.integers(0, 2**32 - 1)),
}
configs = st.builds(TournamentConfig, **TOURNAMENT_FIELDS)


def _through_text(config: TournamentConfig) -> TournamentConfig:
    """`config` written as standard JSON text and read back."""
    text = json.dumps(config.to_json(), allow_nan=False)
    return TournamentConfig.from_json(json.loads(text))


@pytest.mark.parametrize(("cls", "strategies"), [
    (EngineSpec, ENGINE_FIELDS), (OpeningsConfig, OPENINGS_FIELDS),
    (DrawAdjudication, DRAW_FIELDS), (ResignAdjudication, RESIGN_FIELDS),
    (AdjudicationConfig, ADJUDICATION_FIELDS), (SprtConfig, SPRT_FIELDS),
    (TournamentConfig, TOURNAMENT_FIELDS),
])
def test_the_strategies_cover_every_field(cls: type, strategies: dict[str, Any]) -> None:
    assert set(strategies) == {f.name for f in dataclasses.fields(cls)}


@settings(max_examples=300, deadline=None)
@given(configs)
def test_config_to_json_and_back_is_the_identity(config: TournamentConfig) -> None:
    back = _through_text(config)
    assert back == config
    assert repr(back) == repr(config)  # equal and of the same types: 1, 1.0 and True stay apart


@settings(max_examples=100, deadline=None)
@given(configs)
def test_the_fingerprint_survives_the_round_trip(config: TournamentConfig) -> None:
    assert _through_text(config).fingerprint() == config.fingerprint()


@functools.cache
def _pydantic_adapter() -> Any:
    """pydantic's converter of the configuration, built once."""
    from pydantic import TypeAdapter

    return TypeAdapter(TournamentConfig)


def _pydantic_json(config: TournamentConfig) -> Any:
    """The JSON data pydantic makes of `config` (the oracle of `to_json`)."""
    return _pydantic_adapter().dump_python(config, mode="json")


@settings(max_examples=300, deadline=None)
@given(configs)
def test_to_json_writes_what_pydantic_writes(config: TournamentConfig) -> None:
    # to_json is written out (runner match would import pydantic for it): the same keys in
    # the same order, the same values of the same JSON types.
    assert json.dumps(config.to_json()) == json.dumps(_pydantic_json(config))


def test_to_json_follows_the_declared_types_as_pydantic_does() -> None:
    # An integer in a float field is written as a float; option values keep their own type.
    engine = EngineSpec(name="e", command=("e",), written_command=("e",), dir=Path("d"),
                        options=(("b", True), ("i", 1), ("f", 2.5)))
    config = TournamentConfig(name="t", format=TournamentFormat.MATCH, engines=(engine,),
                              sprt=SprtConfig(elo0=0, elo1=5, alpha=1, beta=0.1, maxgames=10))
    data = config.to_json()
    assert json.dumps(data) == json.dumps(_pydantic_json(config))
    assert data["sprt"]["elo0"] == 0.0 and isinstance(data["sprt"]["elo0"], float)
    assert data["engines"][0]["options"] == [["b", True], ["i", 1], ["f", 2.5]]
    assert data["engines"][0]["dir"] == "d" and data["format"] == "match"


def test_a_time_control_is_parsed_once_and_kept_as_written() -> None:
    # The configuration holds the parsed value (the games read it and never parse again) and
    # stores and fingerprints the words it was written in: 0:10+0.1 stays 0:10+0.1.
    engine = EngineSpec(name="e", command=("e",), written_command=("e",), tc="st=1")
    config = TournamentConfig(name="t", format=TournamentFormat.MATCH, tc="0:10+0.1",
                              engines=(engine, dataclasses.replace(engine, name="f", tc=None)))
    assert isinstance(config.tc, WrittenTimeControl) and isinstance(engine.tc, WrittenTimeControl)
    assert config.tc.control == TimeControl.parse("10+0.1")
    assert config.time_control("f") is config.tc.control
    assert config.time_control("e") is engine.tc.control
    data = config.to_json()
    assert (data["tc"], data["engines"][0]["tc"]) == ("0:10+0.1", "st=1")
    assert type(data["tc"]) is str
    back = TournamentConfig.from_json(json.loads(json.dumps(data)))
    assert isinstance(back.tc, WrittenTimeControl) and back.tc.control == config.tc.control
    assert back.fingerprint() == config.fingerprint()
    with pytest.raises(ValueError, match="bad time period '40/x'"):
        dataclasses.replace(config, tc="40/x")
    with pytest.raises(ConfigError, match='tc = "40/x"'):
        TournamentConfig.from_json({**data, "tc": "40/x"})


def test_option_values_keep_their_type() -> None:
    engine = EngineSpec(name="e", command=("e",), written_command=("e",),
                        options=(("b", True), ("i", 1), ("f", 1.0), ("s", "1"), ("z", False)))
    config = TournamentConfig(name="t", format=TournamentFormat.MATCH, engines=(engine,))
    back = _through_text(config).engines[0].options
    assert [type(value) for _, value in back] == [bool, int, float, str, bool]


@pytest.mark.parametrize("name", ["demo.toml", "sprt-v2-vs-v1.toml"])
def test_the_shipped_configs_round_trip(name: str) -> None:
    config = load_config(CONFIGS / name)
    assert _through_text(config) == config


def test_fingerprints_of_the_shipped_configs_do_not_change() -> None:
    # Stored tournaments are matched by these: a change makes every stored run unresumable.
    assert load_config(CONFIGS / "demo.toml").fingerprint() == (
        "ea527d7358e5ff58b675b63fda745d1241e9b19da7731f18be015f8e8a297786")
    assert load_config(CONFIGS / "sprt-v2-vs-v1.toml").fingerprint() == (
        "836bc84995b570ea7c91e54b4e17c20648e1c60ebe99c234504929219f6e9985")


def test_the_json_keeps_both_commands_and_the_book_path() -> None:
    config = load_config(CONFIGS / "demo.toml")
    data = json.loads(json.dumps(config.to_json()))
    assert data["name"] == config.name and data["concurrency"] == 2
    assert [e["name"] for e in data["engines"]] == [e.name for e in config.engines]
    assert data["engines"][0]["command"][0] == sys.executable
    assert data["engines"][0]["written_command"][0] == "python"
    assert data["openings"]["file"] == str(config.openings.file)
    # The report reads these keys of the stored configuration.
    assert data["format"] == "gauntlet" and data["sprt"] is None


def _legacy_json(config: TournamentConfig) -> dict[str, Any]:
    """What runners before the JSON round trip stored: no env, no castling960."""
    data = config.game_defining()
    data.update(name=config.name, concurrency=config.concurrency, recover=config.recover,
                affinity=config.affinity, database=config.database, source=config.source,
                pgnout=None if config.pgnout is None else str(config.pgnout))
    for out, entry in zip(data["engines"], config.engines, strict=True):
        out.update(resolved_command=list(entry.command), restart=entry.restart.value,
                   dir=None if entry.dir is None else str(entry.dir))
    if config.openings is not None:
        data["openings"]["path"] = str(config.openings.file)
    return data


def test_a_config_stored_by_an_older_runner_is_read_with_defaults_for_what_it_lacks() -> None:
    config = load_config(CONFIGS / "sprt-v2-vs-v1.toml")
    engines = tuple(dataclasses.replace(e, env=(("X", "1"),), castling960=Castling960Style.KXR)
                    for e in config.engines)
    config = dataclasses.replace(config, engines=engines, affinity=True)
    stored = json.loads(json.dumps(_legacy_json(config)))
    assert is_legacy_json(stored) and not is_legacy_json(config.to_json())
    back = TournamentConfig.from_json(stored)
    expected = dataclasses.replace(config, engines=tuple(
        dataclasses.replace(e, env=(), castling960=Castling960Style.OO, protocol_detect=False)
        for e in engines))
    assert back == expected
    assert back.fingerprint() == config.fingerprint()


def test_unknown_keys_and_bad_values_are_config_errors_with_key_paths(tmp_path) -> None:
    config = parse_config({"tc": "1+0", "engines": [
        {"name": n, "command": ["python", "-m", "engine"]} for n in "ab"]}, base_dir=tmp_path)
    data = config.to_json()
    data["engines"][1]["hash_policy"] = "x"  # a newer runner's key is refused, not dropped
    data["engines"][0]["castling960"] = "sideways"
    with pytest.raises(ConfigError) as caught:
        TournamentConfig.from_json(data, where="tournament 3")
    keys = {problem.key for problem in caught.value.problems}
    assert {"engines[1].hash_policy", "engines[0].castling960"} <= keys
    assert all(problem.file == "tournament 3" for problem in caught.value.problems)


def test_the_command_line_starts_without_pydantic() -> None:
    # pydantic is imported when a configuration is converted, not when the CLI starts.
    code = ("import sys, runner.cli.app, runner.config.parse, runner.tournament.run; "
            "print('pydantic' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


def test_a_config_and_its_stored_json_have_one_fingerprint() -> None:
    # The fingerprint is a projection of to_json: a configuration built in code with an
    # integer in a float field hashes as the row the store reads back (0.0, not 0).
    config = load_config(CONFIGS / "sprt-v2-vs-v1.toml")
    built = dataclasses.replace(config, sprt=SprtConfig(elo0=0, elo1=5), move_ceiling=3)
    back = TournamentConfig.from_json(json.loads(json.dumps(built.to_json())))
    assert back.fingerprint() == built.fingerprint()
    assert built.game_defining()["sprt"]["elo0"] == 0.0 and built.game_defining()["move_ceiling"] == 3.0
