"""Iterative-deepening principal-variation search with quiescence, independent of any protocol.

The searcher works on a copy of a `runner.rules.Board`, reports each finished iteration through
a callback, and stops when a depth, node, time or external stop limit says so.  Scores are
centipawns from the side to move's point of view; mate scores are `MATE - plies`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine.evaluate import PIECE_VALUES, Evaluator
from runner.rules import Move

MATE = 100_000
MATE_BOUND = MATE - 1_000
_INF = 1_000_000
_MAX_PLY = 96
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_MOVE_SCORE = 1 << 30
_CAPTURE_BASE = 1 << 24
_KILLER_SCORES = (1 << 23, (1 << 23) - 1)
_QS_MAX_PLY = _MAX_PLY - 4
# Poll the clock and the stop flag every this many nodes.
_POLL_INTERVAL = 256


@dataclass(frozen=True)
class SearchLimits:
    """Limits on one search; None means unbounded (the stop flag always applies)."""

    depth: int | None = None
    nodes: int | None = None
    soft_s: float | None = None
    hard_s: float | None = None


@dataclass(frozen=True)
class SearchInfo:
    """Progress after one finished iteration (or the best move so far)."""

    depth: int
    score: int
    elapsed_s: float
    nodes: int
    pv: tuple


@dataclass(frozen=True)
class SearchResult:
    """The outcome of a search: the move to play (None only without legal moves)."""

    move: Move | None
    score: int
    depth: int
    nodes: int
    elapsed_s: float
    pv: tuple[Move, ...]


class _Abort(Exception):
    """Raised inside the tree when a limit is hit; caught at the root."""


def is_mate_score(score: int) -> bool:
    """True when a score announces a forced mate (for either side)."""
    return abs(score) >= MATE_BOUND


def mate_in_moves(score: int) -> int:
    """Full moves to the mate a mate score announces (negative when we are mated)."""
    plies = MATE - abs(score)
    moves = (plies + 1) // 2
    return moves if score > 0 else -moves


class Searcher:
    """Alpha-beta searcher with a transposition table that persists between moves of a game."""

    def __init__(self, evaluate: Evaluator, *, tt_entries: int = 200_000) -> None:
        self._evaluate = evaluate
        self._tt_limit = max(1_000, tt_entries)
        self._tt: dict[int, tuple[int, int, int, object]] = {}
        self._history = [0] * 4096
        self._killers: list[list[object | None]] = [[None, None] for _ in range(_MAX_PLY + 1)]
        self._rep: dict[int, int] = {}
        self.nodes = 0
        self._next_poll = 0
        self._deadline: float | None = None
        self._max_nodes: int | None = None
        self._stop: threading.Event | None = None
        self._start = 0.0
        self._partial_best: object | None = None
        self._partial_score = -_INF

    def new_game(self) -> None:
        """Forget everything learned in the previous game."""
        self._tt.clear()
        self._history = [0] * 4096

    def set_evaluator(self, evaluate: Evaluator) -> None:
        """Search with another evaluation from now on (what was learned with the old is dropped)."""
        self._evaluate = evaluate
        self.new_game()

    def resize(self, entries: int) -> None:
        """Change the transposition table bound (takes effect at the next search)."""
        self._tt_limit = max(1_000, entries)

    # --- root --------------------------------------------------------------------------------

    def search(
        self,
        board,
        limits: SearchLimits,
        *,
        stop: threading.Event | None = None,
        on_info: Callable[[SearchInfo], None] | None = None,
    ) -> SearchResult:
        """Search `board` (left unchanged) within `limits`; return the best move found."""
        self._start = time.monotonic()
        board = board.copy()
        self.nodes = 0
        self._stop = stop
        self._max_nodes = limits.nodes
        self._deadline = None if limits.hard_s is None else self._start + limits.hard_s
        self._next_poll = min(_POLL_INTERVAL, limits.nodes) if limits.nodes else _POLL_INTERVAL
        self._killers = [[None, None] for _ in range(_MAX_PLY + 1)]
        self._history = [h >> 2 for h in self._history]
        if len(self._tt) > self._tt_limit:
            self._tt.clear()
        self._rep = _history_keys(board)

        root_moves = list(board.generate_legal_moves())
        if not root_moves:
            return SearchResult(None, -MATE if board.is_check() else 0, 0, 0, 0.0, ())
        best_move, best_score, done_depth = root_moves[0], -_INF, 0
        best_pv: tuple = (best_move,)
        max_depth = min(limits.depth or _MAX_PLY - 8, _MAX_PLY - 8)
        if len(root_moves) == 1 and limits.soft_s is not None:
            max_depth = 1  # only move: do not spend the clock on it
        root_key = board.zobrist_hash()
        for depth in range(1, max_depth + 1):
            try:
                score, move = self._root(board, root_moves, depth, root_key)
            except _Abort:
                if self._partial_best is not None and self._partial_best != best_move:
                    best_move = self._partial_best
                    best_score = self._partial_score
                    best_pv = (best_move,)
                break
            best_move, best_score, done_depth = move, score, depth
            best_pv = self._pv(board, depth)
            if not best_pv or best_pv[0] != best_move:
                best_pv = (best_move,)
            elapsed = time.monotonic() - self._start
            if on_info is not None:
                on_info(SearchInfo(depth, score, elapsed, self.nodes, best_pv))
            if limits.soft_s is not None and elapsed >= limits.soft_s:
                break
            if is_mate_score(score) and depth >= MATE - abs(score) + 2:
                break
        elapsed = time.monotonic() - self._start
        if best_score == -_INF:
            best_score = 0
        return SearchResult(best_move, best_score, done_depth, self.nodes, elapsed, best_pv)

    def _root(self, board, root_moves: list, depth: int, root_key: int) -> tuple[int, object]:
        """One iteration over the root moves, best first; returns (score, move)."""
        entry = self._tt.get(root_key)
        tt_move = entry[3] if entry else None
        ordered = self._order(board, root_moves, tt_move, 0)
        root_moves[:] = ordered
        alpha, beta = -_INF, _INF
        best_move = ordered[0]
        self._partial_best = None
        self._partial_score = -_INF
        self._rep[root_key] = self._rep.get(root_key, 0) + 1
        try:
            for index, move in enumerate(ordered):
                board.push(move)
                try:
                    if index == 0:
                        score = -self._node(board, depth - 1, -beta, -alpha, 1)
                    else:
                        score = -self._node(board, depth - 1, -alpha - 1, -alpha, 1)
                        if score > alpha:
                            score = -self._node(board, depth - 1, -beta, -alpha, 1)
                finally:
                    board.pop()
                if score > alpha:
                    alpha = score
                    best_move = move
                    self._partial_best = move
                    self._partial_score = score
        finally:
            self._rep[root_key] -= 1
        self._tt[root_key] = (depth, alpha, _EXACT, best_move)
        # Keep the best move first for the next iteration.
        root_moves.remove(best_move)
        root_moves.insert(0, best_move)
        return alpha, best_move

    # --- interior nodes ----------------------------------------------------------------------

    def _poll(self) -> None:
        """Check the stop flag, the clock and the node budget."""
        if self._max_nodes is not None and self.nodes >= self._max_nodes:
            raise _Abort
        if self._stop is not None and self._stop.is_set():
            raise _Abort
        if self._deadline is not None and time.monotonic() >= self._deadline:
            raise _Abort
        step = self.nodes + _POLL_INTERVAL
        self._next_poll = min(step, self._max_nodes) if self._max_nodes else step

    def _node(self, board, depth: int, alpha: int, beta: int, ply: int) -> int:
        """Negamax with alpha-beta, transposition table, check extension and late reductions."""
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        in_check = board.is_check()
        if in_check:
            depth += 1
        if depth <= 0 or ply >= _MAX_PLY:
            return self._quiesce(board, alpha, beta, ply)
        key = board.zobrist_hash()
        rep = self._rep
        if rep.get(key) or board.halfmove_clock >= 100:
            return 0
        # Mate distance pruning.
        if alpha < -MATE + ply:
            alpha = -MATE + ply
        if beta > MATE - ply - 1:
            beta = MATE - ply - 1
        if alpha >= beta:
            return alpha
        entry = self._tt.get(key)
        tt_move = None
        if entry is not None:
            e_depth, e_score, e_flag, tt_move = entry
            if e_depth >= depth and beta - alpha == 1:
                if e_score >= MATE_BOUND:
                    e_score -= ply
                elif e_score <= -MATE_BOUND:
                    e_score += ply
                if e_flag == _EXACT:
                    return e_score
                if e_flag == _LOWER and e_score >= beta:
                    return e_score
                if e_flag == _UPPER and e_score <= alpha:
                    return e_score
        moves = list(board.generate_legal_moves())
        if not moves:
            return -MATE + ply if in_check else 0
        if (
            depth >= 3
            and beta - alpha == 1
            and not in_check
            and abs(beta) < MATE_BOUND
            and self._has_pieces(board)
            and self._evaluate(board) >= beta
        ):
            # Null move: if passing still fails high, a real move will too.
            reduction = 3 if depth >= 6 else 2
            board.push(Move(0, 0))
            rep[key] = 1
            try:
                score = -self._node(board, depth - 1 - reduction, -beta, -beta + 1, ply + 1)
            finally:
                board.pop()
                del rep[key]
            if score >= beta:
                return beta
        ordered = self._order(board, moves, tt_move, ply)
        original_alpha = alpha
        best_score, best_move = -_INF, ordered[0]
        killers = self._killers[ply]
        them = board.occupied_co[not board.turn]
        rep[key] = 1
        try:
            for index, move in enumerate(ordered):
                quiet = not (them >> move.to_square & 1) and move.promotion is None
                board.push(move)
                try:
                    if index == 0:
                        score = -self._node(board, depth - 1, -beta, -alpha, ply + 1)
                    else:
                        reduction = 0
                        if (
                            quiet
                            and depth >= 3
                            and index >= 3
                            and not in_check
                            and move is not killers[0]
                            and move is not killers[1]
                            and not board.is_check()
                        ):
                            reduction = 1 if index < 8 else 2
                        child = depth - 1
                        score = -self._node(board, child - reduction, -alpha - 1, -alpha, ply + 1)
                        if reduction and score > alpha:
                            score = -self._node(board, child, -alpha - 1, -alpha, ply + 1)
                        if alpha < score < beta:
                            score = -self._node(board, child, -beta, -alpha, ply + 1)
                finally:
                    board.pop()
                if score > best_score:
                    best_score, best_move = score, move
                    if score > alpha:
                        alpha = score
                        if alpha >= beta:
                            if quiet:
                                if killers[0] is not move:
                                    killers[1] = killers[0]
                                    killers[0] = move
                                slot = move.from_square * 64 + move.to_square
                                self._history[slot] += depth * depth
                            break
        finally:
            rep[key] = 0
            del rep[key]
        if best_score >= beta:
            flag = _LOWER
        elif best_score > original_alpha:
            flag = _EXACT
        else:
            flag = _UPPER
        stored = best_score
        if stored >= MATE_BOUND:
            stored += ply
        elif stored <= -MATE_BOUND:
            stored -= ply
        self._tt[key] = (depth, stored, flag, best_move)
        return best_score

    def _quiesce(self, board, alpha: int, beta: int, ply: int) -> int:
        """Captures (and promotions) only, or all evasions when in check, until quiet."""
        self.nodes += 1
        if self.nodes >= self._next_poll:
            self._poll()
        in_check = board.is_check()
        if in_check and ply < _QS_MAX_PLY:
            moves = list(board.generate_legal_moves())
            if not moves:
                return -MATE + ply
            stand = -_INF
        else:
            stand = self._evaluate(board)
            if stand >= beta or ply >= _QS_MAX_PLY:
                return stand
            if stand > alpha:
                alpha = stand
            moves = _tactical_moves(board)
            if not moves:
                return stand
        them = board.occupied_co[not board.turn]
        scored = []
        for move in moves:
            to = move.to_square
            if them >> to & 1:
                victim = PIECE_VALUES[board.piece_type_at(to)]
                if not in_check and stand + victim + 200 < alpha and move.promotion is None:
                    continue  # delta pruning: even winning this piece cannot raise alpha
                attacker = board.piece_type_at(move.from_square)
                if (
                    not in_check
                    and PIECE_VALUES[attacker] > victim + 50
                    and board.is_attacked_by(not board.turn, to)
                ):
                    continue  # a defended lesser piece: this capture probably loses material
                order = victim * 8 - attacker
            else:
                order = 0
            if move.promotion:
                order += PIECE_VALUES[move.promotion] * 8
            scored.append((order, move.from_square, to, move))
        scored.sort(key=_first, reverse=True)
        best = stand
        for _order_key, _f, _t, move in scored:
            board.push(move)
            try:
                score = -self._quiesce(board, -beta, -alpha, ply + 1)
            finally:
                board.pop()
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        return best

    @staticmethod
    def _has_pieces(board) -> bool:
        """True when the side to move has more than king and pawns (null move is then safe)."""
        own = board.occupied_co[board.turn]
        return bool(own & (board.knights | board.bishops | board.rooks | board.queens))

    # --- helpers -----------------------------------------------------------------------------

    def _order(self, board, moves: list, tt_move, ply: int) -> list:
        """Moves sorted: TT move, captures by MVV-LVA, promotions, killers, then history."""
        them = board.occupied_co[not board.turn]
        killers = self._killers[ply] if ply <= _MAX_PLY else (None, None)
        history = self._history
        ep = board.ep_square
        pawns = board.pawns
        scored = []
        for move in moves:
            to = move.to_square
            frm = move.from_square
            # Identity is enough here: the rules core hands out interned Move objects, and a
            # miss would only cost ordering, never correctness.
            if move is tt_move:
                score = _TT_MOVE_SCORE
            elif them >> to & 1:
                score = (
                    _CAPTURE_BASE
                    + PIECE_VALUES[board.piece_type_at(to)] * 8
                    - board.piece_type_at(frm)
                )
            elif to == ep and pawns >> frm & 1:
                score = _CAPTURE_BASE + PIECE_VALUES[1] * 8 - 1
            elif move is killers[0]:
                score = _KILLER_SCORES[0]
            elif move is killers[1]:
                score = _KILLER_SCORES[1]
            else:
                score = history[frm * 64 + to]
            if move.promotion:
                score += _CAPTURE_BASE + PIECE_VALUES[move.promotion]
            scored.append((score, frm, to, move))
        scored.sort(key=_first, reverse=True)
        return [item[3] for item in scored]

    def _pv(self, board, depth: int) -> tuple:
        """The principal variation, read back from the transposition table."""
        pv = []
        seen = set()
        pushed = 0
        try:
            for _ in range(max(1, depth)):
                key = board.zobrist_hash()
                entry = self._tt.get(key)
                if entry is None or key in seen:
                    break
                seen.add(key)
                move = entry[3]
                if move is None or not board.is_legal(move):
                    break
                pv.append(move)
                board.push(move)
                pushed += 1
        finally:
            for _ in range(pushed):
                board.pop()
        return tuple(pv)


def _first(item: tuple) -> int:
    """Sort key: the score in a (score, ...) tuple."""
    return item[0]


def _tactical_moves(board) -> list:
    """Legal captures, en passant captures and promotions."""
    them = board.occupied_co[not board.turn]
    ep = board.ep_square
    targets = them | (1 << ep if ep is not None else 0)
    return [
        m for m in board.generate_legal_moves()
        if targets >> m.to_square & 1 or m.promotion is not None
    ]


def _history_keys(board) -> dict[int, int]:
    """Hashes of the earlier positions of the game that a search may repeat (since the last
    irreversible move), as a multiset; the root position itself is added by the root."""
    keys: dict[int, int] = {}
    probe = board.copy()
    for _ in range(min(board.halfmove_clock, len(board.move_stack))):
        probe.pop()
        key = probe.zobrist_hash()
        keys[key] = keys.get(key, 0) + 1
    return keys
