"""runner-cutechess names an engine given without ``name=`` as it names itself, as
cutechess-cli does; the name is foreign text: escaped and bounded (a real process here)."""

from __future__ import annotations

import sys
from pathlib import Path

from runner.dropin.contract import DropinRun
from runner.dropin.cutechess import parse

_HOSTILE = """\
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "uci":
        print("id name " + chr(27) + "]0;pwned" + chr(7) + "x" * 300)
        print("uciok")
    elif word == "isready":
        print("readyok")
    elif word == "quit":
        break
    sys.stdout.flush()
"""


def test_an_unnamed_engine_takes_its_own_name_escaped_and_bounded(tmp_path: Path) -> None:
    """The name it reports, control characters as visible escapes, at most 100 characters;
    an engine given a name keeps it."""
    script = tmp_path / "hostile.py"
    script.write_text(_HOSTILE)
    run = parse(["-engine", f"cmd={sys.executable}", f"arg={script}", "proto=uci",
                 "-engine", f"cmd={sys.executable}", f"arg={script}", "proto=uci", "name=b",
                 "-each", "tc=inf", "depth=1"])
    assert isinstance(run, DropinRun)
    name = run.config.engines[0].name
    assert name.startswith("\\x1b]0;pwned\\x07xxx") and len(name) <= 100
    assert "\x1b" not in name and "\x07" not in name
    assert run.config.engines[1].name == "b"
