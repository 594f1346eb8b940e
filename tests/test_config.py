"""Tournament configuration files: the shipped configs load; every kind of mistake is reported
with the file, the key path and the value, all of them at once."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from conftest import REPO

from runner.cli.vocabulary import read_engine
from runner.clock import TimeControl
from runner.config.check import ConfigError
from runner.config.engines import load_engines_file
from runner.config.model import (
    BookFormat,
    Castling960Style,
    OpeningOrder,
    Protocol,
    RestartPolicy,
    TablebaseResults,
    TournamentConfig,
    TournamentFormat,
)
from runner.config.parse import load_config, parse_config
from runner.config.programs import ProgramLookup
from runner.protocol.cecp import CecpEngine
from runner.tournament.pairing import pairing_for
from runner.tournament.runtime import adjudication_rules, engine_config
from runner.types import Variant

CONFIGS = REPO / "configs"

TOP = """
name = "t"
format = "match"
tc = "10+0.1"
"""
ENGINES = """
[[engines]]
name = "a"
command = ["python", "-m", "engine", "--level", "1"]
[[engines]]
name = "b"
command = "python -m engine --level 2"
"""
BASE = TOP + ENGINES


def _config(top: str = "", tables: str = "", *, tc: str = "10+0.1") -> str:
    """A config text: extra top-level keys first (TOML puts later keys in the last table)."""
    return TOP.replace("10+0.1", tc) + top + "\n" + ENGINES + tables


def _write(directory: Path, text: str, name: str = "t.toml") -> Path:
    path = directory / name
    path.write_text(text)
    return path


def _problems(directory: Path, text: str) -> list[str]:
    """The problem lines reported for a config text (which must fail)."""
    path = _write(directory, text)
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    error = caught.value
    assert isinstance(error, ValueError)
    assert all(problem.file == str(path) for problem in error.problems
               if not problem.file.endswith(".toml") or "engines file" not in problem.message)
    return [str(problem) for problem in error.problems]


def test_the_demo_config_loads_into_a_gauntlet_of_bundled_levels() -> None:
    config = load_config(CONFIGS / "demo.toml")
    assert config.format is TournamentFormat.GAUNTLET
    assert [e.name for e in config.engines] == ["level-2", "level-1", "greedy", "random"]
    for engine in config.engines:
        assert engine.command[:3] == (sys.executable, "-m", "engine")
        assert engine.written_command[0] == "python"
        assert engine.protocol is Protocol.CECP
    assert config.concurrency == 2
    assert config.openings is not None and config.openings.file.is_file()
    assert config.openings.format is BookFormat.EPD
    assert config.openings.order is OpeningOrder.RANDOM
    assert config.adjudication.draw is not None and config.adjudication.resign is not None
    assert isinstance(config.time_control("level-1"), TimeControl)
    assert pairing_for(config).total() == 3 * config.games * config.rounds


def test_the_sprt_config_is_a_match_with_bounds() -> None:
    config = load_config(CONFIGS / "sprt-v2-vs-v1.toml")
    assert config.format is TournamentFormat.MATCH
    assert config.sprt is not None and config.sprt.elo0 < config.sprt.elo1
    assert config.sprt.model == "normalized"
    assert pairing_for(config).total() == config.sprt.maxgames


def test_the_debian_gauntlet_names_engines_from_the_engines_file() -> None:
    data = (CONFIGS / "engines.toml").read_text()
    for name in ("fairymax", "gnuchess", "phalanx", "hoichess", "sjeng"):
        if not Path(f"/usr/games/{name}").exists():
            pytest.skip(f"/usr/games/{name} is not installed (apt-get install {name})")
    config = load_config(CONFIGS / "debian-gauntlet.toml")
    assert [e.name for e in config.engines][0] == "fairymax"
    assert config.engine("gnuchess").command[:3] == ("/usr/bin/stdbuf", "-oL",
                                                     "/usr/games/gnuchess")
    assert "/usr/games/fairymax" in data


def test_engines_file_reads_on_its_own() -> None:
    for name in ("fairymax", "gnuchess", "phalanx", "hoichess", "sjeng", "polyglot",
                 "stockfish", "ethereal-chess", "toga2", "glaurung"):
        if not Path(f"/usr/games/{name}").exists():
            pytest.skip(f"/usr/games/{name} is not installed (configs/engines.toml lists it)")
    entries = load_engines_file(CONFIGS / "engines.toml")
    by_name = {e.name: e for e in entries}
    assert by_name["stockfish"].protocol is Protocol.UCI
    assert by_name["stockfish"].options_dict == {"Threads": 1, "Hash": 16}


def test_an_inline_config_resolves_commands_and_defaults(tmp_path) -> None:
    config = load_config(_write(tmp_path, BASE))
    first, second = config.engines
    assert first.command == (sys.executable, "-m", "engine", "--level", "1")
    assert second.command == (sys.executable, "-m", "engine", "--level", "2")  # shlex split
    assert second.written_command == ("python", "-m", "engine", "--level", "2")
    assert (config.rounds, config.games, config.concurrency) == (1, 2, 1)
    assert config.variant is Variant.STANDARD and first.restart is RestartPolicy.AUTO
    assert config.openings is None and config.sprt is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.rounds = 5  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.name = "x"  # type: ignore[misc]


def test_a_command_through_a_symlink_keeps_the_link(tmp_path) -> None:
    """A virtualenv's bin/python is a symlink to the base interpreter; following it would run
    the engine without the venv's packages ("No module named engine")."""
    real = tmp_path / "real-engine"
    real.write_text("#!/bin/sh\n")
    real.chmod(0o755)
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    link = tmp_path / "venv" / "bin" / "python"
    link.symlink_to(real)
    text = BASE.replace('command = ["python", "-m", "engine", "--level", "1"]',
                        'command = ["venv/bin/python", "-m", "engine"]')
    config = load_config(_write(tmp_path, text))
    assert config.engines[0].command == (str(link), "-m", "engine")


