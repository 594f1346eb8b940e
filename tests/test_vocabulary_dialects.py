"""The one reader of the cutechess vocabulary (runner.config.words) in its two dialects: the
same words give the same engine and tournament through ``runner match`` and
``runner-cutechess``, and each difference between the doors is the dialect's, one case each.
Nothing is played: these are pure readings (the programs are looked for, not started)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from runner.cli.vocabulary import CommandLineError, dialect, engine_words, read_arguments
from runner.clock import TimeControl
from runner.config.vocabulary import DRAW_KEYS, OPENINGS_KEYS, RESIGN_KEYS
from runner.config.words import cut, read_engine, read_keys
from runner.dropin import cutechess
from runner.dropin.contract import DropinRun, PeerUsageError
from runner.dropin.cutechess.args import DIALECT
from runner.dropin.cutechess.build import tc_words
from runner.dropin.cutechess.engines import engine_data

CLI = dialect("match")
FAIRYMAX = shutil.which("fairymax") or shutil.which("fairymax", path="/usr/games")


def _cli_refusal(words: list[str]) -> str:
    with pytest.raises(CommandLineError) as refused:
        read_arguments(words, "match")
    return str(refused.value)


def _peer_refusal(words: list[str]) -> str:
    with pytest.raises(PeerUsageError) as refused:
        cutechess.parse(words)
    return refused.value.line


# -- the same words, the same engine and tournament ------------------------------------------


ENGINE = ["cmd=fairymax", "name=fm", "arg=-x", "tc=40/1:30+0.5", "depth=9",
          "timemargin=20", "option.Hash=16", "restart=off", "initstr=memory 16"]


def test_one_engines_words_read_alike_by_both_dialects() -> None:
    ours = engine_words(ENGINE)
    theirs = engine_data(read_engine(ENGINE, DIALECT))
    assert (theirs.name, [theirs.command, *theirs.arguments]) == (ours.name, list(ours.command))
    assert (theirs.restart, theirs.init_strings) == (ours.restart, list(ours.init_strings))
    assert tuple(theirs.options.items()) == ours.options
    assert TimeControl.parse(tc_words(theirs)) == TimeControl.parse(ours.limits)


@pytest.mark.skipif(FAIRYMAX is None, reason="fairymax is not installed")
def test_the_same_words_give_equal_engine_and_tournament_configs() -> None:
    words = ["-engine", *ENGINE, "proto=xboard", "-engine", "cmd=fairymax", "name=two",
             "proto=xboard", "-each", "tc=40/1:30+0.5", "-games", "2", "-rounds", "2",
             "-draw", "movenumber=20", "movecount=4", "score=8", "-maxmoves", "90",
             "-concurrency", "2", "-recover"]
    through_cli = read_arguments(words, "match").config()
    run = cutechess.parse(words)
    assert isinstance(run, DropinRun)
    through_peer = run.config
    for ours, theirs in zip(through_cli.engines, through_peer.engines, strict=True):
        assert (ours.name, ours.command, ours.protocol, ours.restart) == (
            theirs.name, theirs.command, theirs.protocol, theirs.restart)
        assert (ours.options_dict, ours.init_strings) == (theirs.options_dict,
                                                          theirs.init_strings)
        assert TimeControl.parse(ours.tc or "") == TimeControl.parse(theirs.tc or "")
    assert through_cli.adjudication == through_peer.adjudication
    assert (through_cli.concurrency, through_cli.recover, through_cli.variant) == (
        through_peer.concurrency, through_peer.recover, through_peer.variant)


# -- each difference between the doors, as its dialect says ---------------------------------


def test_spelling_two_dashes_only_at_the_runners_door() -> None:
    assert [g.option.name for g in cut(["--games", "2", "-rounds", "3"], CLI)] == [
        "games", "rounds"]
    assert _peer_refusal(["--games", "2"]) == 'Warning: Unknown option: "--games"'


def test_a_word_with_equals_is_always_a_value_at_the_runners_door() -> None:
    assert cut(["-engine", "-x=1"], CLI)[0].words == ("-x=1",)
    assert _peer_refusal(["-engine", "cmd=a", "-x=1"]) == 'Warning: Unknown option: "-x=1"'


def test_a_negative_number_is_a_value_as_each_door_reads_numbers() -> None:
    # "-inf" reads as a number to Qt (cutechess-cli's value), not to the runner (an option).
    assert _cli_refusal(["--maxmoves", "-inf"]) == "--maxmoves takes exactly one value, got none"
    assert _peer_refusal(["-maxmoves", "-inf"]) == (
        'Warning: Invalid value for option "-maxmoves": "-inf"')


def test_numbers_of_an_option_are_checked_while_cutting_only_by_the_peer() -> None:
    # The runner leaves "2x" to the configuration check, which names the key.
    assert cut(["--games", "2x"], CLI)[0].words == ("2x",)
    assert _peer_refusal(["-games", "2x"]) == 'Warning: Invalid value for option "-games": "2x"'


def test_numbers_and_truths_of_keys_read_each_doors_way() -> None:
    # Python reads 1_0 as ten and "yes" as true; Qt's toInt refuses the first, and
    # cutechess-cli compares twosided with "true" only.
    assert read_keys("draw", ["movenumber=1_0"], DRAW_KEYS, CLI) == {"movenumber": 10}
    assert _peer_refusal(["-draw", "movenumber=1_0", "movecount=2", "score=5"]) == (
        'Warning: Invalid value for option "-draw": "movenumber=1_0 movecount=2 score=5"')
    words = ["movecount=3", "score=400", "twosided=yes"]
    assert read_keys("resign", words, RESIGN_KEYS, CLI)["twosided"] is True
    assert read_keys("resign", words, RESIGN_KEYS, DIALECT)["twosided"] is False


def test_peer_defaults_and_required_keys_only_at_the_peers_door() -> None:
    assert read_keys("openings", ["file=a.epd"], OPENINGS_KEYS, CLI) == {"file": "a.epd"}
    assert read_keys("openings", ["file=a.epd"], OPENINGS_KEYS, DIALECT) == {
        "file": "a.epd", "format": "pgn", "order": "sequential", "plies": 1024, "start": 1,
        "policy": "default"}
    assert read_keys("draw", [], DRAW_KEYS, CLI) == {}
    assert _peer_refusal(["-draw", "movenumber=3"]).startswith(
        'Warning: Option "-draw" needs argument(s): "movecount", "score"')


def test_a_repeated_key_the_last_wins_or_is_refused() -> None:
    assert read_keys("draw", ["score=5", "score=7"], DRAW_KEYS, CLI) == {"score": 7}
    assert _peer_refusal(["-draw", "movenumber=1", "movecount=2", "score=5", "score=7"]
                         ).startswith('Warning: Invalid argument for option "-draw": "score=7"')


def test_which_keys_each_door_reads() -> None:
    # seed= is the runner's, policy= cutechess-cli's.
    assert read_keys("openings", ["file=a", "seed=3"], OPENINGS_KEYS, CLI)["seed"] == 3
    with pytest.raises(CommandLineError, match="is not one of"):
        read_keys("openings", ["file=a", "policy=round"], OPENINGS_KEYS, CLI)
    assert read_keys("openings", ["file=a", "policy=round"], OPENINGS_KEYS,
                     DIALECT)["policy"] == "round"
    assert _peer_refusal(["-openings", "file=a", "seed=3"]).startswith(
        'Warning: Invalid argument for option "-openings": "seed=3"')


def test_each_repeated_joins_or_is_refused() -> None:
    table = read_arguments(["--engine", "cmd=a", "--engine", "cmd=b", "--each", "tc=1+0",
                            "--each", "depth=2"], "match").table
    assert [engine["tc"] for engine in table["engines"]] == ["tc=1+0 depth=2"] * 2
    assert _peer_refusal(["-each", "tc=1", "-each", "depth=2"]) == (
        'Warning: Multiple instances of option "-each"')


def test_each_comes_before_an_engines_own_words_or_after_them() -> None:
    # The runner reads -each first (an engine's own win); cutechess-cli applies it after.
    assert engine_words(["cmd=e", "arg=own"], ["arg=each"]).command == ("e", "each", "own")
    own = read_engine(["cmd=e", "arg=own"], DIALECT)
    assert engine_data(read_engine(["arg=each"], DIALECT, own)).arguments == ["own", "each"]


def test_bare_engine_words_ponder_trust_and_proto() -> None:
    peer = engine_data(read_engine(["cmd=e", "ponder", "trust", "proto=uci"], DIALECT))
    assert (peer.ponder, peer.validate_claims, peer.protocol) == (True, False, "uci")
    with pytest.raises(CommandLineError, match="'ponder' is not of the form key=value"):
        engine_words(["cmd=e", "ponder"])
    assert engine_words(["cmd=e", "ponder=on", "proto=cecp"]).ponder is True
    assert engine_words(["cmd=e", "proto=cecp"]).protocol == "cecp"  # checked by the config
    with pytest.raises(CommandLineError, match="unknown engine key 'trust'"):
        engine_words(["cmd=e", "trust=1"])
    assert _peer_refusal(["-engine", "cmd=e", "proto=cecp"]).startswith(
        'Warning: Usupported chess protocol: "cecp"')


def test_tscale_is_the_peers_with_its_range() -> None:
    assert engine_data(read_engine(["tscale=2.5"], DIALECT)).timeout_scale == 2.5
    assert _peer_refusal(["-engine", "cmd=e", "tscale=500"]).startswith(
        'Warning: Invalid timeout scale factor: "500"')
    with pytest.raises(CommandLineError, match="unknown engine key 'tscale'"):
        engine_words(["cmd=e", "tscale=2"])


def test_an_option_without_a_name() -> None:
    assert read_engine(["option.=1"], DIALECT).options == {"": "1"}
    with pytest.raises(CommandLineError, match="has no option name"):
        engine_words(["cmd=e", "option.=1"])


def test_conf_reads_engines_json_keeping_the_limits(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engines.json").write_text(json.dumps([
        {"name": "fm", "command": "fairymax", "protocol": "xboard", "initStrings": ["memory 8"],
         "options": [{"name": "Hash", "value": 8}]}]))
    engine = engine_data(read_engine(["tc=5+0.1", "arg=gone", "conf=fm", "depth=3"], DIALECT))
    assert (engine.name, engine.command, engine.protocol) == ("fm", "fairymax", "xboard")
    assert (engine.arguments, engine.init_strings, engine.options) == (
        [], ["memory 8"], {"Hash": "8"})
    assert (engine.time_per_tc, engine.increment, engine.plies) == (5000, 100, 3)
    assert _peer_refusal(["-engine", "conf=nope"]).startswith(
        'Warning: Unknown engine configuration: "nope"')
    with pytest.raises(CommandLineError, match="unknown engine key 'conf'"):
        engine_words(["conf=fm"])


def test_each_doors_refusal_of_an_unknown_option() -> None:
    assert _cli_refusal(["--bogus"]).startswith("unknown option --bogus for 'runner match' "
                                                "(known: --engine, --each,")
    assert _peer_refusal(["-bogus"]) == 'Warning: Unknown option: "-bogus"'
    assert _cli_refusal(["stray"]) == "unexpected argument 'stray' before any --option"
    assert _peer_refusal(["stray"]) == 'Warning: Unknown option: "stray"'
