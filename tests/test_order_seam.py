"""The peers behind a seam (issue 37): an order style's implementation is handed to the run by
whoever builds it (a drop-in its own), and a run rebuilt from the store finds it through the
installed package's entry points, by the style's neutral value; no room below the drop-ins
names a drop-in's module."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import pytest
from conftest import REPO

from runner.config.model import OrderStyle, TournamentConfig
from runner.config.parse import parse_config
from runner.dropin import cutechess, fastchess
from runner.dropin.contract import DropinRun, Immediate
from runner.dropin.cutechess.order import STEPPED_STYLE
from runner.dropin.fastchess.order import INDEX_STYLE, fastchess_order, fastchess_pairing
from runner.tournament.pairing import Pairing, pairing_for
from runner.tournament.runtime import game_spec
from runner.tournament.styles import OrderImplementation, given, installed

BELOW_THE_DROP_INS = ("tournament", "app", "game", "stats", "config", "store", "report",
                      "cluster", "fleet", "referee", "books", "protocol")


def test_no_room_below_the_drop_ins_names_a_drop_in_module() -> None:
    """Not imported, and not named in a string for importlib either (import-linter sees only
    imports; docstrings may still point a reader there): the core reaches a style's
    implementation through what it is handed, or the installed entry points."""
    named = []
    for room in BELOW_THE_DROP_INS:
        for path in sorted((REPO / "runner" / room).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if re.search(r"[\"']runner\.dropin\b|^\s*(from|import) runner\.dropin\b", line):
                    named.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    assert named == []


def test_each_style_is_installed_under_its_neutral_value() -> None:
    assert installed(OrderStyle.INDEX) is INDEX_STYLE
    assert installed(OrderStyle.STEPPED) is STEPPED_STYLE
    entries = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    for style in OrderStyle:
        assert re.search(rf"^{style.value} = \"runner\.dropin\.\w+\.order:", entries, re.M), style


def _prepared(parse: Callable[[list[str]], DropinRun | Immediate], argv: list[str]) -> DropinRun:
    run = parse(argv)
    assert isinstance(run, DropinRun)
    return run


def test_the_style_a_drop_in_hands_its_run_is_the_one_played() -> None:
    words = ["-engine", "cmd=python3", "arg=-m", "arg=engine", "arg=--uci", "name=a",
             "proto=uci", "-engine", "cmd=python3", "arg=-m", "arg=engine", "arg=--uci",
             "name=b", "proto=uci", "-each", "tc=inf", "depth=1", "-games", "2", "-rounds", "3"]
    run = _prepared(cutechess.parse, words)
    assert run.style is STEPPED_STYLE
    fast = _prepared(fastchess.parse, ["-engine", "cmd=python3", "args=-m engine --uci", "name=a",
                              "-engine", "cmd=python3", "args=-m engine --uci", "name=b",
                              "-each", "tc=inf", "depth=1", "-rounds", "2"])
    assert fast.style is INDEX_STYLE
    # Rebuilt from its stored JSON with nothing handed: the installed implementation, the
    # same schedule and the same game descriptions.
    rebuilt = TournamentConfig.from_json(run.config.to_json())
    assert rebuilt.order is not None and rebuilt.order.style is OrderStyle.STEPPED
    assert given(rebuilt, None) is STEPPED_STYLE
    handed, found = pairing_for(run.config, run.style), pairing_for(rebuilt)
    assert handed.total() == found.total() == 6
    assert [handed.job(i) for i in range(6)] == [found.job(i) for i in range(6)]
    spec = game_spec(rebuilt, "a", "b")
    assert spec.clock_head_start and spec.adjudication.board_plies
    # What is handed is what is played: another implementation changes the game's rules.
    plain = dataclasses.replace(STEPPED_STYLE, clock_head_start=False,
                                adjudication=lambda rules: rules)
    other = game_spec(rebuilt, "a", "b", style=plain)
    assert not other.clock_head_start and not other.adjudication.board_plies
    assert isinstance(plain, OrderImplementation)


def test_the_runner_s_own_order_needs_no_style() -> None:
    config = parse_config({"name": "t", "format": "match", "tc": "1+0",
                           "engines": [{"name": "a", "command": ["python"]},
                                       {"name": "b", "command": ["python"]}]})
    assert config.order is None and given(config, STEPPED_STYLE) is None
    assert pairing_for(config).total() == 2


@pytest.mark.parametrize("style", list(OrderStyle))
def test_an_uninstalled_style_is_named(style: OrderStyle, monkeypatch: pytest.MonkeyPatch) -> None:
    """An editable install older than the entry points: the refusal says what to do."""
    import importlib.metadata

    from runner.tournament import styles

    monkeypatch.setattr(styles, "_INSTALLED", {})
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda **_: ())
    with pytest.raises(LookupError, match=f"order style '{style.value}'.*pip install -e"):
        installed(style)


@pytest.mark.parametrize("games", [1, 2])
def test_fastchess_s_encounter_holds_its_own_games_only(games: int) -> None:
    # Every encounter is one opening's pair in fastchess's order: with one game each, pair k is
    # game k alone (not games 2k and 2k+1 as in the runner's own pairs).
    schedule = fastchess_pairing(["a", "b", "c"], fastchess_order(), gauntlet=False, rounds=2,
                                 games=games, max_games=5)
    assert not isinstance(schedule, Pairing)
    pairs = [schedule.pair_games(pair) for pair in range(schedule.total())]
    assert sorted(i for games_of in pairs for i in games_of) == list(range(schedule.total()))
    for pair, indices in enumerate(pairs):
        assert all(schedule.job(i).pair == pair for i in indices)
    assert [job.index for job in schedule] == list(range(len(schedule)))
