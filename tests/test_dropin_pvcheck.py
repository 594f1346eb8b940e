"""runner-fastchess's per-game work after a game, on constructed games: the PV checks
(`pv_warnings`: every warning kind, and several lines at one move, so that a check playing
PVs on the game's own board and taking them back must leave the position and its repetition
history exactly as it found them; a search whose one scored line the engine layer read into
the move's record takes a short path, `_check_read`, which must warn as the path that parses
the lines does) and the opening's name in the PGN (`_classify`)."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

from runner.clock import TimeControl
from runner.dropin.fastchess import pvcheck
from runner.dropin.fastchess.pgn import _classify, _openings
from runner.dropin.fastchess.pvcheck import pv_warnings
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import TranscriptEntry
from runner.rules import Board, Result
from runner.types import MoveRecord

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
KNIGHTS = ["g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8"]


def _game(moves: list[str], searches: dict[int, list[str]], mates: dict[int, int] | None = None,
          book: int = 0) -> GameRecord:
    """A game of `moves` whose engines printed `searches[ply]` after the ``go`` of that ply."""
    board = Board()
    played = []
    lines: tuple[list[TranscriptEntry], list[TranscriptEntry]] = ([], [])
    for index, uci in enumerate(moves):
        move = board.parse_uci(uci)
        mate = (mates or {}).get(index)
        played.append(MoveRecord(san=board.san(move), uci=uci, book=index < book,
                                 score_cp=None if mate is not None else 10, mate=mate))
        if index >= book:
            side = lines[index % 2]
            side.append(TranscriptEntry(float(index), ">", "go depth 4"))
            side.extend(TranscriptEntry(float(index), "<", text)
                        for text in searches.get(index, []))
            side.append(TranscriptEntry(float(index), "<", f"bestmove {uci}"))
        board.push(move)
    return _record(played, lines, board, depth=4)


def _record(played: list[MoveRecord], lines: tuple[list[TranscriptEntry], list[TranscriptEntry]],
            board: Board, depth: int) -> GameRecord:
    """A drawn game of `played` at a fixed depth, its engines' lines and final position."""
    tc = TimeControl(depth=depth)
    return GameRecord(white="w", black="b", spec=GameSpec(white_tc=tc, black_tc=tc),
                      moves=tuple(played), result=Result.DRAW,
                      termination=GameTermination.ADJUDICATION, reason="", started_at=T0,
                      ended_at=T0, final_fen=board.fen(),
                      protocol_lines=(tuple(lines[0]), tuple(lines[1])))


def test_threefold_pvs_at_one_move_see_the_same_history() -> None:
    """Two lines at one move both run into the start position's third occurrence; a third
    line that stops short of it is clean; the next move's PV is checked from the history
    as played (a PV left on the board would shift every later answer)."""
    searches = {
        6: ["info depth 1 score cp 5 pv f3g1 f6g8 g1f3",
            "info depth 2 score cp 5 pv f3g1 f6g8 b1c3",
            "info depth 3 score cp 5 pv f3g1 b8c6",
            "info depth 4 score cp 5 pv f3g1 f6g8"],
        7: ["info depth 1 score cp 0 pv f6g8 g1f3"],
    }
    warnings = pv_warnings(_game(KNIGHTS, searches), False, " :: ")
    assert warnings == [
        "Warning; PV continues after threefold repetition - move g1f3 from w :: Info; info "
        "depth 1 score cp 5 pv f3g1 f6g8 g1f3 :: Position; startpos :: Moves; g1f3 g8f6 f3g1 "
        "f6g8 g1f3 g8f6",
        "Warning; PV continues after threefold repetition - move b1c3 from w :: Info; info "
        "depth 2 score cp 5 pv f3g1 f6g8 b1c3 :: Position; startpos :: Moves; g1f3 g8f6 f3g1 "
        "f6g8 g1f3 g8f6",
        "Warning; PV continues after threefold repetition - move g1f3 from b :: Info; info "
        "depth 1 score cp 0 pv f6g8 g1f3 :: Position; startpos :: Moves; g1f3 g8f6 f3g1 f6g8 "
        "g1f3 g8f6 f3g1",
    ]


