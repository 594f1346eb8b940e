"""benchmarks/peers.py divides by the plies each runner really played: its PGN counter is checked here."""

from __future__ import annotations

import importlib.util
import sys

import chess.pgn

from tests.conftest import REPO

_spec = importlib.util.spec_from_file_location("peers_bench", REPO / "benchmarks" / "peers.py")
assert _spec is not None and _spec.loader is not None
peers = importlib.util.module_from_spec(_spec)
sys.modules["peers_bench"] = peers
_spec.loader.exec_module(peers)

# Our style (move comments, SetUp/FEN, a ... start) and cutechess-cli's (a time loss, a
# variation, a NAG, a semicolon comment), two games.
_PGN = """[Event "a"]
[Site "cecp-runner"]
[Result "1/2-1/2"]
[SetUp "1"]
[FEN "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"]
[Termination "normal"]

1... Nc6 {-0.19/2 0.012s} 2. Nc3 {0.00/2 0.011s} 2... Nf6 {-0.16/2 0.007s} 3.
Nf3 {+0.10/2 0.006s, Draw by 3-fold repetition} 1/2-1/2

[Event "b"]
[Result "0-1"]

1. e4 $1 {+0.30/1 0.01s} e5 (1... c5 2. Nf3) 2. Nf3 ; a line comment
Nc6 3. Bb5 {White loses on time} 0-1

"""


def test_count_plies_matches_python_chess_and_finds_the_time_loss() -> None:
    """Games, plies (SAN tokens only) and time losses of a mixed PGN, python-chess as the oracle."""
    games, plies, forfeits = peers.count_plies(_PGN)
    import io

    stream = io.StringIO(_PGN)
    oracle_plies = 0
    oracle_games = 0
    while (game := chess.pgn.read_game(stream)) is not None:
        oracle_games += 1
        oracle_plies += sum(1 for _ in game.mainline_moves())
    assert (games, plies, forfeits) == (oracle_games, oracle_plies, 1) == (2, 9, 1)


def test_a_dropin_column_runs_the_peers_own_argv() -> None:
    """The drop-in columns measure the entry points on exactly the argv the peer is given."""
    from pathlib import Path

    w = peers.workloads(10)["stockfish"]
    for column, make in (("runner-fastchess", peers.fastchess_argv),
                         ("runner-cutechess", peers.cutechess_argv)):
        argv = make("peer", "stockfish", w, Path("out.pgn"))
        ours = peers.dropin_argv(column, argv)
        assert ours[3:] == argv[1:]
        assert f"from runner.dropin.main import {column.removeprefix('runner-')}" in ours[2]
    assert [r for r, _ in peers.runners_for(peers.workloads(10)["fairymax"], None, peers=(),
                                            dropins=tuple(peers.DROPINS))] == [
        peers.OURS, "runner-cutechess"]  # fastchess plays UCI engines only


def test_builds_are_columns_of_one_run_and_rows_of_the_table(capsys) -> None:
    """--builds compiled,pure: our CLI and the drop-ins once per build, interleaved in one
    plan; the README table prints a row per build, each with its ratio to the peers."""
    w = peers.workloads(2)["stockfish"]
    plan = [r for r, _ in peers.runners_for(w, None, peers=(), builds=["compiled", "pure"],
                                            dropins=("runner-fastchess",))]
    assert plan == [f"{peers.OURS}/compiled", f"{peers.OURS}/pure",
                    "runner-fastchess/compiled", "runner-fastchess/pure"]
    assert [peers.build_of(r) for r in plan] == ["compiled", "pure"] * 2
    assert peers.build_of(f"{peers.OURS}/uvloop") is None

    def column(name: str, cpu: float) -> object:
        return peers.Column(name, [peers.Sample(100, cpu, 1.0, 2.0, 1.5, 0)])

    results = {w.name: [column("fastchess", 0.01), *(column(name, cpu) for name, cpu in
                                                      zip(plan, (0.02, 0.04, 0.03, 0.05), strict=True))]}
    peers.print_markdown([w], results, {})
    peers.print_dropin_markdown([w], results)
    out = capsys.readouterr().out
    assert f"| workload | cutechess-cli | fastchess | {peers.OURS} |" in out
    assert "load 1.5: runner CPU per ply, compiled | – | 100 us | 200 us (2.00x fastchess) |" in out
    assert "load 1.5: runner CPU per ply, pure | – | 100 us | 400 us (4.00x fastchess) |" in out
    assert "| fastchess: 100 us | runner-fastchess (pure): 500 us (5.00x) |" in out


def test_kept_pgn_names_each_run_apart(tmp_path) -> None:
    """--keep-pgn gives every workload, runner and round its own file (a `/` in a column name
    such as cecp-runner/compiled is not a directory)."""
    workload = peers.workloads(100)["forfeit"]
    names = {peers.kept_pgn(tmp_path, workload, runner, repeat)
             for runner in ("cutechess-cli", "cecp-runner/compiled", "cecp-runner/pure")
             for repeat in (1, 2)}
    assert len(names) == 6
    assert all(path.parent == tmp_path and path.suffix == ".pgn" for path in names)
    assert tmp_path / "forfeit-cecp-runner-compiled-2.pgn" in names