def test_engines_by_name_with_overrides_and_dirs(tmp_path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    program = bindir / "myengine"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "lib").mkdir()
    _write(tmp_path / "lib", """
[[engines]]
name = "mine"
command = ["myengine", "--fast"]
dir = "../bin"
protocol = "xboard"
restart = "off"
castling960 = "kxr"
init_strings = ["memory 64"]
options = { Style = "solid", Depth = 3 }
env = { LANG = "C" }
""", name="engines.toml")
    config = load_config(_write(tmp_path, """
format = "gauntlet"
tc = "40/60"
engines_file = "lib/engines.toml"
engines = ["mine", { use = "mine", name = "mine-quick", tc = "10+0.1" },
           { name = "bundled", command = ["python", "-m", "engine"] }]
"""))
    mine, quick, bundled = config.engines
    assert mine.command == (str(program), "--fast")
    assert mine.dir == bindir.resolve()
    assert mine.protocol is Protocol.CECP and mine.restart is RestartPolicy.OFF
    assert mine.castling960 is Castling960Style.KXR and bundled.castling960 is Castling960Style.OO
    assert engine_config(mine).castling960 == "kxr"
    assert CecpEngine(engine_config(mine)).castling960 is Castling960Style.KXR
    assert CecpEngine(engine_config(bundled)).castling960 is Castling960Style.OO
    assert mine.init_strings == ("memory 64",) and mine.env == (("LANG", "C"),)
    assert mine.options_dict == {"Style": "solid", "Depth": 3}
    assert (quick.name, quick.tc, quick.command) == ("mine-quick", "10+0.1", mine.command)
    assert str(config.time_control(quick)) == str(TimeControl.parse("10+0.1"))
    assert config.time_control("mine").periods[0].moves == 40
    assert bundled.command[0] == sys.executable


def test_a_bad_castling960_style_is_reported(tmp_path) -> None:
    problems = _problems(tmp_path, _config("", """
[[engines]]
name = "odd"
command = ["python", "-m", "engine"]
castling960 = "e1g1"
"""))
    assert any('engines[2].castling960 = "e1g1"' in p and "kxr" in p for p in problems), problems
    with pytest.raises(ConfigError, match='castling960 = "e1g1": expected one of: oo, kxr'):
        read_engine(["--engine", "cmd=python", "castling960=e1g1"])
    assert read_engine(["--engine", "cmd=python", "castling960=KXR"]).castling960 is Castling960Style.KXR


