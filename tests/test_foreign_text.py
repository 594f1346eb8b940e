"""Names are one line of printable text, and foreign text never reaches a terminal raw (issue 26).

A line break in an engine or tournament name became extra protocol lines (CECP ``name``),
and escape sequences in names or in an engine's words retitled or cleared the terminal of
whoever ran ``runner run``, ``list`` or ``report``. Configured names are refused (TOML, the
command line's words and service submissions alike); names already stored by older runners,
and engines' own text, are shown with their control characters written as escapes.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from runner.cli.vocabulary import read_arguments
from runner.config.check import ConfigError
from runner.config.parse import load_config, parse_config
from runner.pgn.writer import GameDescription, format_game
from runner.store import open_database
from runner.text import shown
from runner.tournament.run import Tournament
from runner.types import MoveRecord

TITLE = "\x1b]0;pwned\x07"
"""OSC 0: sets the terminal's window title (the BEL ends it)."""
HOSTILE = TITLE + "\x1b[2J\x9b31m\u202eevil\u2066x\u2069"
"""A title, a clear screen, a C1 CSI, a right-to-left override and an isolate."""
BAD_NAMES = ["fm\nsavegame /tmp/x", TITLE, "abc\u202edef"]
"""A name carrying a protocol line, one setting the terminal's title, and a bidi override."""

ENGINE = ["python", "-m", "engine"]


def _runner(*args: str, cwd: Path,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200",
                               **(env or {})})


def _raw_controls(text: str) -> list[str]:
    """The characters of `text` a terminal would act on (with what rich itself writes on a
    terminal, ESC [, allowed when `text` came from a live view)."""
    return [c for c in text if not (c.isprintable() or c in "\n ")]


def _assert_clean(text: str, *, terminal: bool = False) -> None:
    """No hostile control in `text`; on a terminal, rich's own colour sequences are fine but
    no title (OSC), bell, C1 code or bidi override is."""
    if terminal:
        for bad in ("\x1b]", "\x07", "\x9b", "\u202e", "\u2066", "\u2069", "\x1b[2J"):
            assert bad not in text, (bad, text)
    else:
        assert _raw_controls(text) == [], text


# -- names are checked where a configuration is read ---------------------------------------------


def _toml_string(text: str) -> str:
    """`text` as a TOML basic string (TOML escapes \\uXXXX; JSON writes the same)."""
    return json.dumps(text, ensure_ascii=True)


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_a_toml_file_with_a_control_in_a_name_is_refused(tmp_path: Path, bad: str) -> None:
    config = tmp_path / "t.toml"
    config.write_text(
        f'name = {_toml_string(bad)}\nformat = "match"\ntc = "depth=1"\n'
        f'[[engines]]\nname = {_toml_string(bad)}\ncommand = {json.dumps(ENGINE)}\n'
        f'[[engines]]\nname = "b"\ncommand = {json.dumps(ENGINE)}\n')
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    keys = {problem.key for problem in caught.value.problems}
    assert keys == {"name", "engines[0].name"}
    for problem in caught.value.problems:
        assert problem.file == str(config)
        assert "one line of printable text" in problem.message
        assert _raw_controls(problem.value) == []  # the value is shown, escaped
    assert _raw_controls(str(caught.value).replace("\n", " ")) == []


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_the_command_lines_words_refuse_a_control_in_a_name(bad: str) -> None:
    words = ["--engine", "cmd=python", "arg=-m", "arg=engine", f"name={bad}",
             "--engine", "cmd=python", "arg=-m", "arg=engine", "name=b",
             "--each", "depth=1", "--name", bad]
    with pytest.raises(ConfigError) as caught:
        read_arguments(words, "match").config()
    assert {problem.key for problem in caught.value.problems} == {"name", "engines[0].name"}


