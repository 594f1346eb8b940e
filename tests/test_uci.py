"""UCI: pure parser tables, then the bundled engine's UCI front end over real pipes.

Games go through `play_game` and are checked as `tests.bundled_games` describes
(python-chess replays every record, clocks are re-added, no process of the engines' groups
survives a game).  The fault modes both protocols share are in test_game_faults.py; the
ones here are UCI's own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

import chess
import pytest

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.play import play_game
from runner.game.record import GameRecord, GameTermination
from runner.protocol.engine import (
    ClockState,
    EngineOption,
    EngineStalled,
    GameSetup,
    SearchInfo,
    Side,
)
from runner.protocol.uci import UciEngine
from runner.protocol.uci_parse import (
    UciInfo,
    format_go,
    format_position,
    option_value,
    parse_bestmove,
    parse_info,
    parse_option,
)
from runner.types import Variant
from tests.bundled_games import (
    bundled,
    bundled_uci,
    check_clocks,
    check_finished,
    check_rules_ending,
    game_spec,
    leftover_processes,
    loser_won_by,
    our_children,
    replay,
    run_game,
    sent_lines,
)
from tests.conftest import REPO

# ------------------------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("option name Hash type spin default 16 min 1 max 33554432",
         EngineOption("Hash", "spin", "16", 1, 33554432)),
        ("option name Clear Hash type button", EngineOption("Clear Hash", "button")),
        ("option name Ponder type check default false", EngineOption("Ponder", "check", "false")),
        ("option name Debug Log File type string default ",
         EngineOption("Debug Log File", "string", "")),
        ("option name SyzygyPath type string default <empty>",
         EngineOption("SyzygyPath", "string", "")),
        ("option name NullMove Pruning type combo default Always var Always var Fail High var Never",
         EngineOption("NullMove Pruning", "combo", "Always", choices=("Always", "Fail High", "Never"))),
        ("option name Skill Level type spin default 20 min -20 max 20",
         EngineOption("Skill Level", "spin", "20", -20, 20)),
        ("option name Mobility (Middle Game) type spin default 100 min 0 max 200",
         EngineOption("Mobility (Middle Game)", "spin", "100", 0, 200)),
        ("option name BookFile type string default /usr/share/my book.bin",
         EngineOption("BookFile", "string", "/usr/share/my book.bin")),
    ],
)
def test_parse_option(line, expected):
    assert parse_option(line) == expected


@pytest.mark.parametrize("line", [
    "option name Hash", "option type spin", "option name Hash type float default 1",
    "option name Hash type spin min one", "id name x",
])
def test_parse_option_rejects_malformed_declarations(line):
    with pytest.raises(ValueError):
        parse_option(line)


_SPIN = EngineOption("Hash", "spin", "16", 1, 1024)
_CHECK = EngineOption("Ponder", "check", "false")
_COMBO = EngineOption("Style", "combo", "Normal", choices=("Solid", "Normal", "Fail High"))
_BUTTON = EngineOption("Clear Hash", "button")
_STRING = EngineOption("SyzygyPath", "string", "")


@pytest.mark.parametrize(
    ("option", "value", "wire"),
    [
        (_SPIN, "64", "64"), (_SPIN, 1024, "1024"), (_SPIN, " 1 ", "1"),
        (_CHECK, "true", "true"), (_CHECK, "False", "false"), (_CHECK, True, "true"),
        (_CHECK, "0", "false"),
        (_COMBO, "fail high", "Fail High"), (_COMBO, "Solid", "Solid"),
        (_BUTTON, "", None),
        (_STRING, "/tmp/tb path", "/tmp/tb path"), (_STRING, "", ""),
    ],
)
def test_option_values_are_checked_and_normalised(option, value, wire):
    assert option_value(option, value) == wire


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        (_SPIN, "0", "outside 1..1024"), (_SPIN, "1025", "outside"), (_SPIN, "big", "integer"),
        (_SPIN, "1.5", "integer"), (_CHECK, "maybe", "true or false"),
        (_COMBO, "Wild", "not one of"), (_BUTTON, "7", "button"),
        (_STRING, "a\nquit", "line break"),
    ],
)
def test_bad_option_values_are_refused_clearly(option, value, message):
    with pytest.raises(ValueError, match=message):
        option_value(option, value)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("info depth 12 seldepth 18 multipv 1 score cp 31 nodes 123456 nps 987000 hashfull 12 "
         "tbhits 0 time 125 pv e2e4 e7e5 g1f3",
         UciInfo(depth=12, seldepth=18, multipv=1, score_cp=31, nodes=123456, nps=987000,
                 hashfull=12, tbhits=0, time=0.125, pv=("e2e4", "e7e5", "g1f3"))),
        ("info depth 20 score mate -3 time 5 nodes 10 pv h7h8q",
         UciInfo(depth=20, mate=-3, time=0.005, nodes=10, pv=("h7h8q",))),
        ("info depth 9 score cp 40 lowerbound nodes 5",
         UciInfo(depth=9, score_cp=40, bound="lower", nodes=5)),
        ("info depth 9 score upperbound cp -12", UciInfo(depth=9, score_cp=-12, bound="upper")),
        ("info depth 3 currmove e2e4 currmovenumber 1", UciInfo(depth=3, currmove="e2e4")),
        ("info string NNUE evaluation using nn.nnue enabled",
         UciInfo(string="NNUE evaluation using nn.nnue enabled")),
        ("info depth 5 score cp 10 wdl 300 600 100 pv e2e4 nodes 77",
         UciInfo(depth=5, score_cp=10, pv=("e2e4",), nodes=77)),
        ("info depth x nodes 5 score cp", UciInfo(nodes=5)),
        ("info pv E1G1 e8c8", UciInfo(pv=("e1g1", "e8c8"))),
        ("info", UciInfo()),
    ],
)
def test_parse_info(line, expected):
    assert parse_info(line) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("bestmove e2e4 ponder e7e5", ("e2e4", "e7e5")),
        ("bestmove e7e8q", ("e7e8q", None)),
        ("bestmove E1H1", ("e1h1", None)),
        ("bestmove (none)", ("0000", None)),
        ("bestmove 0000", ("0000", None)),
        ("bestmove", ("0000", None)),
    ],
)
def test_parse_bestmove(line, expected):
    assert parse_bestmove(line) == expected


@pytest.mark.parametrize(
    ("tc", "clocks", "white", "expected"),
    [
        ("60+0.5", ClockState(own=59.25, opponent=58.0), True,
         "go wtime 59250 btime 58000 winc 500 binc 500"),
        ("60+0.5", ClockState(own=59.25, opponent=58.0), False,
         "go wtime 58000 btime 59250 winc 500 binc 500"),
        ("40/60", ClockState(own=10.0, opponent=12.0, moves_to_go=7), True,
         "go wtime 10000 btime 12000 movestogo 7"),
        ("10", ClockState(own=-0.2, opponent=3.0), True, "go wtime 0 btime 3000"),
        ("st=0.25", ClockState(), True, "go movetime 250"),
        ("depth=7", ClockState(), False, "go depth 7"),
        ("nodes=5000", ClockState(), True, "go nodes 5000"),
        ("5+0.1 depth=3", ClockState(own=5.0, opponent=5.0), True,
         "go wtime 5000 btime 5000 winc 100 binc 100 depth 3"),
        ("inf", ClockState(), True, "go movetime 86400000"),
        # Time controls that differ per engine: each side's own increment.
        ("60+0.5", ClockState(own=59.0, opponent=30.0, opponent_increment=0.1), True,
         "go wtime 59000 btime 30000 winc 500 binc 100"),
        ("60", ClockState(own=59.0, opponent=30.0, opponent_increment=0.25), False,
         "go wtime 30000 btime 59000 winc 250"),
        ("60+1", ClockState(own=59.0, opponent=30.0, opponent_increment=0.0), True,
         "go wtime 59000 btime 30000 winc 1000"),
    ],
)
def test_format_go(tc, clocks, white, expected):
    assert format_go(TimeControl.parse(tc), clocks, white) == expected


def test_format_position():
    assert format_position(None, ()) == "position startpos"
    assert format_position(None, ("e2e4", "e7e5")) == "position startpos moves e2e4 e7e5"
    fen = "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1"
    assert format_position(fen, ("c1g1",)) == f"position fen {fen} moves c1g1"


# ------------------------------------------------------------------------------- normal games


@pytest.mark.timeout(60)
@pytest.mark.parametrize("seeds", [(1, 2)])
def test_uci_game_between_bundled_engines(seeds):
    white = bundled_uci("w", "--level", "1", "--seed", str(seeds[0]))
    black = bundled_uci("b", "--level", "2", "--seed", str(seeds[1]))
    played = run_game(white, black, game_spec("5+0.05"))
    record = played.record
    check_rules_ending(record)
    check_clocks(record)
    assert played.exit_codes == (0, 0)
    engine_moves = [m for m in record.moves if not m.book]
    assert all(m.depth is not None and m.nodes is not None for m in engine_moves)
    assert all(m.score_cp is not None or m.mate is not None for m in engine_moves)
    white_sent = sent_lines(record, True)
    assert white_sent[:3] == ["ucinewgame", "isready", "position startpos"]
    assert white_sent[3].startswith("go wtime 5000 btime 5000 winc 50 binc 50")
    # Every request carries the whole game so far.
    last_position = [line for line in white_sent if line.startswith("position")][-1]
    plies = len(last_position.split()) - 3
    assert plies in (record.plies - 1, record.plies - 2)


@pytest.mark.timeout(60)
@pytest.mark.parametrize("uci_white", [True, False])
def test_mixed_game_cecp_against_uci(uci_white):
    uci = bundled_uci("uci", "--level", "2", "--seed", "5")
    cecp = bundled("cecp", "--level", "2", "--seed", "6")
    white, black = (uci, cecp) if uci_white else (cecp, uci)
    record = run_game(white, black, game_spec("5+0.05")).record
    check_rules_ending(record)
    check_clocks(record)
    assert any(line.startswith("go ") for line in sent_lines(record, uci_white))
    assert any(line.startswith("usermove ") for line in sent_lines(record, not uci_white))


@pytest.mark.timeout(60)
def test_start_fen_with_opening_moves_and_black_to_move():
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 2"
    opening = ("g8f6", "b1c3")
    spec = game_spec(start_fen=fen, opening_moves=opening,
                     adjudication=AdjudicationRules(max_moves=40))
    record = run_game(bundled_uci("w", "--level", "1", "--seed", "1"),
                     bundled_uci("b", "--level", "1", "--seed", "2"), spec).record
    check_finished(record)
    assert [m.san for m in record.moves[:2]] == ["Nf6", "Nc3"]
    assert f"position fen {fen} moves g8f6 b1c3" in sent_lines(record, False)


@pytest.mark.timeout(60)
def test_depth_and_node_limits_reach_the_engine():
    spec = game_spec("depth=2", black_tc="nodes=300", adjudication=AdjudicationRules(max_moves=8))
    record = run_game(bundled_uci("w", "--seed", "1"), bundled_uci("b", "--seed", "2"),
                     spec).record
    check_finished(record)
    assert any(line == "go depth 2" for line in sent_lines(record, True))
    assert any(line == "go nodes 300" for line in sent_lines(record, False))
    white_moves, black_moves = record.moves[0::2], record.moves[1::2]
    assert all(m.depth is not None and m.depth <= 2 for m in white_moves)
    # The searcher polls its limits every 256 nodes.
    assert all(m.nodes is not None and m.nodes <= 300 + 256 for m in black_moves)


@pytest.mark.timeout(60)
def test_moves_per_session_control_sends_movestogo():
    spec = game_spec("4/2", adjudication=AdjudicationRules(max_moves=6))
    record = run_game(bundled_uci("w", "--level", "1", "--seed", "1"),
                     bundled_uci("b", "--level", "1", "--seed", "2"), spec).record
    check_finished(record)
    gos = [line for line in sent_lines(record, True) if line.startswith("go ")]
    assert [int(line.split("movestogo ")[1]) for line in gos] == [4, 3, 2, 1, 4, 3]


_960_START = "1rk3r1/pppppppp/8/8/8/8/PPPPPPPP/1RK3R1 w KQkq - 0 1"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("cecp_white", [False, True])
def test_chess960_castling_king_takes_rook_across_protocols(cecp_white):
    # White O-O and Black O-O-O as book moves (king-takes-rook), then engines play on.
    spec = game_spec("5+0.05", start_fen=_960_START, opening_moves=("c1g1", "c8b8"),
                     variant=Variant.FISCHERANDOM, adjudication=AdjudicationRules(max_moves=40))
    uci = bundled_uci("uci", "--level", "1", "--seed", "11")
    other = bundled("cecp", "--level", "1", "--seed", "12") if cecp_white else \
        bundled_uci("uci2", "--level", "1", "--seed", "12")
    white, black = (other, uci) if cecp_white else (uci, other)
    record = run_game(white, black, spec).record
    check_finished(record)
    assert replay(record).chess960
    assert [m.san for m in record.moves[:2]] == ["O-O", "O-O-O"]
    uci_sent = sent_lines(record, not cecp_white)
    assert "setoption name UCI_Chess960 value true" in uci_sent
    assert any(line.startswith(f"position fen {_960_START} moves c1g1 c8b8") for line in uci_sent)


@pytest.mark.timeout(60)
def test_uci_engine_castles_in_chess960_as_king_takes_rook():
    # The seeds of test_game's CECP castling test: White's engine castles by itself early.
    spec = game_spec("5+0.05", start_fen=_960_START, variant=Variant.FISCHERANDOM,
                     adjudication=AdjudicationRules(max_moves=30))
    record = run_game(bundled_uci("w", "--level", "1", "--seed", "1"),
                     bundled_uci("b", "--level", "1", "--seed", "101"), spec).record
    check_finished(record)
    board = chess.Board(_960_START, chess960=True)
    castled = []
    for ply, played in enumerate(record.moves):
        move = chess.Move.from_uci(played.uci)
        if board.is_castling(move):
            castled.append(ply)
            # The engine said it as king-takes-rook: the king's target holds its own rook.
            assert board.piece_at(move.to_square) == chess.Piece(chess.ROOK, board.turn)
            said = [line for line in record.transcripts[ply % 2] if " < bestmove " in line]
            assert any(f"bestmove {played.uci}" in line for line in said)
        board.push(move)
    assert castled, [m.san for m in record.moves]


# ------------------------------------------------------------------------------- faults


@pytest.mark.timeout(60)
def test_a_stopped_process_is_detected_by_isready_and_scored_as_a_stall():
    white = bundled_uci("w", "--level", "1", ping_timeout=1.0, quit_timeout=0.5,
                        terminate_timeout=0.5)

    async def scenario() -> tuple[GameRecord, tuple[int, ...]]:
        engines = (UciEngine(white), UciEngine(bundled_uci("b", "--level", "1")))
        try:
            for engine in engines:
                await engine.start()
            assert await engines[0].ping() is not None
            os.kill(engines[0].pid or 0, signal.SIGSTOP)
            record = await play_game(*engines, game_spec())
        finally:
            for engine in engines:
                await engine.quit()
        return record, tuple(e.pid or 0 for e in engines)

    children = our_children()
    record, pgids = asyncio.run(scenario())
    assert leftover_processes(pgids, before=children) == []
    assert record.termination is GameTermination.STALL
    assert record.plies == 0
    loser_won_by(record, faulty_white=True)
    assert "no readyok" in record.reason


# ------------------------------------------------------------------------------- options


@pytest.mark.timeout(60)
def test_options_are_set_and_take_effect():
    # Level 1 is a depth-1 search: every reported depth proves the combo option was applied.
    white = bundled_uci("w", "--seed", "1", options={"level": "1", "Hash": "8",
                                                     "Clear Hash": "", "threads": "1"})
    black = bundled_uci("b", "--level", "1", "--seed", "2", memory_mb=4)
    record = run_game(white, black, game_spec(adjudication=AdjudicationRules(max_moves=6))).record
    check_finished(record)
    assert all(m.depth == 1 for m in record.moves[0::2])
    assert not any("unsupported option" in line for t in record.transcripts for line in t)

    async def settings() -> tuple[list[str], dict[str, str | None]]:
        engine = UciEngine(white)
        try:
            await engine.start()
            return [e.text for e in engine.transcript if e.direction == ">"], engine.option_values
        finally:
            await engine.quit()

    lines, values = asyncio.run(settings())
    assert lines[1:] == ["setoption name Level value 1", "setoption name Hash value 8",
                         "setoption name Clear Hash", "setoption name Threads value 1"]
    assert values == {"Level": "1", "Hash": "8", "Clear Hash": None, "Threads": "1"}


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"Contempt": "10"}, "no option 'Contempt'"),
        ({"Hash": "0"}, "outside 1..1024"),
        ({"Threads": "2"}, "outside 1..1"),
        ({"Level": "9"}, "not one of"),
        ({"UCI_Chess960": "perhaps"}, "true or false"),
    ],
)
def test_an_unknown_option_or_a_bad_value_is_a_configuration_error(options, message):
    async def scenario() -> tuple[int | None, list[str]]:
        engine = UciEngine(bundled_uci("b", "--level", "1", options=options))
        try:
            with pytest.raises(ValueError, match=message):
                await engine.start()
            return engine.pid, [e.text for e in engine.transcript if e.direction == ">"]
        finally:
            await engine.quit()

    children = our_children()
    pid, sent = asyncio.run(scenario())
    assert not any(line.startswith("setoption") for line in sent)
    assert leftover_processes((pid,), before=children) == []


@pytest.mark.timeout(60)
def test_an_engine_without_uci_chess960_refuses_fischerandom():
    async def scenario() -> None:
        engine = UciEngine(bundled_uci("b", "--level", "1"))
        try:
            await engine.start()
            engine.options.pop("UCI_Chess960")  # as glaurung or toga2 declare it
            with pytest.raises(ValueError, match="fischerandom"):
                await engine.new_game(GameSetup(game_spec().white_tc, Side.WHITE,
                                                start_fen=_960_START,
                                                variant=Variant.FISCHERANDOM))
        finally:
            await engine.quit()

    asyncio.run(scenario())


# ------------------------------------------------------------------------------- engine level


@pytest.mark.timeout(60)
def test_ping_null_move_and_a_stale_bestmove_after_an_abandoned_search():
    stalemate = "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"
    other = "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"

    async def scenario() -> tuple[float | None, str | None, str | None, SearchInfo | None]:
        engine = UciEngine(bundled_uci("b", "--level", "8"))
        try:
            await engine.start()
            latency = await engine.ping()
            await engine.new_game(GameSetup(TimeControl.parse("depth=1"), Side.BLACK,
                                            start_fen=stalemate))
            null = (await engine.play([], ClockState(), timeout=10)).move
            # A search abandoned by a timeout: its late bestmove must not answer the next game.
            await engine.new_game(GameSetup(TimeControl.parse("30+0"), Side.WHITE))
            with pytest.raises(EngineStalled, match="no bestmove"):
                await engine.play([], ClockState(own=30.0, opponent=30.0), timeout=0.05)
            await engine.end_game("*")
            await engine.new_game(GameSetup(TimeControl.parse("depth=2"), Side.WHITE,
                                            start_fen=other))
            reply = await engine.play([], ClockState(), timeout=20)
            return latency, null, reply.move, reply.info
        finally:
            await engine.quit()

    latency, null, move, info = asyncio.run(scenario())
    assert latency is not None and 0 <= latency < 1
    assert null == "0000"
    board = chess.Board(other)
    assert move is not None and chess.Move.from_uci(move) in board.legal_moves
    assert info is not None and info.depth is not None and info.depth <= 2


def test_the_bundled_engine_help_still_works():
    import subprocess

    result = subprocess.run([sys.executable, "-m", "engine", "--uci", "--help"], cwd=REPO,
                            capture_output=True, text=True, timeout=30, check=False)
    assert result.returncode == 0
    assert "--level" in result.stdout


@pytest.mark.timeout(60)
def test_each_side_is_told_the_other_sides_own_increment() -> None:
    # Time controls that differ per engine: the go line carries each side's own increment.
    spec = game_spec("10+0.1", black_tc="10+0.25", adjudication=AdjudicationRules(max_moves=4))
    played = run_game(bundled_uci("w", "--level", "random"), bundled_uci("b", "--level", "random"),
                     spec)
    for white in (True, False):
        goes = [line for line in sent_lines(played.record, white) if line.startswith("go ")]
        assert goes, played.record.transcripts
        for line in goes:
            words = line.split()
            assert words[words.index("winc") + 1] == "100" and words[words.index("binc") + 1] == "250"