def test_unknown_keys_are_reported_with_a_suggestion(tmp_path) -> None:
    problems = _problems(tmp_path, _config("concurency = 2", """
[openings]
fiel = "x.epd"
"""))
    assert any("concurency = 2: unknown key (did you mean 'concurrency'?)" in p
               for p in problems), problems
    assert any('openings.fiel = "x.epd": unknown key (did you mean \'file\'?)' in p
               for p in problems), problems
    assert any("openings.file: missing required key" in p for p in problems), problems


def test_wrong_types_are_reported_with_the_key_path_and_value(tmp_path) -> None:
    problems = _problems(tmp_path, _config('rounds = "ten"\nconcurrency = true', """
[[engines]]
name = 3
command = [1, 2]
options = { Hash = [1] }
"""))
    text = "\n".join(problems)
    assert 'rounds = "ten": expected integer, not string' in text
    assert "concurrency = true: expected integer, not boolean" in text
    assert "engines[2].name = 3: expected string, not integer" in text
    assert "engines[2].command = [1, 2]: expected an array of strings (argv) or a string" in text
    assert ("engines[2].options.Hash = [1]: an option value must be a string, number or "
            "boolean, not array") in text
    assert "a match needs exactly 2 engines" in text


def test_a_missing_engine_binary_is_reported(tmp_path) -> None:
    problems = _problems(tmp_path, BASE.replace('command = "python -m engine --level 2"',
                                                'command = "no-such-engine-xyz -x"'))
    assert any('engines[1].command = ["no-such-engine-xyz", "-x"]: engine program '
               "'no-such-engine-xyz' not found on PATH" in p for p in problems), problems
    problems = _problems(tmp_path, BASE.replace('command = "python -m engine --level 2"',
                                                'command = "./bin/engine"\ndir = "."'))
    assert any("engine program './bin/engine' not found at" in p for p in problems), problems
    problems = _problems(tmp_path, BASE.replace('command = "python -m engine --level 2"',
                                                'command = "x"\ndir = "nowhere"'))
    assert any('engines[1].dir = "nowhere": no such directory' in p for p in problems), problems


def test_a_program_looked_for_at_the_start_is_kept_as_written(tmp_path) -> None:
    """``ProgramLookup.AT_START`` (runner-fastchess: fastchess looks for a program only when
    the game starts it): a missing or empty program stays in the configuration as written,
    a found one is resolved as ever, and every other check still applies."""
    table = {"format": "round-robin", "tc": "1+0", "engines": [
        {"name": "gone", "command": ["no-such-engine-xyz", "-x"]},
        {"name": "blank", "command": [""]},
        {"name": "here", "command": ["python", "-m", "engine"]}]}
    with pytest.raises(ConfigError) as caught:
        parse_config(table, base_dir=tmp_path)
    assert "engine program 'no-such-engine-xyz' not found" in str(caught.value)
    assert 'engines[1].command = [""]: empty command' in str(caught.value)
    config = parse_config(table, base_dir=tmp_path, programs=ProgramLookup.AT_START)
    assert [e.command for e in config.engines] == [
        ("no-such-engine-xyz", "-x"), ("",), (sys.executable, "-m", "engine")]
    with pytest.raises(ConfigError, match='engines\\[0\\].dir = "nowhere": no such directory'):
        parse_config({**table, "engines": [{**table["engines"][0], "dir": "nowhere"},
                                           *table["engines"][1:]]},
                     base_dir=tmp_path, programs=ProgramLookup.AT_START)


def test_unreadable_openings_files_are_reported(tmp_path) -> None:
    (tmp_path / "empty.epd").write_text("")
    (tmp_path / "folder.epd").mkdir()
    (tmp_path / "book.xyz").write_text("x\n")
    cases = {
        "missing.epd": "openings file not found",
        "empty.epd": "openings file is empty",
        "folder.epd": "openings file is not a regular file",
        "book.xyz": "cannot tell the book format from the extension",
    }
    for name, message in cases.items():
        problems = _problems(tmp_path, BASE + f'[openings]\nfile = "{name}"\n')
        assert any(f'openings.file = "{name}": {message}' in p for p in problems), problems
    if os.geteuid() != 0:  # root reads anything
        locked = tmp_path / "locked.epd"
        locked.write_text("8/8/8/8/8/8/8/8 w - -\n")
        locked.chmod(0)
        problems = _problems(tmp_path, BASE + '[openings]\nfile = "locked.epd"\n')
        assert any("openings file cannot be read" in p for p in problems), problems


