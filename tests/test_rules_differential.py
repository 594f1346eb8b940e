"""Differential and property tests: our rules core against python-chess (the test oracle)."""

from __future__ import annotations

import random

import chess
import chess.polyglot
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from runner.rules import Board, Move
from runner.rules.movegen import generate_legal

START_960 = [
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 0 1",
    "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w HEhe - 0 1",
    "nrbkqbrn/pppppppp/8/8/8/8/PPPPPPPP/NRBKQBRN w BGbg - 0 1",
    "rkrnnqbb/pppppppp/8/8/8/8/PPPPPPPP/RKRNNQBB w KQkq - 0 1",
    "qrkrbbnn/pppppppp/8/8/8/8/PPPPPPPP/QRKRBBNN w KQkq - 0 1",
]


def _check_single_moves(ours: Board, ref: chess.Board, ref_moves: set[str]) -> None:
    """is_legal and SAN on a copy that never holds the full move list: each generates only
    the squares it concerns. A sample of the legal moves (all of them would double the
    file's time), and of moves that are not."""
    fresh = ours.copy()
    rng = random.Random(ref.fen())
    legal = sorted(ref.legal_moves, key=lambda m: m.uci())
    for move in rng.sample(legal, min(len(legal), 6)):
        ours_move = Move.from_uci(move.uci())
        assert fresh.is_legal(ours_move), (ref.fen(), move.uci())
        assert fresh.san(ours_move) == ref.san(move), (ref.fen(), move.uci())
    own = [sq for sq in chess.SQUARES if ref.color_at(sq) == ref.turn]
    for _ in range(12):
        candidate = chess.Move(rng.choice(own), rng.randrange(64))
        if candidate.from_square == candidate.to_square:
            continue
        assert fresh.is_legal(Move.from_uci(candidate.uci())) == (candidate.uci() in ref_moves), (
            ref.fen(), candidate.uci())
    assert fresh._cache_key != fresh._key, "the probes above built the full list"


def _check_same(ours: Board, ref: chess.Board, probe: bool = False) -> None:
    """Compare every observable of the two boards at one ply (with `probe`, single moves too)."""
    ref_moves = {m.uci() for m in ref.legal_moves}
    if probe:
        _check_single_moves(ours, ref, ref_moves)
    # The game-end tests first, before anything has generated (and cached) the full move list:
    # they look only for a first legal move.
    first = {m.uci() for m in generate_legal(ours, first=True)}
    assert first <= ref_moves and bool(first) == bool(ref_moves), ref.fen()
    assert ours.is_checkmate() == ref.is_checkmate() and ours.is_stalemate() == ref.is_stalemate()
    our_moves = {m.uci() for m in ours.legal_moves}
    assert our_moves == ref_moves, ref.fen()
    assert ours.fen() == ref.fen()
    assert ours.fen(shredder=True) == ref.fen(shredder=True)
    assert ours.zobrist_hash() == chess.polyglot.zobrist_hash(ref)
    assert ours.is_check() == ref.is_check()
    our_outcome = ours.outcome(claim_draw=True)
    ref_outcome = ref.outcome(claim_draw=True)
    assert (our_outcome.result if our_outcome else None) == (ref_outcome.result() if ref_outcome else None)
    assert (our_outcome.termination.value if our_outcome else None) == (
        ref_outcome.termination.name.lower() if ref_outcome else None)
    assert ours.is_repetition(3) == ref.is_repetition(3)


def _play_random_game(seed: int, fen: str | None, chess960: bool, max_plies: int = 300,
                      probe_every: int = 0) -> int:
    """Play one seeded random game on both boards, comparing at every ply (single-move probes
    every `probe_every` plies, 0: none); returns plies played."""
    rng = random.Random(seed)
    ours = Board(fen or chess.STARTING_FEN, chess960=chess960)
    ref = chess.Board(fen or chess.STARTING_FEN, chess960=chess960)
    fens = [ours.fen()]
    plies = 0
    while plies < max_plies:
        _check_same(ours, ref, probe=bool(probe_every) and plies % probe_every == 0)
        ref_moves = sorted(ref.legal_moves, key=lambda m: m.uci())
        if not ref_moves or ref.is_fivefold_repetition() or ref.is_seventyfive_moves():
            break
        # Prefer reversible moves now and then so that repetitions and fifty-move cases occur.
        quiet = [m for m in ref_moves if not ref.is_zeroing(m)]
        move = rng.choice(quiet if quiet and rng.random() < 0.7 else ref_moves)
        san = ref.san(move)
        our_move = ours.parse_uci(move.uci())
        assert ours.san(our_move) == san
        assert ours.lan(our_move) == ref.lan(move)
        assert ours.parse_san(san) == our_move
        assert ours.is_capture(our_move) == ref.is_capture(move)
        assert ours.is_castling(our_move) == ref.is_castling(move)
        assert ours.gives_check(our_move) == ref.gives_check(move)
        ours.push(our_move)
        ref.push(move)
        fens.append(ours.fen())
        plies += 1
    # Undo everything: every FEN and hash must come back exactly.
    while ours.move_stack:
        ours.pop()
        ref.pop()
        fens.pop()
        assert ours.fen() == fens[-1] == ref.fen()
        assert ours.zobrist_hash() == chess.polyglot.zobrist_hash(ref)
    return plies