def test_illegal_and_bestmove_and_mate_checks() -> None:
    """An illegal PV move, a PV going on after mate, mating PVs too short or too long (with
    -check-mate-pvs only), the last PV not starting with the move played, and both engines
    claiming mate."""
    moves = ["f2f3", "e7e5", "g2g4", "d8h4"]
    searches = {
        0: ["info depth 1 score cp 5 pv f2f3 e7e5 a1a8",
            "info depth 2 score mate 1 pv f2f3 e7e5 g2g4",
            "info depth 3 score mate 2 pv e2e4 e7e5 d1h5",
            "info depth 4 score cp 5 pv e2e4"],
        2: ["info depth 3 score mate 2 pv g2g4 d8h4"],
        3: ["info depth 1 score mate 1 pv d8h4 e1f2",
            "info depth 2 score mate 2 pv d8h4",
            "info depth 3 score mate 1 pv d8h4",
            "info depth 4 score mate 1 upperbound pv d8h4 g1h3"],
    }
    game = _game(moves, searches, mates={2: 2, 3: 1})
    plain = pv_warnings(game, False, "\n")
    checked = pv_warnings(game, True, "\n")
    assert [w.splitlines()[0] for w in plain] == [
        "Warning; Illegal PV move - move a1a8 from w",
        "Warning; Bestmove does not match beginning of last PV - move f2f3 from w",
        "Warning; PV continues after checkmate - move e1f2 from b",
        "Warning; PV continues after checkmate - move g1h3 from b",
        "Warning; Sign mismatch in mate scores 2 and 1 from w (White) and b (Black)",
    ]
    assert [w.splitlines()[0] for w in checked] == [
        "Warning; Illegal PV move - move a1a8 from w",
        "Warning; Too long mating PV - from w",
        "Warning; Mating PV does not end with checkmate - from w",
        "Warning; Bestmove does not match beginning of last PV - move f2f3 from w",
        "Warning; Incomplete mating PV - from w",
        "Warning; PV continues after checkmate - move e1f2 from b",
        "Warning; Incomplete mating PV - from b",
        "Warning; PV continues after checkmate - move g1h3 from b",
        "Warning; Sign mismatch in mate scores 2 and 1 from w (White) and b (Black)",
    ]
    assert checked[-1].splitlines()[1:] == [
        "Infos; info depth 3 score mate 2 pv g2g4 d8h4 ; info depth 3 score mate 1 pv d8h4",
        "Position; startpos", "Moves; f2f3 e7e5 g2g4 d8h4"]



def test_opening_name_as_if_every_position_were_looked_up() -> None:
    """`_classify` stops looking once fewer pieces stand than any named position has; the
    name it gives is the one a lookup of every position gives (games that pass named
    positions, then trade down)."""
    table = _openings()
    chooser = random.Random(5)
    named = 0
    for _ in range(40):
        board = Board()
        moves = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"][:chooser.randrange(7)]
        for uci in moves:
            board.push_uci(uci)
        while len(board.move_stack) < 160 and not board.is_game_over():
            legal = list(board.legal_moves)
            captures = [m for m in legal if board.is_capture(m)]
            board.push(chooser.choice(captures or legal))
        game = _game([m.uci() for m in board.move_stack], {})
        replay = Board()
        expected = table.get(replay.epd())
        for played in game.moves:
            replay.push_uci(played.uci)
            expected = table.get(replay.epd()) or expected
        named += expected is not None
        assert _classify(game) == expected
    assert named > 20


def test_pgn_movetext_with_and_without_stored_san() -> None:
    """fastchess's PGN names the moves alike whether the record kept their SAN or not (the
    board is then followed to write it), in SAN, LAN and UCI notation."""
    from dataclasses import replace

    from runner.dropin.fastchess.pgn import EngineSummary, game_pgn
    from runner.dropin.fastchess.settings import FastchessSettings

    game = _game(["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"], {})
    bare = replace(game, moves=tuple(replace(m, san="") for m in game.moves[:3])
                   + game.moves[3:])
    engines = (EngineSummary("w", plies=4), EngineSummary("b", plies=4))
    texts = {}
    for notation in ("san", "lan", "uci"):
        settings = FastchessSettings(engines=engines, rounds=1, pgn_notation=notation)
        texts[notation] = game_pgn(game, 1, settings, {}, {})
        assert game_pgn(bare, 1, settings, {}, {}) == texts[notation]
    assert "1. e4 {" in texts["san"] and "4. O-O {" in texts["san"]
    assert "3. Bf1c4 {" in texts["lan"] and "1. e2e4 {" in texts["uci"]