def test_values_out_of_range_are_reported(tmp_path) -> None:
    problems = _problems(tmp_path, _config('games = 3\nvariant = "crazyhouse"', """
[adjudication]
tb = "syzygy"
[adjudication.resign]
movecount = 0
[sprt]
elo0 = 5
elo1 = 0
alpha = 0.7
model = "bayes"
""", tc="10+x"))
    text = "\n".join(problems)
    assert 'tc = "10+x"' in text
    assert "games = 3: must be even" in text
    assert 'variant = "crazyhouse": expected one of: standard, fischerandom' in text
    assert 'adjudication.tb = "syzygy": name the Syzygy directories in adjudication.tablebases' in text
    assert "adjudication.resign.movecount = 0: must be at least 1" in text
    assert "sprt.elo1 = 0.0: must be greater than elo0 (5)" in text
    assert "sprt.alpha = 0.7: must be between 0 and 0.5" in text
    assert 'sprt.model = "bayes": expected one of: logistic, normalized, bayeselo' in text
    assert len(problems) >= 8  # every problem, not just the first


def test_tablebase_keys_become_the_game_loops_rules(tmp_path) -> None:
    """``[adjudication] tablebases/tbpieces/tbignore50/tbadjudicate``: directories relative
    to the file, fastchess's result choice as the loop's two switches, and the settings in
    the fingerprint (a config without tables keeps the fingerprint it had)."""
    tables = tmp_path / "tb"
    tables.mkdir()
    (tables / "KRvK.rtbw").write_bytes(b"")  # the check looks for a table's name only
    plain = load_config(_write(tmp_path, BASE, "plain.toml"))
    assert plain.adjudication.tablebases == ()
    assert "tablebases" not in plain.game_defining()["adjudication"]
    assert adjudication_rules(plain.adjudication).tablebases == ()
    config = load_config(_write(tmp_path, BASE + """
[adjudication]
tablebases = ["tb"]
tbpieces = 4
tbignore50 = true
tbadjudicate = "WIN_LOSS"
"""))
    adj = config.adjudication
    assert (adj.tablebases, adj.tbpieces, adj.tbignore50) == ((tables.resolve(),), 4, True)
    assert adj.tbadjudicate is TablebaseResults.WIN_LOSS
    rules = adjudication_rules(adj)
    assert (rules.tablebases, rules.tb_pieces, rules.tb_ignore_50) == ((str(tables.resolve()),), 4, True)
    assert (rules.tb_wins, rules.tb_draws) == (True, False)
    assert adjudication_rules(dataclasses.replace(
        adj, tbadjudicate=TablebaseResults.DRAW)).tb_wins is False
    assert config.fingerprint() != plain.fingerprint()
    assert TournamentConfig.from_json(config.to_json()) == config
    # cutechess-cli's form: one string of ':'-separated directories
    joined = load_config(_write(tmp_path, BASE + f'[adjudication]\ntablebases = "tb:{tables}"\n'))
    assert joined.adjudication.tablebases == (tables.resolve(), tables.resolve())


def test_bad_tablebase_keys_name_file_key_and_value(tmp_path) -> None:
    (tmp_path / "empty").mkdir()
    problems = _problems(tmp_path, BASE + """
[adjudication]
tablebases = ["missing", 3]
tbpieces = 2
tbignore50 = "yes"
tbadjudicate = "wins"
""")
    text = "\n".join(problems)
    assert f'{tmp_path / "t.toml"}: adjudication.tablebases = "missing": no such directory' in text
    assert "adjudication.tablebases = 3: expected a directory name" in text
    assert "adjudication.tbpieces = 2: must be at least 3" in text
    assert 'adjudication.tbignore50 = "yes": expected boolean' in text
    assert 'adjudication.tbadjudicate = "wins": expected one of: both, win_loss, draw' in text
    problems = _problems(tmp_path, BASE + '[adjudication]\ntablebases = ["empty"]\n')
    assert any("no Syzygy WDL table (.rtbw)" in p for p in problems), problems