@pytest.mark.slow
def test_differential_random_standard_games() -> None:
    total = sum(_play_random_game(seed, None, False, probe_every=5) for seed in range(60))
    assert total > 5000


@pytest.mark.slow
def test_differential_random_chess960_games() -> None:
    total = 0
    for seed in range(40):
        total += _play_random_game(1000 + seed, START_960[seed % len(START_960)], True,
                                   probe_every=5)
    assert total > 3000


@pytest.mark.slow
def test_differential_many_games() -> None:
    total = sum(_play_random_game(5000 + seed, None, False) for seed in range(120))
    assert total > 12000


def _observe(board: Board) -> tuple:
    return (board.fen(), board.zobrist_hash(), board.repetition_key(), board.repetition_count())


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=1, max_value=60))
def test_push_pop_restores_fen_and_hash(seed: int, plies: int) -> None:
    rng = random.Random(seed)
    board = Board()
    snapshots = []
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        snapshots.append(_observe(board))
        board.push(rng.choice(moves))
    while snapshots:
        board.pop()
        assert _observe(board) == snapshots.pop()


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=2**32), st.integers(min_value=0, max_value=80), st.booleans())
@example(513153684, 31, False)  # g2g4 beside a black pawn whose capture would expose its king
def test_fen_round_trips(seed: int, plies: int, shredder: bool) -> None:
    rng = random.Random(seed)
    board = Board()
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        board.push(rng.choice(moves))
    fen = board.fen(shredder=shredder)
    again = Board(fen)
    assert again.fen(shredder=shredder) == fen
    assert again.repetition_key() == board.repetition_key()
    # The Polyglot key counts an en passant capture that is only pseudo-legal, while the FEN
    # keeps the square only when the capture is legal (python-chess does the same): then the
    # position read back has another Polyglot key.
    if board.has_pseudo_legal_en_passant() == board.has_legal_en_passant():
        assert again.zobrist_hash() == board.zobrist_hash()
    assert {m.uci() for m in again.legal_moves} == {m.uci() for m in board.legal_moves}


def test_repetition_counts_incrementally_without_replay() -> None:
    board = Board()
    for _ in range(2):
        for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
            board.push_uci(uci)
    assert board.repetition_count() == 3
    assert board.is_repetition(3) and not board.is_repetition(4)
    assert board.can_claim_threefold_repetition()
    board.pop()
    assert board.repetition_count() == 2  # the knight back on f6: its second occurrence
    assert board.can_claim_threefold_repetition()  # f6g8 would make it the third time
    board.pop()
    assert not board.can_claim_threefold_repetition() or board.repetition_count() >= 2


@pytest.mark.parametrize("fen, chess960, ucis", [
    # castling (both wings), a king step, a rook step, a rook captured on its corner
    ("r3k2r/8/8/8/8/8/1B4B1/R3K2R w KQkq - 0 1", False,
     ["e1g1", "a8b8", "b2h8", "e8d7", "g2b7", "d7c7"]),
    ("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", False, ["e1c1", "e8g8", "c1b1", "a8a1"]),
    # Chess960: king-takes-rook castling and rights on inner files (keys not from Polyglot)
    ("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1", True,
     ["e1g1", "b8c8", "b1a1", "e8f8", "a2a3", "f8e8"]),
    ("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1", True,
     ["b1c1", "e8b8", "e1f1", "g8h8", "f1e1", "h8g8"]),
])
def test_repetition_key_follows_castling_rights_incrementally(fen: str, chess960: bool,
                                                              ucis: list[str]) -> None:
    """Push updates the key's castling part only when the rights change: after every move the
    key equals the one computed from scratch for the same position, and pop restores it. The
    key keeps bit 63 set (compiled code then holds it as one int object: the occurrence map
    and the undo record take it without boxing) and its 62 low bits hold the hash."""
    board = Board(fen, chess960=chess960)
    keys = [board.repetition_key()]
    for uci in ucis:
        board.push(board.parse_uci(uci))
        key = board.repetition_key()
        assert key == Board(board.fen(), chess960=chess960).repetition_key(), (uci, board.fen())
        assert key >> 62 == 2, hex(key)
        keys.append(key)
    assert len(set(keys)) == len(keys)
    while board.move_stack:
        board.pop()
        keys.pop()
        assert board.repetition_key() == keys[-1]