def test_match_with_a_title_setting_name_exits_2_and_prints_it_escaped(tmp_path: Path) -> None:
    result = _runner("match", "--engine", "cmd=python", "arg=-m", "arg=engine",
                     f"name={HOSTILE}", "--engine", "cmd=python", "arg=-m", "arg=engine",
                     "--each", "depth=1", "--db", str(tmp_path / "m.db"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "engines[0].name" in result.stderr and "printable" in result.stderr
    _assert_clean(result.stdout + result.stderr)
    assert not (tmp_path / "m.db").exists()


def test_a_name_too_long_is_refused_and_ordinary_names_are_not() -> None:
    def table(tournament: str, engine: str) -> dict[str, object]:
        return {"name": tournament, "format": "match", "tc": "depth=1",
                "engines": [{"name": engine, "command": ENGINE},
                            {"name": "b", "command": ENGINE}]}

    with pytest.raises(ConfigError) as caught:
        parse_config(table("t" * 201, "e" * 101))
    assert {p.key for p in caught.value.problems} == {"name", "engines[0].name"}
    config = parse_config(table("Élo test — ронд 1 [blitz]", "Stockfish\u00a016 (NNUE) 象棋"))
    assert config.engines[0].name == "Stockfish\u00a016 (NNUE) 象棋"


@pytest.mark.parametrize("bad", BAD_NAMES)
def test_a_submission_with_a_control_in_a_name_is_a_422(tmp_path: Path, bad: str) -> None:
    pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")
    from fastapi.testclient import TestClient
    LOCAL_CLIENT = ("127.0.0.1", 50000)  # a client on this machine (tokens over plain HTTP)

    from runner.service.app import create_app
    from runner.service.settings import ServiceSettings

    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 'service.db'}", token="t0ken",
                               engines_file=REPO / "configs" / "engines.toml")
    body = {"name": bad, "engines": ["bundled", {"use": "bundled-random", "name": bad}],
            "tc": "5+0.05"}
    with TestClient(client=LOCAL_CLIENT, app=create_app(settings)) as client:
        response = client.post("/api/tournaments", json=body,
                               headers={"Authorization": "Bearer t0ken"})
        assert response.status_code == 422, response.text
        problems = {p["key"]: p for p in response.json()["detail"]}
        assert {"name", "engines[1].name"} <= set(problems)
        for problem in problems.values():
            assert _raw_controls(problem["value"] + problem["message"]) == []
        assert client.get("/api/tournaments").json() == {"tournaments": []}


# -- the one function -----------------------------------------------------------------------------


def test_shown_escapes_what_a_terminal_would_act_on() -> None:
    assert shown("plain Élo 象棋\u00a0x") == "plain Élo 象棋\u00a0x"
    assert shown(HOSTILE) == ("\\x1b]0;pwned\\x07\\x1b[2J\\x9b31m\\u202eevil\\u2066x\\u2069")
    assert shown("a\tb\r\nc\x7f\u200b\U000e0001") == "a b\\x0d\\x0ac\\x7f\\u200b\\U000e0001"
    assert shown("one\ntwo\x1b", multiline=True) == "one\ntwo\\x1b"
    assert shown("\ud800") == "\\ud800"  # a lone surrogate, which would not even encode


# -- names stored by an older runner ---------------------------------------------------------------


def _old_tournament(tmp_path: Path) -> Path:
    """A database holding, as a runner before the name checks could store it, a two-game
    tournament named HOSTILE whose first engine's name is HOSTILE too (nothing played yet).

    Its opponent speaks UCI, which is never told the other engine's name: what is tested is
    what the terminal shows, not what the protocol layer does with such a name."""
    good = parse_config({"name": "x", "format": "match", "tc": "depth=1", "games": 2,
                         "adjudication": {"maxmoves": 4},
                         "engines": [{"name": "a", "command": ENGINE},
                                     {"name": "b", "protocol": "uci",
                                      "command": [*ENGINE, "--uci", "--level", "1"]}]},
                        base_dir=REPO)
    engines = (dataclasses.replace(good.engines[0], name="a" + HOSTILE), good.engines[1])
    config = dataclasses.replace(good, name="t" + HOSTILE, engines=engines)
    path = tmp_path / "old.db"
    with open_database(str(path)) as database:
        Tournament(config, database).prepare(lease=False)  # left as a stopped run leaves it
    return path