def _reference_problem(board: Board, line: str, check_mate_pvs: bool) -> str | None:
    """The PV check by its definition: the PV played on a copy of the position, the game's
    end asked before every move (the oracle for the shared-board, shared-answer check)."""
    from runner.dropin.fastchess.pvcheck import _OVER, _game_over
    from runner.protocol.uci_parse import parse_info

    info = parse_info(line)
    copy = board.copy()
    for text in info.pv:
        ended = _game_over(copy)
        if ended is not None:
            return _OVER[ended].format(text, "{}")
        try:
            move = copy.parse_uci(text)
        except ValueError:
            return f"Illegal PV move - move {text} from {{}}"
        copy.push(move)
    if not info.pv or not check_mate_pvs or info.mate is None or info.bound is not None:
        return None
    plies = info.mate * 2 - 1 if info.mate > 0 else info.mate * -2
    if len(info.pv) != plies:
        return "Incomplete mating PV - from {}" if len(info.pv) < plies \
            else "Too long mating PV - from {}"
    return None if copy.is_checkmate() else "Mating PV does not end with checkmate - from {}"


def test_pvs_starting_with_the_move_played_as_if_each_were_played_alone() -> None:
    """Most PVs start with the move the game played: the check goes on from the position
    after it (the move pushed once for all lines) and shares the game-end answers between a
    ply and the next. Random games that repeat and mate, with random PVs (most starting with
    the move played, some running into the repetition, mate or an illegal move), give the
    warnings of each PV played alone from its own position."""
    chooser = random.Random(11)
    checked = 0
    for _ in range(30):
        board = Board()
        while len(board.move_stack) < 60 and not board.is_game_over(claim_draw=True):
            legal = list(board.legal_moves)
            shuffles = [m for m in legal if m.uci() in KNIGHTS]
            board.push(chooser.choice(shuffles if shuffles and chooser.random() < 0.5
                                      else legal))
        moves = [m.uci() for m in board.move_stack]
        replay = Board()
        searches: dict[int, list[str]] = {}
        for index, uci in enumerate(moves):
            lines = []
            for depth in range(1, chooser.randrange(2, 5)):
                walk = replay.copy()
                pv: list[str] = []
                for step in range(chooser.randrange(1, 6)):
                    options = [m.uci() for m in walk.legal_moves]
                    if not options or chooser.random() < 0.05:
                        pv.append("a1a8")
                        break
                    pick = uci if step == 0 and chooser.random() < 0.8 else chooser.choice(options)
                    pv.append(pick)
                    walk.push_uci(pick)
                score = f"mate {chooser.choice((1, 2, -1))}" if chooser.random() < 0.2 \
                    else f"cp {depth}"
                lines.append(f"info depth {depth} score {score} pv {' '.join(pv)}")
            searches[index] = lines
            replay.push_uci(uci)
        game = _game(moves, searches)
        for check_mate_pvs in (False, True):
            expected = []
            replay = Board()
            for index, uci in enumerate(moves):
                for line in searches[index]:
                    problem = _reference_problem(replay, line, check_mate_pvs)
                    if problem is not None:
                        expected.append(problem.format("wb"[index % 2]))
                replay.push_uci(uci)
            got = [w.split(" :: ")[0].removeprefix("Warning; ")
                   for w in pv_warnings(game, check_mate_pvs, " :: ")
                   if "Bestmove does not match" not in w and "Sign mismatch" not in w]
            assert got == expected
            checked += len(expected)
    assert checked > 50


def test_game_end_answers_are_kept_by_ply() -> None:
    """The game-end answer of a ply's position is computed once, when the board stands there,
    and the next ply's lines get it from there (a PV that starts with the move played asks
    it of the position after the move first)."""
    from runner.dropin.fastchess.pvcheck import _Ends

    board = Board()
    for uci in KNIGHTS[:8]:
        board.push_uci(uci)
    ends = _Ends(board)
    assert ends.at(8)() == "threefold"
    board.push_uci("e2e4")
    assert ends.at(8)() == "threefold"  # kept: the board has moved on since
    assert ends.at(9)() is None


def test_named_positions_occupied_squares() -> None:
    """`_classify` writes out only positions whose occupied squares a named position has:
    that set is every named position's, as the board reads its FEN."""
    from runner.dropin.fastchess.pgn import _occupancies

    expected = {Board(f"{key} 0 1").occupied for key in _openings()}
    assert _occupancies() == expected
    after_e4 = Board()
    after_e4.push_uci("e2e4")
    assert after_e4.occupied in expected and Board().occupied not in expected
    assert len(expected) > 1000


def test_game_end_of_a_position_played_from_asks_only_the_counts() -> None:
    """A position the game played a legal move from is neither mate nor stalemate: the PV
    check asks it only the fifty-move count and the repetitions, and that gives what the
    whole question gives, on random games that repeat, run long and end in mate."""
    from runner.dropin.fastchess.pvcheck import _Ends, _game_over

    rng = random.Random(38)
    compared = 0
    kinds: set[str | None] = set()
    for _ in range(4):
        board = Board()
        while True:
            legal = list(board.legal_moves)
            if not legal or board.halfmove_clock > 110:
                break
            # Knights and kings shuffled often: repetitions and long quiet stretches.
            quiet = [m for m in legal if board.piece_type_at(m.from_square) in (2, 6)
                     and not board.is_capture(m)]
            move = rng.choice(quiet if quiet and rng.random() < 0.7 else legal)
            answer = _Ends(board, played=1).get(0)
            assert answer == _game_over(board)
            kinds.add(answer)
            compared += 1
            board.push(move)
    assert compared > 500 and kinds == {None, "threefold", "fifty"}