def test_coordinate_forms_engines_send() -> None:
    board = Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1")
    assert board.parse_uci("e1g1") == Move.from_uci("e1g1")
    assert board.parse_uci("e1h1") == Move.from_uci("e1g1")
    assert board.parse_uci("O-O") == Move.from_uci("e1g1")
    assert board.parse_uci("0-0-0") == Move.from_uci("e1c1")
    c960 = Board("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", chess960=True)
    assert c960.parse_uci("e1h1") == Move.from_uci("e1h1")
    assert c960.parse_uci("e1g1") == Move.from_uci("e1h1")
    promo = Board("8/4P3/8/8/8/8/8/k6K w - - 0 1")
    assert promo.parse_uci("e7e8q") == Move.from_uci("e7e8q")
    assert promo.parse_uci("e7e8N") == Move.from_uci("e7e8n")


@pytest.mark.parametrize("seed", range(6))
def test_repetition_counts_stay_right_when_asked_only_now_and_then(seed: int) -> None:
    """Push leaves the count of the new position for later, pop uncounts only what was
    counted: a random walk of pushes and pops (knight and king shuffles, so positions recur),
    asking about repetition at random moments, through copies and `forget_moves`, must agree
    with python-chess's counts at every question."""
    rng = random.Random(seed)
    ours = Board("4k1n1/8/8/8/8/8/8/1N2K3 w - - 0 1")
    ref = chess.Board("4k1n1/8/8/8/8/8/8/1N2K3 w - - 0 1")
    base = 0  # plies the reference keeps that `forget_moves` dropped from ours
    for step in range(400):
        if len(ref.move_stack) > base and rng.random() < 0.3:
            ours.pop()
            ref.pop()
        else:
            move = rng.choice(sorted(ref.legal_moves, key=lambda m: m.uci()))
            ours.push_uci(move.uci())
            ref.push(move)
        if rng.random() < 0.4:
            asked = ours.copy() if rng.random() < 0.2 else ours
            for count in (2, 3, 4):
                assert asked.is_repetition(count) == ref.is_repetition(count), (seed, step)
            assert asked.can_claim_threefold_repetition() == ref.can_claim_threefold_repetition()
        if step % 97 == 96:
            keep = rng.randrange(4)
            ours.forget_moves(keep)
            base = max(base, len(ref.move_stack) - keep)


@pytest.mark.parametrize("fen", [
    # rooks and knights on g8/h8 (the bits compiled code cannot hold as short ints), both
    # sides castling towards h8/h1, a pawn promoting on h8 by a push and by capturing g8
    "r3k1nr/6P1/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/6P1/8/8/8/8/8/R3K2R b KQkq - 0 1",
    "4k1nr/6P1/8/8/8/8/7p/4K1NR w K - 0 1",
    # en passant on the a- and h-files, for either side; the h-file one exposes no king
    "4k3/8/8/6Pp/8/8/8/4K3 w - h6 0 1",
    "4k3/8/8/pP6/8/8/8/4K3 w - a6 0 1",
    "4k3/8/8/8/Pp6/8/8/4K3 b - a3 0 1",
    "4k3/8/8/8/6pP/8/8/4K3 b - h3 0 1",
    # check from h8 along the long diagonal: evasions to h8's line and captures of it
    "7b/8/8/8/8/8/1P6/K6k w - - 0 1",
    # Chess960 castling with the king on g1/g8 and the rook on the h-file
    "r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1",
])
def test_generation_with_default_masks_matches_the_oracle_on_edge_squares(fen: str) -> None:
    """The generator's "every square" masks are -1 (and its free-square masks negative):
    the moves must be the oracle's, also where pieces stand on g8/h8, and the same as with
    explicit 64-bit masks."""
    chess960 = "HA" in fen
    ours = Board(fen, chess960=chess960)
    ref = chess.Board(fen, chess960=chess960)
    want = {m.uci() for m in ref.legal_moves}
    assert {m.uci() for m in generate_legal(ours)} == want
    full = (1 << 64) - 1
    assert {m.uci() for m in generate_legal(ours, from_mask=full, to_mask=full)} == want
    for move in ref.legal_moves:
        ours.push_uci(move.uci())
        ref.push(move)
        assert {m.uci() for m in generate_legal(ours)} == {m.uci() for m in ref.legal_moves}
        ours.pop()
        ref.pop()


