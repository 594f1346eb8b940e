"""The engine's CECP side, driven over real pipes (`python -m engine` as a subprocess)."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import chess
import pytest
from test_engine_support import REPO, our_engine

from tests.conftest import EVENT_TIMEOUT

pytestmark = pytest.mark.timeout(60)

_THINKING = re.compile(r"^(\d+) (-?\d+) (\d+) (\d+) (.+)$")


def _started(*args: str):
    engine = our_engine(*args)
    engine.start_protocol()
    return engine


def test_startup_features_done0_first_done1_last_and_fast():
    with our_engine() as engine:
        engine.send("xboard", "protover 2")
        lines = []
        while not lines or lines[-1] != "feature done=1":
            line = engine.read(5)
            assert line is not None
            lines.append(line)
        assert lines[0] == "feature done=0"
        assert all(line.startswith("feature ") for line in lines)
        text = " ".join(lines)
        for item in ("ping=1", "setboard=1", "usermove=1", "time=1", "reuse=1", "sigint=0",
                     "sigterm=0", "colors=0", "san=0", "analyze=0", "playother=1",
                     'variants="normal,fischerandom"', 'myname="cecp-runner engine'):
            assert item in text
        # `xboard` itself prints nothing: the first line is the feature answer to protover.
        assert engine.sync(1) == []


def test_unknown_command_and_illegal_move_use_the_spec_forms():
    with _started() as engine:
        engine.send("new", "force", "frobnicate 3", "usermove e2e5", "e7e5", "bogus")
        before = engine.sync(2)
        assert before == [
            "Error (unknown command): frobnicate 3",
            "Illegal move: e2e5",
            "Illegal move: e7e5",
            "Error (unknown command): bogus",
        ]


def test_bare_moves_work_when_usermove_is_rejected():
    # A depth: untimed, the engine would think for its default time (about 15 s) for nothing.
    with our_engine("--depth", "2") as engine:
        engine.send("xboard", "protover 2")
        engine.expect(lambda line: line == "feature done=1")
        engine.send("rejected usermove", "new", "force", "e2e4", "e7e5", "g1f3")
        assert engine.sync(1) == []
        engine.send("b8c6", "undo", "b8c6", "remove", "g1f3", "go")
        line, _ = engine.expect_prefix("move ", 20)
        board = chess.Board()
        for uci in ("e2e4", "e7e5", "g1f3"):
            board.push_uci(uci)
        board.parse_xboard(line.split()[1])  # a legal Black reply after e4 e5 Nf3


def test_new_then_move_makes_the_engine_answer_as_black_with_thinking_output():
    with _started("--depth", "3") as engine:
        engine.send("new", "post", "level 40 1 0", "time 6000", "otim 6000", "usermove e2e4")
        line, before = engine.expect_prefix("move ", 30)
        board = chess.Board()
        board.push_uci("e2e4")
        board.parse_xboard(line.split()[1])
        thinking = [_THINKING.match(text) for text in before]
        assert thinking and all(thinking), before
        depths = [int(m.group(1)) for m in thinking]
        assert depths == sorted(depths) and max(depths) == 3
        nodes = [int(m.group(4)) for m in thinking]
        assert nodes == sorted(nodes) and nodes[-1] > 0


def test_sd_limits_the_depth_and_nopost_silences_thinking():
    with _started() as engine:
        engine.send("new", "force", "sd 2", "post", "go")
        _, before = engine.expect_prefix("move ", 30)
        assert max(int(_THINKING.match(t).group(1)) for t in before) == 2
        engine.send("force", "nopost", "go")
        _, before = engine.expect_prefix("move ", 30)
        assert before == []


def test_question_mark_interrupts_a_long_search():
    with _started() as engine:
        engine.send("new", "force", "st 60", "go")
        time.sleep(0.5)
        engine.send("?")
        engine.expect_prefix("move ", EVENT_TIMEOUT)  # well before the 60 s asked for


def test_ping_during_a_search_is_answered_after_the_move():
    with _started() as engine:
        engine.send("new", "force", "st 1", "go", "ping 9")
        line, before = engine.expect(lambda text: text.startswith(("move ", "pong")), 10)
        assert line.startswith("move "), before
        engine.expect(lambda text: text == "pong 9", 5)


def test_quit_during_a_search_exits_promptly():
    with _started() as engine:
        engine.send("new", "force", "st 60", "go")
        time.sleep(0.5)
        engine.send("quit")
        assert engine.wait(EVENT_TIMEOUT) == 0  # well before the 60 s search would end


def test_force_abandons_a_search_without_sending_its_move():
    with _started() as engine:
        engine.send("new", "force", "st 60", "go")
        time.sleep(0.3)
        engine.send("force")
        assert engine.sync(3, timeout=5) == []


@pytest.mark.parametrize(
    ("commands", "limit_s"),
    [(["st 1"], 1.0), (["st 0.5"], 0.5), (["level 40 0:10 0", "time 150", "otim 150"], 1.5),
     (["level 0 0:02 0", "time 80", "otim 80"], 0.8)],
)
def test_time_controls_are_respected(commands, limit_s):
    with _started() as engine:
        engine.send("new", "force", *commands)
        engine.sync(1)
        engine.send("go")
        engine.expect_prefix("move ", EVENT_TIMEOUT)


def test_nps_turns_st_into_a_node_budget():
    with _started() as engine:
        engine.send("new", "force", "nps 1000", "st 2", "post", "go")
        _, before = engine.expect_prefix("move ", 30)
        assert before and all(int(_THINKING.match(t).group(4)) <= 2000 for t in before)


def test_mate_in_one_is_played_and_claimed():
    with _started("--depth", "3") as engine:
        engine.send("new", "force",
                    "setboard r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5Q2/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
                    "go")
        line, _ = engine.expect_prefix("move ", 20)
        assert line == "move f3f7"
        assert engine.read(5) == "1-0 {White mates}"


def test_a_mated_engine_announces_the_result_instead_of_moving():
    fen = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"  # fool's mate
    with _started() as engine:
        engine.send("new", "force", f"setboard {fen}", "go")
        assert engine.read(10) == "0-1 {Black mates}"
        assert engine.sync(1) == []


def test_stalemate_and_repetition_claims():
    with _started() as engine:
        engine.send("new", "force", "setboard 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", "go")
        assert engine.read(10) == "1/2-1/2 {Stalemate}"
        engine.send("new", "force")
        for uci in ("g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"):
            engine.send(uci)
        engine.send("go")
        assert engine.read(10) == "1/2-1/2 {Draw by repetition}"


def test_bad_setboard_is_reported_and_moves_refused_until_a_new_position():
    with _started() as engine:
        engine.send("new", "force", "setboard 8/8/8/8/8/8/8/8 w - - 0 1", "e2e4",
                    "setboard not a fen", "new", "force", "e2e4")
        assert engine.sync(1) == [
            "tellusererror Illegal position",
            "Illegal move (illegal position): e2e4",
            "tellusererror Illegal position",
        ]


def test_harmless_commands_produce_no_output():
    with _started() as engine:
        engine.send("new", "random", "computer", "name Opponent", "rating 2000 1800", "hard",
                    "easy", "post", "nopost", "memory 16", "cores 1", "otim 500", "time 500",
                    "accepted ping", "rejected pause", "hint", "bk", "option Foo=1", "draw",
                    "result 1-0 {White mates}", "new", "random", "force")
        assert engine.sync(1) == []


def test_playother_white_and_black_choose_the_engine_side():
    with _started("--depth", "2") as engine:
        engine.send("new", "force", "playother", "e2e4")  # we play Black: e4 makes us move
        line, _ = engine.expect_prefix("move ", 20)
        reply = line.split()[1]
        board = chess.Board()
        board.push_uci("e2e4")
        board.parse_xboard(reply)
        engine.send("new", "force", "black", "go")  # black: Black to move, engine plays White
        line, _ = engine.expect_prefix("move ", 20)
        board = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1")
        board.parse_xboard(line.split()[1])


def test_draw_offer_accepted_only_when_it_suits_the_engine():
    with _started("--depth", "2") as engine:
        engine.send("new", "force", "setboard 8/8/4k3/8/8/3K4/8/8 w - - 0 1", "draw")
        assert engine.sync(1) == ["offer draw"]
        engine.send("new", "force", "setboard 4k3/8/8/8/8/8/8/QQ2K3 w - - 0 1", "go")
        engine.expect_prefix("move ", 20)
        engine.send("draw")
        assert engine.sync(2) == []


def test_host_garbage_and_overlong_lines_do_not_break_the_engine():
    with _started() as engine:
        engine.proc.stdin.write(b"\xff\xfe\xc3\x28 nonsense\n" + b"x" * 200_000 + b"\nnew\n")
        engine.proc.stdin.flush()
        before = engine.sync(1)
        assert before[0].startswith("Error (unknown command):")
        assert before[1].startswith("Error (line too long):")
        assert len(before) == 2


def test_chess960_xfen_setboard_castling_in_and_out():
    # X-FEN: KQkq names the outermost rooks; the king is on f1 with rooks on b1 and h1.
    fen = "nrbbqknr/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKNR w KQkq - 0 1"
    with _started("--depth", "2") as engine:
        engine.send("new", "variant fischerandom", "force", f"setboard {fen}",
                    "g1f3", "g8f6", "e2e4", "e7e5")
        engine.send("O-O")  # White castles short: king f1->g1, rook h1->f1
        assert engine.sync(1) == []
        engine.send("go")  # Black to move: legal per the arbiter, castling written O-O/O-O-O
        line, _ = engine.expect_prefix("move ", 20)
        board = chess.Board(fen, chess960=True)
        for text in ("g1f3", "g8f6", "e2e4", "e7e5", "O-O"):
            board.push_xboard(text)
        assert board.fen().split()[0].endswith("/NRBBQRK1")
        board.parse_xboard(line.split()[1])


@pytest.mark.parametrize("castle", ["O-O", "e1h1", "e1g1"])
def test_chess960_castling_input_forms_are_all_accepted(castle):
    fen = "4k3/8/8/8/8/8/r7/R3K2R w KQ - 0 1"
    with _started("--depth", "1") as engine:
        engine.send("new", "variant fischerandom", "force", f"setboard {fen}", castle)
        # After White's O-O (king g1, rook f1) the rook on a1 hangs, and h1 is empty.
        engine.send("a2a1", "h1g1")
        assert engine.sync(1) == ["Illegal move: h1g1"]


def test_help_documents_levels_versions_and_faults():
    out = subprocess.run([sys.executable, "-m", "engine", "--help"], cwd=REPO,
                         capture_output=True, text=True, timeout=30, check=True).stdout
    for word in ("--level", "--version", "--depth", "--nodes", "--seed", "--resign",
                 "crash@N", "hang@N", "flood", "slow-start=SECONDS", "no-pong", "time-abuse"):
        assert word in out
    bad = subprocess.run([sys.executable, "-m", "engine", "--fault", "explode@2"], cwd=REPO,
                         capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and "unknown fault" in bad.stderr


def test_edit_mode_with_the_spec_black_to_move_idiom():
    with _started("--depth", "2") as engine:
        # new, force, a2a3, edit ...: the spec's way to set up a Black-to-move position.
        engine.send("new", "force", "a2a3", "edit", "#", "Ke1", "Rh1", "Pe4", "c", "Ke8", "Ra8",
                    "Pd5", ".")
        assert engine.sync(1) == []
        engine.send("O-O-O")  # Black may castle long: king e8 and rook a8 are at home
        assert engine.sync(2) == []
        engine.send("go")
        line, _ = engine.expect_prefix("move ", 20)
    board = chess.Board("2kr4/8/8/3p4/4P3/8/8/4K2R w K - 1 2")
    board.parse_xboard(line.split()[1])