def _random_game(chooser: random.Random) -> list[str]:
    """A random game of up to 60 plies that often shuffles knights (repetitions) or mates."""
    board = Board()
    while len(board.move_stack) < 60 and not board.is_game_over(claim_draw=True):
        legal = list(board.legal_moves)
        shuffles = [m for m in legal if m.uci() in KNIGHTS]
        board.push(chooser.choice(shuffles if shuffles and chooser.random() < 0.5 else legal))
    return [m.uci() for m in board.move_stack]


def _read_game(chooser: random.Random, moves: list[str]) -> GameRecord:
    """The game with one scored line per search, its figures in the move's record as the UCI
    client reads them (PV, score, depth), an ``info string`` before it now and then."""
    board = Board()
    played: list[MoveRecord] = []
    lines: tuple[list[TranscriptEntry], list[TranscriptEntry]] = ([], [])
    for index, uci in enumerate(moves):
        walk = board.copy()
        pv: list[str] = []
        for step in range(chooser.randrange(0, 6)):
            options = [m.uci() for m in walk.legal_moves]
            if not options or chooser.random() < 0.05:
                pv.append("a1a8")
                break
            shuffles = [option for option in options if option in KNIGHTS]
            pick = uci if step == 0 and chooser.random() < 0.8 else chooser.choice(
                shuffles if shuffles and chooser.random() < 0.6 else options)
            pv.append(pick)
            walk.push_uci(pick)
        mate = chooser.choice((1, 2, -1, 3)) if chooser.random() < 0.2 else None
        score = f"mate {mate}" if mate is not None else "cp 7"
        tail = f" pv {' '.join(pv)}" if pv else ""
        multipv = " multipv 1" if chooser.random() < 0.5 else ""
        side = lines[index % 2]
        side.append(TranscriptEntry(float(index), ">", "go depth 1"))
        if chooser.random() < 0.3:
            side.append(TranscriptEntry(float(index), "<", "info string NNUE enabled"))
        side.append(TranscriptEntry(float(index), "<", f"info depth 1 seldepth 1{multipv} "
                                    f"score {score} nodes 20 time 1{tail}"))
        side.append(TranscriptEntry(float(index), "<", f"bestmove {uci}"))
        move = board.parse_uci(uci)
        played.append(MoveRecord(san=board.san(move), uci=uci, score_cp=None if mate else 7,
                                 mate=mate, depth=1, seldepth=1, nodes=20, pv=tuple(pv)))
        board.push(move)
    return _record(played, lines, board, depth=1)


def test_a_line_read_into_the_record_warns_as_a_parsed_one() -> None:
    """`pv_warnings` with the engine layer's reading taken (`_check_read`) and refused
    (every line parsed, `_check_search`: the same game with no depth in its records, which
    the lines contradict): the same warnings of every kind."""
    chooser = random.Random(38)
    games = [_read_game(chooser, _random_game(chooser)) for _ in range(30)]
    twins = [replace(game, moves=tuple(replace(m, depth=None) for m in game.moves))
             for game in games]
    for game, twin in zip(games, twins, strict=True):  # each takes the path it is meant to
        lines = pvcheck.search_lines(game)
        assert all(pvcheck.engine_read(game, index, lines[index]) for index in lines)
        lines = pvcheck.search_lines(twin)
        assert not any(pvcheck.engine_read(twin, index, lines[index]) for index in lines)
    for check_mate_pvs in (False, True):
        read = [pvcheck.pv_warnings(game, check_mate_pvs, " :: ") for game in games]
        parsed = [pvcheck.pv_warnings(twin, check_mate_pvs, " :: ") for twin in twins]
        assert read == parsed
        kinds = {w.split(" - ")[0].split(" :: ")[0] for found in read for w in found}
        assert {"Warning; PV continues after threefold repetition",
                "Warning; Illegal PV move", "Warning; Bestmove does not match beginning of "
                "last PV"} <= kinds
        if check_mate_pvs:
            assert {"Warning; Incomplete mating PV", "Warning; Too long mating PV",
                    "Warning; Mating PV does not end with checkmate"} <= kinds