def test_engine_names_and_references_are_checked(tmp_path) -> None:
    problems = _problems(tmp_path, BASE.replace('name = "b"', 'name = "a"'))
    assert any('engines[1].name = "a": engine names must be unique' in p for p in problems)
    problems = _problems(tmp_path, 'format = "gauntlet"\ntc = "1+0"\n'
                         'engines = ["x", "y"]\n')
    assert any('engines[0].use = "x": unknown engine: no engines_file is set' in p
               for p in problems), problems
    problems = _problems(tmp_path, 'tc = "1+0"\nengines_file = "none.toml"\n'
                         'engines = ["x", "y"]\n')
    assert any('engines_file = "none.toml": engines file not found' in p for p in problems)
    problems = _problems(tmp_path, BASE.replace('tc = "10+0.1"', ""))
    assert any("engines[0].tc: engine 'a' has no time control" in p for p in problems)


def test_broken_toml_is_reported_with_its_position(tmp_path) -> None:
    problems = _problems(tmp_path, 'name = "t"\nrounds = = 3\n')
    assert len(problems) == 1
    assert "invalid TOML" in problems[0] and "line 2" in problems[0]
    with pytest.raises(ConfigError, match="cannot read file"):
        load_config(tmp_path / "absent.toml")


def test_the_error_message_lists_every_problem(tmp_path) -> None:
    path = _write(tmp_path, _config("rounds = 0\nconcurrency = 0"))
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.splitlines()[0] == "2 problems in the configuration"
    assert f"{path}: rounds = 0: must be at least 1" in message
    assert f"{path}: concurrency = 0: must be at least 1" in message


def test_parse_config_takes_tables_built_in_code(tmp_path) -> None:
    config = parse_config({
        "format": "round-robin", "tc": "inf depth=3",
        "engines": [{"name": n, "command": ["python", "-m", "engine"]} for n in "xyz"],
    }, source="<command line>", base_dir=tmp_path)
    assert config.format is TournamentFormat.ROUND_ROBIN
    assert pairing_for(config).total() == 3 * 2
    with pytest.raises(ConfigError, match="<command line>: engines: missing required key"):
        parse_config({"tc": "1+0"}, source="<command line>")


def test_the_fingerprint_follows_the_games_not_the_machine(tmp_path) -> None:
    original = load_config(CONFIGS / "demo.toml")
    copy_dir = tmp_path / "copy"
    shutil.copytree(CONFIGS, copy_dir)
    moved = load_config(copy_dir / "demo.toml")
    assert moved.fingerprint() == original.fingerprint()
    assert len(original.fingerprint()) == 64

    text = (CONFIGS / "demo.toml").read_text()
    same_games = [("concurrency = 2", "concurrency = 1"),
                  ('pgnout = "demo.pgn"', 'pgnout = "other.pgn"')]
    for old, new in same_games:
        assert old in text
        changed = load_config(_write(copy_dir, text.replace(old, new), "variant.toml"))
        assert changed.fingerprint() == original.fingerprint(), new
    other_games = [("rounds = 8", "rounds = 9"), ('tc = "10+0.1"', 'tc = "10+0.2"'),
                   ("seed = 7", "seed = 8"), ('"--level", "1"', '"--level", "3"'),
                   ("maxmoves = 120", "maxmoves = 121")]
    for old, new in other_games:
        assert old in text
        changed = load_config(_write(copy_dir, text.replace(old, new), "variant.toml"))
        assert changed.fingerprint() != original.fingerprint(), new


@pytest.mark.parametrize(("tc", "pgn"), [("0:10+0.1", "10+0.1"), ("40/1:00", "40/60")])
def test_a_cutechess_minutes_seconds_time_control_loads(tmp_path, tc: str, pgn: str) -> None:
    config = load_config(_write(tmp_path, _config(tc=tc)))
    assert config.time_control("a").to_pgn() == pgn