def test_stored_names_with_escape_sequences_print_escaped(tmp_path: Path) -> None:
    db = ["--db", str(_old_tournament(tmp_path))]
    played = _runner("resume", "1", *db, cwd=tmp_path)  # per-game lines and the summary
    assert played.returncode == 0, played.stderr
    assert "Finished game 1" in played.stderr and "Score of a\\x1b]0;pwned" in played.stdout
    _assert_clean(played.stdout + played.stderr)
    listed = _runner("list", *db, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "t\\x1b]0;pwned" in listed.stdout
    _assert_clean(listed.stdout + listed.stderr)
    report = _runner("report", "1", *db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert "a\\x1b]0;pwned" in report.stdout
    _assert_clean(report.stdout + report.stderr)
    page = _runner("report", "1", "--format", "html", *db, cwd=tmp_path)
    # The HTML report drops direction controls (as the service's page does) and escapes the
    # rest.
    assert page.returncode == 0, page.stderr
    assert "\u202e" not in page.stdout and "\\u202e" not in page.stdout and "evil" in page.stdout
    _assert_clean(page.stdout + page.stderr)
    exported = _runner("export", "1", *db, cwd=tmp_path)
    assert exported.returncode == 0 and exported.stdout.count("[Event ") == 2, exported.stderr
    _assert_clean(exported.stdout + exported.stderr)


def _on_a_terminal(*args: str, cwd: Path) -> tuple[int, str]:
    """Run ``runner ARGS`` with its standard output on a pseudo-terminal: exit status, output."""
    import pty

    master, slave = pty.openpty()
    process = subprocess.Popen([sys.executable, "-m", "runner", *args], cwd=cwd, stdout=slave,
                               stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(REPO)})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # EIO: the program closed its end
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    # The terminal writes each line feed as CR LF.
    return process.wait(timeout=120), b"".join(chunks).decode().replace("\r\n", "\n")


def test_export_to_a_terminal_shows_old_games_comments_escaped(tmp_path: Path) -> None:
    from sqlalchemy import update

    from runner.store.models import GameRow

    path = _old_tournament(tmp_path)
    assert _runner("resume", "1", "--db", str(path), "-q", cwd=tmp_path).returncode == 0
    with open_database(str(path)) as database, database.session() as session:
        # As an older runner stored them: an engine's words kept raw in a comment.
        session.execute(update(GameRow).values(
            pgn=GameRow.pgn.op("||")("{" + HOSTILE + "}\n")))
    status, text = _on_a_terminal("export", "1", "--db", str(path), cwd=tmp_path)
    assert status == 0, text
    assert text.count("[Event ") == 2 and "\\x1b]0;pwned" in text
    _assert_clean(text)
    piped = _runner("export", "1", "--db", str(path), cwd=tmp_path)  # the stored text as it is
    assert piped.returncode == 0 and TITLE in piped.stdout, piped.stderr


def test_the_live_view_shows_stored_names_escaped(tmp_path: Path) -> None:
    db = ["--db", str(_old_tournament(tmp_path))]
    live = _runner("resume", "1", *db, cwd=tmp_path,
                   env={"TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert live.returncode == 0, live.stderr
    assert "t\\x1b]0;pwned" in live.stderr  # the progress bar's title
    _assert_clean(live.stdout + live.stderr, terminal=True)


# -- engines' own words ----------------------------------------------------------------------------

HOSTILE_ENGINE = """\
import sys
HOSTILE = (chr(27) + "]0;pwned" + chr(7) + chr(27) + "[2J" + chr(0x9b) + "31m" + chr(0x202e)
           + "evil")
if "--crash" in sys.argv:
    sys.stderr.write(HOSTILE + " cannot start\\n")
    sys.stderr.flush()
    sys.exit(3)
for line in sys.stdin:
    words = line.split()
    word = words[0] if words else ""
    if word == "protover":
        print('feature myname="' + HOSTILE + '" ping=1 usermove=1 done=1')
    elif word == "ping":
        print("pong " + words[1])
    elif word in ("go", "usermove"):
        sys.stderr.write(HOSTILE + " stderr\\n")
        print("1-0 {" + HOSTILE + " claim}")
    elif word == "quit":
        break
    sys.stdout.flush()
"""


def _engine_config(tmp_path: Path, *extra: str) -> Path:
    (tmp_path / "hostile.py").write_text(HOSTILE_ENGINE)
    command = json.dumps(["python", str(tmp_path / "hostile.py"), *extra])
    config = tmp_path / "t.toml"
    config.write_text(
        'name = "words"\nformat = "match"\ntc = "depth=1"\ngames = 2\n'
        f'[[engines]]\nname = "hostile"\ncommand = {command}\n'
        f'[[engines]]\nname = "bundled"\ncommand = {json.dumps([*ENGINE, "--level", "1"])}\n')
    return config


def test_an_engines_words_print_escaped(tmp_path: Path) -> None:
    config = _engine_config(tmp_path)
    db = ["--db", str(tmp_path / "w.db")]
    played = _runner("run", str(config), *db, cwd=tmp_path)
    assert played.returncode == 0, played.stderr
    assert "\\x1b]0;pwned" in played.stderr  # the false claim's comment, in its game's line
    _assert_clean(played.stdout + played.stderr)
    report = _runner("report", *db, cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    _assert_clean(report.stdout + report.stderr)
    exported = _runner("export", *db, cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    _assert_clean(exported.stdout + exported.stderr)
    checked = _runner("engine", "check", "--movetime", "0.1", "--", sys.executable,
                      str(tmp_path / "hostile.py"), cwd=tmp_path)
    assert "\\x1b]0;pwned" in checked.stdout, checked.stdout + checked.stderr
    _assert_clean(checked.stdout + checked.stderr)


def test_an_engines_stderr_at_a_failed_start_prints_escaped(tmp_path: Path) -> None:
    config = _engine_config(tmp_path, "--crash")
    played = _runner("run", str(config), "--db", str(tmp_path / "c.db"), cwd=tmp_path)
    assert "cannot start" in played.stderr, played.stderr
    _assert_clean(played.stdout + played.stderr)


UCI_NAMED = """\
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "uci":
        print("id name " + chr(27) + "]0;pwned" + chr(7) + "x" + chr(0x202e) + "y" * 300)
        print("uciok")
    elif word == "isready":
        print("readyok")
    elif word == "quit":
        break
    sys.stdout.flush()
"""


@pytest.mark.parametrize("protocol", ["cecp", "uci"])
def test_the_name_an_engine_gives_itself_is_escaped_and_cut(tmp_path: Path, protocol: str) -> None:
    import asyncio

    from runner.protocol.engine import EngineConfig
    from runner.protocol.factory import running_engines

    script = tmp_path / "named.py"
    script.write_text(HOSTILE_ENGINE if protocol == "cecp" else UCI_NAMED)

    async def own_name() -> str:
        config = EngineConfig(name="", argv=(sys.executable, str(script)), protocol=protocol)
        async with running_engines([config]) as (engine,):
            return engine.name

    name = asyncio.run(own_name())
    assert "pwned" in name and _raw_controls(name) == [] and len(name) <= 100, name


# -- PGN ---------------------------------------------------------------------------------------


def test_pgn_tags_and_comments_hold_no_control_characters() -> None:
    game = GameDescription(
        tags={"Event": "t" + HOSTILE, "White": 'a"\\' + HOSTILE, "Black": "b\u2028c"},
        moves=[MoveRecord("e4", comment="x" + HOSTILE + "}")], result="1-0",
        reason="claimed " + HOSTILE)
    text = format_game(game)
    assert _raw_controls(text) == [], text
    lines = text.splitlines()
    assert lines[0].startswith('[Event "t') and lines[0].endswith('"]')
    assert lines[4].startswith('[White "a\\"\\\\') and lines[5] == '[Black "b c"]'
    assert "evil" in text and text.count("{") == text.count("}") == 1


def test_an_error_nobody_awaited_is_reported_with_its_controls_escaped(
        capfd: pytest.CaptureFixture[str]) -> None:
    """asyncio prints an exception no one retrieved through the loop's handler; the runner's
    loop escapes it, since the message may quote an engine's stderr."""
    import asyncio
    import gc

    from runner.protocol.loop import run

    async def main() -> None:
        future = asyncio.get_running_loop().create_future()
        future.set_exception(RuntimeError("\x1b]0;pwned\x07\x9b31m evil"))
        del future
        gc.collect()

    run(main())
    err = capfd.readouterr().err
    assert "pwned" in err and "evil" in err
    assert _raw_controls(err.replace("\n", "")) == [], err