def test_fivefold_is_seen_at_the_first_ply_it_can_happen() -> None:
    """`outcome` skips the occurrence count while too few reversible plies have passed for a
    fifth occurrence: with null moves (two plies a round trip) the fifth comes at the eighth
    ply, and must be reported there, as python-chess does; knights need sixteen."""
    ours, ref = Board(), chess.Board()
    for ply in range(8):
        assert ours.outcome() is None, ply
        ours.push(Move.null())
        ref.push(chess.Move.null())
    assert ref.is_fivefold_repetition()
    outcome = ours.outcome()
    assert outcome is not None and outcome.termination.name == "FIVEFOLD_REPETITION"
    ours, ref = Board(), chess.Board()
    for ply, uci in enumerate(["g1f3", "g8f6", "f3g1", "f6g8"] * 4):
        assert ours.outcome() is None and not ref.is_fivefold_repetition(), ply
        ours.push_uci(uci)
        ref.push_uci(uci)
    assert ref.is_fivefold_repetition() and ours.halfmove_clock == 16
    outcome = ours.outcome()
    assert outcome is not None and outcome.termination.name == "FIVEFOLD_REPETITION"


def _oracle_arbiter_end(ref: chess.Board) -> str | None:
    """The game loop's end by the rules as python-chess words it: the outcome without claims,
    then threefold repetition, then fifty moves."""
    outcome = ref.outcome()
    if outcome is not None:
        return outcome.termination.name
    if ref.is_repetition(3):
        return "THREEFOLD_REPETITION"
    if ref.is_fifty_moves():
        return "FIFTY_MOVES"
    return None


@pytest.mark.parametrize(("fen", "seeds"), [
    (None, range(3)),
    # Fifty moves and dead material come within a few plies of these.
    ("8/8/4k3/8/8/3K4/8/R7 w - - 95 80", range(4)),
    ("8/8/4k3/8/2n5/3K4/8/1B6 b - - 90 80", range(4)),
    ("7k/8/6Q1/8/8/8/8/K7 w - - 10 60", range(4)),
])
def test_push_refereed_agrees_with_the_oracle(fen: str | None, seeds: range) -> None:
    """The game loop's one-step referee gives python-chess's SAN and the same game end at
    every ply (mate, stalemate, dead material, repetitions, fifty and seventy-five moves)."""
    ends = set()
    for seed in seeds:
        rng = random.Random(seed)
        ours = Board(fen or chess.STARTING_FEN)
        ref = chess.Board(fen or chess.STARTING_FEN)
        for _ in range(300):
            moves = sorted(ref.legal_moves, key=lambda m: m.uci())
            quiet = [m for m in moves if not ref.is_zeroing(m)]
            move = rng.choice(quiet if quiet and rng.random() < 0.8 else moves)
            san = ref.san(move)
            ref.push(move)
            text, ending = ours.push_refereed(ours.parse_uci(move.uci()))
            expected = _oracle_arbiter_end(ref)
            assert (text, ending.name if ending else None) == (san, expected), ref.fen()
            if expected is not None:
                ends.add(expected)
                break
    assert ends or fen is None, "no game reached an end"


@pytest.mark.parametrize("moves", [["0000"] * 4, ["g1f3", "g8f6", "f3g1", "f6g8"] * 2])
def test_push_refereed_sees_threefold_at_the_first_ply_it_can_happen(moves: list[str]) -> None:
    """The occurrence count is skipped before four reversible plies: four null moves make the
    earliest possible third occurrence (knights take eight), and it is reported there."""
    ours, ref = Board(), chess.Board()
    ending = None
    for ply, uci in enumerate(moves):
        ref.push_uci(uci)
        _, ending = ours.push_refereed(Move.null() if uci == "0000" else ours.parse_uci(uci))
        assert (ending.name if ending else None) == _oracle_arbiter_end(ref), ply
    assert ending is not None and ending.name == "THREEFOLD_REPETITION"
