"""runner-fastchess's command line: fastchess 1.8.2's options, refusals, game order and openings.

The refusals are compared word for word with what the real fastchess (../shared/peers) prints
for the same argv; the schedule, colours and openings with the PGN a real fastchess run
writes; the games themselves with real fastchess games (stockfish at a fixed depth). Each
comparison with the peer is skipped when its binary or stockfish is absent.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import chess
import chess.pgn
import pytest

from runner.config.model import BookFormat, OpeningOrder, TablebaseResults, TournamentFormat
from runner.dropin.contract import DropinRun, Immediate, PeerUsageError
from runner.dropin.fastchess import parse
from runner.dropin.fastchess.args import OPTIONS, read_argv
from runner.dropin.fastchess.mt64 import FastchessShuffle, Mt19937_64
from runner.dropin.fastchess.resume import config_document
from runner.tournament.openings import OpeningPolicy
from runner.tournament.pairing import pairing_for

REPO = Path(__file__).resolve().parent.parent
FASTCHESS = REPO.parent / "shared" / "peers" / "fastchess"
BOOKS = REPO.parent / "shared" / "data" / "books"
EPD = BOOKS / "noob_3moves.epd"
DEMO_BOOK = REPO / "tests" / "data" / "small.epd"
"""A small book in the repository (the demo's positions, no comment lines: cutechess-cli and
fastchess read every line as a position): for tests that need some book, not a given one."""
PGN_BOOK = BOOKS / "8moves_v3.pgn"
FRC = BOOKS / "3moves_FRC.epd"
STOCKFISH = shutil.which("stockfish") or shutil.which("stockfish", path="/usr/games")
PEER = FASTCHESS.is_file() and os.access(FASTCHESS, os.X_OK)

needs_peer = pytest.mark.skipif(not PEER, reason=f"fastchess not found at {FASTCHESS}")
needs_stockfish = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
needs_books = pytest.mark.skipif(not EPD.is_file(), reason=f"no book at {EPD}")


def _fastchess(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/games"}
    return subprocess.run([str(FASTCHESS), *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


# -- mt19937_64 and fastchess's shuffle ---------------------------------------------------------


def test_mt19937_64_matches_the_cpp_reference_values() -> None:
    """The C++ standard's check value (the 10000th output of a default-seeded engine) and
    outputs of std::mt19937_64(42) printed by libstdc++."""
    engine = Mt19937_64()
    engine.discard(9999)
    assert engine() == 9981545732273789042
    seeded = Mt19937_64(42)
    assert [seeded() for _ in range(3)] == [
        13930160852258120406, 11788048577503494824, 13874630024467741450]


def test_fastchess_shuffle_matches_its_fisher_yates() -> None:
    """fastchess's loop (j = i + rand % (n - i) while i + 2 <= n) run in C++ on 0..9, seed
    12345, gave this order; positions asked out of order give the same answer."""
    expected = [6, 0, 7, 3, 1, 5, 4, 9, 2, 8]
    assert [FastchessShuffle(10, 12345)[i] for i in range(10)] == expected
    lazy = FastchessShuffle(10, 12345)
    assert (lazy[9], lazy[0], lazy[3]) == (8, 6, 3)


# -- options accepted --------------------------------------------------------------------------


def _run(argv: list[str]) -> DropinRun:
    answer = parse(argv)
    assert isinstance(answer, DropinRun)
    return answer


@needs_stockfish
@needs_books
def test_every_option_is_read_into_the_tournament() -> None:
    """A command line with most options: each lands in the tournament or the output settings."""
    run = _run([
        "-engine", "cmd=stockfish", "name=A", "tc=40/1:30+0.5", "option.Hash=8", "restart=on",
        "-engine", "cmd=stockfish", "name=B", "st=0.2", "timemargin=50", "proto=uci",
        "-each", "depth=3", "nodes=5000",
        "-openings", f"file={EPD}", "format=epd", "order=random", "start=3", "plies=4",
        "policy=round", "-srand", "99", "-games", "1", "-rounds", "7", "-noswap", "-reverse",
        "-draw", "movenumber=30", "movecount=6", "score=12", "-resign", "movecount=4",
        "score=700", "twosided=true", "-maxmoves", "150", "-sprt", "elo0=0", "elo1=5",
        "alpha=0.05", "beta=0.1", "model=logistic", "-recover", "-wait", "5",
        "-pgnout", "file=x.pgn", "nodes=true", "notation=lan", "min=true",
        "-epdout", "file=x.epd", "-event", "My", "Event", "-site", "here",
        "-ratinginterval", "3", "-scoreinterval", "2", "-report", "penta=false",
        "-output", "format=cutechess", "-crc32", "pgn=true", "-check-mate-pvs",
        "-show-latency", "-testEnv", "-strict", "-autosaveinterval", "0",
        "-config", "outname=resume.json", "-log", "file=log.txt", "level=info", "engine=true",
        "-startup-ms", "10000", "-ucinewgame-ms", "60000", "-ping-ms", "60000",
        "-concurrency", "1", "-force-concurrency", "-variant", "standard",
        "-tournament", "roundrobin", "-seeds", "1"])
    config = run.config
    a, b = config.engines
    assert (a.name, a.tc, a.options, a.restart.value) == (
        "A", "40/90+0.5 depth=3 nodes=5000", (("Hash", "8"),), "on")
    assert (b.name, b.tc) == ("B", "st=0.2 depth=3 nodes=5000 timemargin=50")
    assert config.format is TournamentFormat.MATCH
    assert (config.games, config.rounds, config.wait_ms, config.recover) == (1, 7, 5, True)
    assert config.order is not None
    assert (config.order.swap, config.order.reverse) == (False, True)
    openings = config.openings
    assert openings is not None
    assert (openings.format, openings.order, openings.seed, openings.start, openings.plies) == (
        BookFormat.EPD, OpeningOrder.RANDOM, 99, 3, 4)
    adj = config.adjudication
    assert adj.draw is not None and (adj.draw.movenumber, adj.draw.movecount, adj.draw.score) == (
        30, 6, 12)
    assert adj.resign is not None and adj.resign.twosided and adj.resign.score == 700
    assert adj.maxmoves == 150
    assert config.sprt is not None and (config.sprt.beta, config.sprt.model) == (0.1, "logistic")
    assert config.pgnout is None


@needs_stockfish
@needs_books
def test_the_same_argv_gives_the_same_run_name_and_seed() -> None:
    """Rerunning a command line (the resume) names the same tournament; without -srand the
    random order still comes out the same; another setting is another tournament."""
    words = ["-engine", "cmd=stockfish", "-engine", "cmd=stockfish", "-each", "depth=2",
             "-openings", f"file={EPD}", "order=random"]
    first, again = _run(words), _run(list(words))
    assert first.config.name == again.config.name
    assert first.config.openings == again.config.openings
    assert _run([*words, "-rounds", "4"]).config.name != first.config.name
    # More slots, or a PGN named after the clock, continue the same run with the same openings.
    busier = _run([*words, "-concurrency", "3", "-force-concurrency", "-pgnout"])
    assert busier.config.name == first.config.name
    assert busier.config.openings == first.config.openings


def test_version_and_help() -> None:
    """-version (every spelling) names fastchess's version first; -help says what differs."""
    for word in ("-version", "--version", "-v", "--v"):
        answer = parse([word])
        assert isinstance(answer, Immediate)
        assert answer.text.startswith("runner-fastchess 1.8.2 (cecp-runner ")
    for argv in (["-help"], ["--help"], []):
        answer = parse(argv)
        assert isinstance(answer, Immediate) and answer.exit_code == 0
        assert "database" in answer.text and "continues an interrupted run" in answer.text


def test_every_fastchess_option_is_known() -> None:
    """The table holds the 52 spellings fastchess 1.8.2 registers (cli.cpp registerOptions)."""
    assert len(OPTIONS) == 52
    assert {"-tbadjudicate", "-use-affinity", "-quick", "-ping-ms", "--v"} <= set(OPTIONS)


@needs_stockfish
@needs_books
def test_tablebase_options_map_to_tablebase_adjudication(tmp_path: Path) -> None:
    """-tb, -tbpieces, -tbignore50 and -tbadjudicate become the runner's tablebase rule."""
    tables = REPO.parent / "shared" / "data" / "syzygy"
    if not any(tables.glob("*.rtbw")):
        pytest.skip(f"no Syzygy tables in {tables}")
    run = _run(["-engine", "cmd=stockfish", "-engine", "cmd=stockfish", "-each", "depth=1",
                "-openings", f"file={EPD}", "-tb", str(tables), "-tbpieces", "4",
                "-tbignore50", "-tbadjudicate", "WIN_LOSS"])
    adj = run.config.adjudication
    assert adj.tablebases == (tables,)
    assert (adj.tbpieces, adj.tbignore50, adj.tbadjudicate) == (
        4, True, TablebaseResults.WIN_LOSS)


@needs_stockfish
@needs_books
def test_config_file_round_trip(tmp_path: Path) -> None:
    """The resume document written for a run reads back into the same tournament."""
    words = ["-engine", "cmd=stockfish", "name=x", "-engine", "cmd=stockfish", "name=y",
             "-each", "tc=10+0.1", "-openings", f"file={EPD}", "order=random", "-srand", "5",
             "-rounds", "6", "-draw", "movenumber=20", "movecount=4", "score=5"]
    first = _run(words)
    document = config_document(read_argv(words))
    document["seed"] = 5
    document["stats"] = {}
    saved = tmp_path / "config.json"
    saved.write_text(json.dumps(document))
    resumed = _run(["-config", f"file={saved}"])
    assert resumed.config == first.config


# -- refusals, word for word as fastchess -------------------------------------------------------

ENGINES = ["-engine", "cmd=stockfish", "-engine", "cmd=stockfish"]
REFUSED = [
    ["-games", "abc"],
    ["-foo"],
    ["-gmes", "3"],
    ["-ee"],
    ["-ep"],
    ["-pg"],
    ["-vv"],
    ["-ver"],
    ["-hel"],
    ["-tba"],
    ["-games"],
    ["-noswap", "x"],
    ["-engine"],
    ["-engine", "cmd"],
    ["-each", "foo=bar", "-engine", "cmd=x"],
    [*ENGINES],
    [*ENGINES, "-each", "tc=1+0.1", "st=1"],
    [*ENGINES, "-each", "tc=1", "-concurrency", "999"],
    [*ENGINES, "-each", "depth=1", "-variant", "fischerandom"],
    [*ENGINES, "-each", "depth=1", "-games", "3", "-rounds", "4", "-debug"],
    [*ENGINES, "-each", "depth=1", "-games", "3", "-rounds", "5", "-openings", f"file={EPD}"],
    ["-engine", "cmd=/nosuch", "-engine", "cmd=stockfish", "-each", "depth=1"],
    ["-sprt", "elo0=0", "elo1=5"],
    [*ENGINES, "-each", "depth=1", "-sprt", "elo0=5", "elo1=0", "alpha=0.05", "beta=0.05"],
    [*ENGINES, "-each", "depth=1", "-sprt", "elo0=0", "elo1=5", "alpha=0.5", "beta=0.5"],
    [*ENGINES, "-each", "depth=1", "-sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.05",
     "model=foo"],
    ["-engine", "cmd=stockfish", "proto=xboard"],
    ["-engine", "cmd=stockfish", "tc=1+hg"],
    ["-engine", "cmd=stockfish", "tc=40/"],
    ["-engine", "cmd=stockfish", "tc=0/10"],
    ["-engine", "cmd=stockfish", "timemargin=-5"],
    ["-engine", "cmd=stockfish", "restart=maybe"],
    ["-engine", "cmd=stockfish", "colour=red"],
    ["-openings", "file=/no/such.epd"],
    ["-openings", f"file={EPD}", "format=bin"],
    ["-openings", f"file={EPD}", "order=shuffled"],
    ["-openings", f"file={EPD}", "start=0"],
    ["-openings", f"file={EPD}", "policy=encounter"],
    ["-openings", f"file={EPD}", "plies=x"],
    ["-pgnout", "out.pgn"],
    ["-pgnout", "file=out.pgn", "notation=fan"],
    ["-pgnout", "file=out.pgn", "nodes=yes"],
    ["-epdout", "file=out.epd", "min=true"],
    ["-draw", "movenumber=40", "score=-1"],
    ["-resign", "movecount=3", "score=-600"],
    ["-draw", "moves=3"],
    ["-maxmoves", "1", "2"],
    ["-tbadjudicate", "WIN"],
    ["-variant", "atomic"],
    ["-tournament", "knockout"],
    ["-log", "file=x", "level=debug"],
    ["-report", "penta=maybe"],
    ["-output", "format=pgn"],
    ["-crc32", "epd=true"],
    ["-config", "colour=red"],
    ["-config", "file=/no/such.json"],
    ["-use-affinity", "5-3"],
    ["-quick", "cmd=a", "book=x.epd"],
    ["-quick", "cmd=a", "cmd=b", "book=x.txt"],
    ["-srand", "-5"],
    ["-startup-ms", "x"],
    [*ENGINES, "-each", "depth=1", "-tb", "/tmp"],
    [*ENGINES, "-each", "depth=1", "-openings", f"file={EPD}", "-rounds", "0"],
    [*ENGINES, "-each", "depth=1", "-games", "-1", "-rounds", "-1"],
    ["-games", "3000000000"],
    ["-concurrency", "1.5"],
    ["-engine", "cmd=stockfish", "tc=1:2:3"],
    ["-engine", "cmd=stockfish", "tc=10+"],
    ["-engine", "cmd=stockfish", "tc=-5"],
    ["-engine", "cmd=stockfish", "st=1_0"],
    ["-engine", "cmd=stockfish", "nodes=1e3"],
    ["-engine", "cmd=stockfish", "tc="],
    ["-draw", "movenumber=", "movecount=3"],
    ["-sprt", "elo0=nan"],
    ["-ratinginterval", "99999999999"],
    [*ENGINES, "-each", "depth=1", "-config", "outname=x.json", "discard=true"],
]


@needs_peer
@needs_stockfish
@pytest.mark.parametrize("argv", REFUSED, ids=[" ".join(a)[:60] for a in REFUSED])
def test_refusal_is_fastchess_own(argv: list[str], tmp_path: Path) -> None:
    """What fastchess prints for a command line it refuses (stdout, exit 1) is what we say."""
    theirs = _fastchess(argv, tmp_path)
    assert theirs.returncode == 1, theirs.stdout
    with pytest.raises(PeerUsageError) as refused:
        parse(argv)
    assert refused.value.exit_code == 1 and refused.value.stream == "stdout"
    assert refused.value.line == theirs.stdout.rstrip("\n")


@needs_stockfish
@needs_books
@pytest.mark.parametrize("argv, words", [
    (["-use-affinity", "0,1"], "-use-affinity with a CPU list"),
    (["-startup-ms", "500"], "-startup-ms 500"),
    (["-ping-ms", "1"], "-ping-ms 1"),
])
def test_what_the_runner_cannot_honour_is_refused(argv: list[str], words: str) -> None:
    """A setting the runner cannot keep is one line naming it, never a silent default."""
    with pytest.raises(PeerUsageError) as refused:
        parse([*ENGINES, "-each", "depth=1", "-openings", f"file={EPD}", *argv])
    assert refused.value.line.startswith(f"runner-fastchess: {words} ")
    assert "\n" not in refused.value.line


# -- the same schedule, colours and openings as fastchess ----------------------------------------


def _peer_games(pgn: Path) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """(White, Black, start FEN, first book moves) of every game, in file order."""
    out = []
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            board = game.board()
            moves = tuple(m.uci() for m in game.mainline_moves())
            out.append((game.headers["White"], game.headers["Black"], board.fen(), moves))
    return out


def _our_schedule(run: DropinRun) -> list[tuple[str, str, str, tuple[str, ...]]]:
    pairing = pairing_for(run.config)
    policy = OpeningPolicy(run.config)
    out = []
    for game in pairing:
        opening = policy.for_pair(game.pair)
        assert opening is not None
        board = chess.Board(opening.fen, chess960=opening.chess960)
        for move in opening.moves:
            board.push_uci(move)
        out.append((game.white, game.black, board.fen(), opening.moves))
    return out


SCHEDULES = {
    "round-robin, random, start": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-engine", "cmd=stockfish", "name=c", "-each", "tc=inf", "depth=1", "-games", "2",
        "-rounds", "3", "-openings", f"file={EPD}", "format=epd", "order=random", "start=5",
        "-srand", "7"],
    "gauntlet, one game per encounter": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-engine", "cmd=stockfish", "name=c", "-each", "depth=1", "-games", "1", "-rounds", "3",
        "-tournament", "gauntlet", "-openings", f"file={EPD}", "order=random", "-srand", "11"],
    "pgn book, plies, noswap": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-each", "depth=1", "-rounds", "3", "-noswap",
        "-openings", f"file={PGN_BOOK}", "order=random", "plies=4", "-srand", "3"],
    "sequential, reverse, -games 3 swaps": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-each", "depth=1", "-games", "4", "-rounds", "2", "-reverse",
        "-openings", f"file={EPD}", "start=150000"],
    "chess960": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-each", "depth=1", "-rounds", "2", "-variant", "fischerandom",
        "-openings", f"file={FRC}", "order=random", "-srand", "42"],
}


@needs_peer
@needs_stockfish
@needs_books
@pytest.mark.parametrize("name", list(SCHEDULES))
def test_games_colours_and_openings_follow_fastchess(name: str, tmp_path: Path) -> None:
    """Game by game (concurrency 1: fastchess writes them in game order), the same White,
    Black and start position (book moves included) as a real fastchess run."""
    argv = SCHEDULES[name]
    pgn = tmp_path / "peer.pgn"
    theirs = _fastchess([*argv, "-pgnout", f"file={pgn}"], tmp_path)
    assert theirs.returncode == 0, theirs.stdout
    peer = _peer_games(pgn)
    ours = _our_schedule(_run(argv))
    assert len(ours) == len(peer)
    for number, (mine, real) in enumerate(zip(ours, peer, strict=True), 1):
        white, black, fen, book = mine
        assert (white, black) == real[:2], f"game {number}"
        board = chess.Board(fen, chess960=True)
        start = chess.Board(real[2], chess960=True)
        # fastchess's PGN holds the book moves after its FEN: replay them to compare.
        for move in real[3][: len(book)]:
            start.push_uci(move)
        assert board.board_fen() == start.board_fen(), f"game {number}"


# -- whole games against the real fastchess ----------------------------------------------------


class _Collect:
    """A bare output: keeps each finished game's number and moves."""

    def __init__(self) -> None:
        self.games: dict[int, tuple[str, str, tuple[str, ...], str]] = {}

    def resumed(self, games: object) -> None:
        """Nothing resumes in a fresh database."""

    def game_started(self, event: object) -> None:
        """Nothing to do."""

    def game_finished(self, event: object) -> None:
        """Keep the game."""
        job, record = event.job, event.record  # type: ignore[attr-defined]
        self.games[job.index + 1] = (job.white, job.black,
                                     tuple(m.uci for m in record.moves), event.result)  # type: ignore[attr-defined]

    def notice(self, event: object) -> None:
        """Nothing to do."""

    def run_ended(self, outcome: object, *, interrupted: bool) -> None:
        """Nothing to do."""

    def exit_code(self, outcome: object) -> int:
        """Always 0."""
        return 0


WHOLE_GAMES = {
    "match, random book, draw and resign": [
        "-engine", "cmd=stockfish", "name=a", "option.Threads=1", "-engine", "cmd=stockfish",
        "name=b", "-each", "depth=5", "-rounds", "3", "-openings", f"file={EPD}",
        "order=random", "-srand", "2024", "-draw", "movenumber=30", "movecount=4", "score=10",
        "-resign", "movecount=3", "score=500"],
    "chess960 gauntlet, one game each, maxmoves": [
        "-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
        "-engine", "cmd=stockfish", "name=c", "-each", "depth=4", "-games", "1",
        "-rounds", "2", "-tournament", "gauntlet", "-variant", "fischerandom",
        "-openings", f"file={FRC}", "order=random", "-srand", "9", "-maxmoves", "40"],
}


@needs_peer
@needs_stockfish
@needs_books
@pytest.mark.parametrize("name", list(WHOLE_GAMES))
def test_whole_games_are_fastchess_games(name: str, tmp_path: Path) -> None:
    """stockfish at a fixed depth, random book order with -srand, adjudications: the games
    played through runner-fastchess's tournament are move for move fastchess's."""
    argv = WHOLE_GAMES[name]
    pgn = tmp_path / "peer.pgn"
    theirs = _fastchess([*argv, "-pgnout", f"file={pgn}"], tmp_path)
    assert theirs.returncode == 0, theirs.stdout
    real = []
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            real.append((game.headers["White"], game.headers["Black"],
                         tuple(m.uci() for m in game.mainline_moves()), game.headers["Result"]))
    run = _run(argv)
    collect = _Collect()
    run = DropinRun(peer=run.peer, config=run.config, make_output=lambda _s: collect,
                    db_url=f"sqlite:///{tmp_path / 'runner.db'}")
    from runner.dropin.driver import play

    assert play(run, stdout=io.StringIO(), stderr=io.StringIO()) == 0
    ours = [collect.games[n] for n in sorted(collect.games)]
    assert ours == real


@needs_peer
@needs_stockfish
@needs_books
def test_config_file_written_by_fastchess(tmp_path: Path) -> None:
    """fastchess's own resume file is read (its settings, engines, seed); the games its stats
    count are not in the runner's database, so continuing from them is refused in one line,
    and stats=false plays the whole tournament as fastchess would."""
    argv = ["-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
            "-each", "depth=1", "-rounds", "2", "-openings", f"file={EPD}", "order=random",
            "-srand", "77", "-config", "outname=saved.json"]
    assert _fastchess(argv, tmp_path).returncode == 0
    saved = tmp_path / "saved.json"
    with pytest.raises(PeerUsageError) as refused:
        parse(["-config", f"file={saved}"])
    assert "4 games fastchess itself played" in refused.value.line
    run = _run(["-config", f"file={saved}", "stats=false"])
    direct = _run(argv)
    assert run.config.engines == direct.config.engines
    assert run.config.openings == direct.config.openings


def test_resume_stats_count_as_fastchess_counts() -> None:
    """Wins, losses and draws of the first engine of each encounter, pairs by their score."""
    from runner.dropin.fastchess.resume import results_stats

    games = [("a", "b", 0, "1-0"), ("b", "a", 0, "1-0"), ("a", "b", 1, "1/2-1/2"),
             ("b", "a", 1, "0-1"), ("c", "a", 2, "1/2-1/2")]
    stats = results_stats(games, ["a", "b", "c"], penta=True)
    assert stats["a vs b"]["wins"] == 2 and stats["a vs b"]["losses"] == 1
    assert stats["a vs b"]["penta_WL"] == 1 and stats["a vs b"]["penta_WD"] == 1
    assert stats["a vs c"]["draws"] == 1 and stats["a vs c"]["penta_DD"] == 0


# -- recorded from fastchess 1.8.2 (the runs above), for machines without the peer -------------


def test_schedule_recorded_from_fastchess() -> None:
    """fastchess's "Started game N of T (W vs B)" lines of two recorded runs: a three-engine
    round-robin (-games 2 -rounds 3) and a gauntlet with one game per encounter."""
    from runner.dropin.fastchess.order import fastchess_order, fastchess_pairing

    rr = fastchess_pairing(["a", "b", "c"], fastchess_order(), gauntlet=False, rounds=3, games=2)
    assert [(g.white, g.black) for g in rr] == 3 * [
        ("a", "b"), ("b", "a"), ("a", "c"), ("c", "a"), ("b", "c"), ("c", "b")]
    assert [g.pair for g in rr][:6] == [0, 0, 1, 1, 2, 2]
    gauntlet = fastchess_pairing(["a", "b", "c"], fastchess_order(), gauntlet=True, rounds=2,
                                 games=1)
    assert [(g.white, g.black) for g in gauntlet] == [
        ("a", "b"), ("c", "a"), ("a", "b"), ("c", "a")]
    swapped = fastchess_pairing(["a", "b"], fastchess_order(noswap=True, reverse=True),
                                gauntlet=False, rounds=2, games=2)
    assert {(g.white, g.black) for g in swapped} == {("b", "a")}


@needs_stockfish
@needs_books
def test_openings_recorded_from_fastchess() -> None:
    """The start positions fastchess 1.8.2 played in its round-robin of three engines
    (noob_3moves.epd, order=random, start=5, -srand 7, -rounds 3): one opening per encounter,
    the book cut to three entries and dealt round and round."""
    run = _run(["-engine", "cmd=stockfish", "name=a", "-engine", "cmd=stockfish", "name=b",
                "-engine", "cmd=stockfish", "name=c", "-each", "depth=1", "-rounds", "3",
                "-openings", f"file={EPD}", "order=random", "start=5", "-srand", "7"])
    openings = OpeningPolicy(run.config)
    first = [openings.for_pair(game.pair) for game in pairing_for(run.config)]
    fens = [" ".join(o.fen.split()[:1]) for o in first if o is not None]
    assert fens[:6:2] == ["rnbqkb1r/pp2pppp/3p1n2/2p5/8/P1P3P1/1P1PPP1P/RNBQKBNR",
                          "rnbqk1nr/pppp1pbp/6p1/4p3/3P4/1QP5/PP2PPPP/RNB1KBNR",
                          "rnbqk2r/ppppppbp/5np1/8/1P6/3PP3/P1P2PPP/RNBQKBNR"]
    assert fens[6:] == fens[:6] + fens[:6]


def test_wait_reaches_the_scheduler() -> None:
    """-wait N (milliseconds) is the pause each game slot takes after a game."""
    from runner.config.model import EngineSpec, TournamentConfig, TournamentFormat
    from runner.tournament.runtime import local_scheduler

    engine = EngineSpec(name="e", command=("e",), written_command=("e",), tc="inf depth=1")
    other = dataclasses.replace(engine, name="f")
    config = TournamentConfig(name="t", format=TournamentFormat.MATCH, engines=(engine, other),
                              wait_ms=250)
    assert local_scheduler(config, 1).wait == 0.25
    assert local_scheduler(dataclasses.replace(config, wait_ms=0), 1).wait == 0


# -- accepted as fastchess accepts: its start-up lines up to the first game ---------------------

ACCEPTED = [
    [*ENGINES, "-each", "depth=1", "-openings", f"file={EPD}", "order=random",
     "-concurrency", "0", "-pgnout"],
    [*ENGINES, "-each", "depth=1", "-sprt", "elo0=0", "elo1=2", "alpha=0.05", "beta=0.05",
     "model=bayesian"],
    ["-quick", "cmd=stockfish", "cmd=stockfish", f"book={EPD}"],
    [*ENGINES, "name=x", "-each", "tc=8+0.08", "option.Hash=4", "restart=on", "-openings",
     f"file={PGN_BOOK}", "plies=6", "start=9", "policy=round", "-pgnout", "file=o.pgn",
     "nodes=true", "seldepth=true", "nps=true", "hashfull=true", "tbhits=true", "pv=true",
     "timeleft=true", "latency=true", "min=false", "match_line=^info", "notation=uci",
     "-epdout", "file=o.epd", "append=false", "-event", "E", "-site", "S", "-log", "file=l.txt",
     "level=trace", "engine=true", "-report", "penta=false", "-output", "format=cutechess",
     "-crc32", "pgn=true", "-check-mate-pvs", "-show-latency", "-testEnv", "-strict",
     "-autosaveinterval", "5", "-ratinginterval", "3", "-scoreinterval", "2", "-seeds", "1",
     "-tournament", "gauntlet", "-noswap", "-reverse", "-wait", "0", "-recover",
     "-variant", "standard", "-repeat", "-games", "1", "-srand", "3", "-use-affinity",
     "-startup-ms", "10000", "-ucinewgame-ms", "60000", "-ping-ms", "60000",
     "-draw", "movenumber=20", "movecount=3", "score=8", "-resign", "movecount=3",
     "score=400", "twosided=true", "-maxmoves", "100", "-tbpieces", "5", "-tbignore50",
     "-tbadjudicate", "DRAW", "-force-concurrency", "-concurrency", "3"],
    [*ENGINES, "-each", "st=0.1", "timemargin=20", "-variant", "fischerandom", "-openings",
     f"file={FRC}", "format=epd", "order=sequential", "-repeat", "1"],
    [*ENGINES, "-each", "depth=1", "-tb", str(REPO.parent / "shared" / "data" / "syzygy"),
     "-openings", f"file={EPD}"],
    [*ENGINES, "-each", "tc=inf/0:10+0.1s", "-concurrency", "-1", "-draw", "movenumber=-5",
     "movecount=2", "score=3", "-event", "-5", "-openings", f"file={EPD}", "format=pgn",
     "format=epd"],
    [*ENGINES, "-each", "tc=40/1:30", "-each", "timemargin=100", "-openings", f"file={EPD}",
     "-config", "outname=x.json", "stats=false"],
]


@needs_peer
@needs_stockfish
@needs_books
@pytest.mark.parametrize("argv", ACCEPTED, ids=[" ".join(a)[:60] for a in ACCEPTED])
def test_accepted_as_fastchess_accepts(argv: list[str], tmp_path: Path) -> None:
    """fastchess takes these command lines; a final ``-rounds 0`` stops it (and us) just before
    the first game, so every line printed while reading and checking the options is
    compared, word for word."""
    words = [*argv, "-rounds", "0"]
    theirs = _fastchess(words, tmp_path)
    assert theirs.stdout.rstrip("\n").endswith(
        "Invalid number of players, rounds, or games per round"), theirs.stdout
    with pytest.raises(PeerUsageError) as refused:
        parse(words)
    assert refused.value.line == theirs.stdout.rstrip("\n")


@needs_stockfish
def test_a_crash_without_recover_stops_the_run(tmp_path: Path) -> None:
    """fastchess without -recover stops at the first crash (its output: "Game 1 stalled /
    disconnected and no recover option set for engine, stopping tournament."): the run plays
    no game after it. With -recover the engine is restarted and every game is played."""
    import sys

    bad = ["-engine", f"cmd={sys.executable}", "args=-m engine --uci --fault crash@3",
           "name=bad", "-engine", "cmd=stockfish", "name=good", "-each", "depth=2",
           "-rounds", "3", "-openings", f"file={DEMO_BOOK}"]
    from runner.dropin.driver import play

    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(REPO)
    try:
        played = {}
        for extra in ([], ["-recover"]):
            collect = _Collect()
            run = _run([*bad, *extra])
            assert run.config.crash_stops == (not extra)
            run = DropinRun(peer=run.peer, config=run.config,
                            make_output=lambda _s, out=collect: out,  # type: ignore[misc]
                            db_url=f"sqlite:///{tmp_path / f'r{len(extra)}.db'}")
            play(run, stdout=io.StringIO(), stderr=io.StringIO())
            played[bool(extra)] = sorted(collect.games)
    finally:
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
    assert played[False] == [1]
    assert played[True] == [1, 2, 3, 4, 5, 6]


def test_sprt_counts_games_without_pentanomial_reports() -> None:
    """fastchess's SPRT counts single games when it reports no game pairs (-games 1, -report
    penta=false, cutechess output): one game is enough for a trinomial SPRT state."""
    from runner.stats import SprtSpec
    from runner.tournament.scoreboard import Scoreboard

    board = Scoreboard(["a", "b"])
    board.pairing("a", "b")
    board.add("a", "b", "1-0", 0)
    spec = SprtSpec(elo0=0.0, elo1=10.0, alpha=0.05, beta=0.05)
    assert board.sprt_state("a", "b", spec) is None
    state = board.sprt_state("a", "b", spec, trinomial=True)
    assert state is not None and state.llr > 0


@needs_peer
@needs_stockfish
@needs_books
@pytest.mark.parametrize(("extra", "elo1", "rounds"), [
    (["-games", "1"], "25", "40"),
    # Longer SPRT runs (about 20 s each): with the slow tests.
    pytest.param(["-report", "penta=false"], "150", "200", marks=pytest.mark.slow),
    pytest.param([], "150", "200", marks=pytest.mark.slow),
])
def test_sprt_stops_where_fastchess_stops(extra: list[str], elo1: str, rounds: str,
                                          tmp_path: Path) -> None:
    """A strong engine against a weak one under -sprt: the run ends after the same game, with
    the same results, as fastchess's (pentanomial with game pairs, trinomial otherwise; with
    -games 1 and a narrow hypothesis the 40 games end before a decision, in both). The wide
    hypothesis elsewhere decides within some 90 games, which keeps the test short."""
    argv = ["-engine", "cmd=stockfish", "name=strong", "depth=4", "-engine", "cmd=stockfish",
            "name=weak", "depth=1", "-rounds", rounds, *extra, "-openings", f"file={EPD}",
            "order=random", "-srand", "5", "-sprt", "elo0=0", f"elo1={elo1}", "alpha=0.05",
            "beta=0.05"]
    pgn = tmp_path / "peer.pgn"
    theirs = _fastchess([*argv, "-pgnout", f"file={pgn}"], tmp_path)
    assert theirs.returncode == 0, theirs.stdout
    real = []
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            real.append(game.headers["Result"])
    run = _run(argv)
    assert run.config.sprt_trinomial == bool(extra)
    collect = _Collect()
    run = DropinRun(peer=run.peer, config=run.config, make_output=lambda _s: collect,
                    db_url=f"sqlite:///{tmp_path / 'runner.db'}")
    from runner.dropin.driver import play

    play(run, stdout=io.StringIO(), stderr=io.StringIO())
    assert [collect.games[n][3] for n in sorted(collect.games)] == real


def test_libstdcxx_string_hash_and_map_order() -> None:
    """std::hash<std::string> values printed by libstdc++ (GCC 12), and the order its
    unordered_map lists fastchess's options in (the order its suggestions break ties by)."""
    from runner.dropin.fastchess.stdhash import hash_bytes, iteration_order

    assert hash_bytes(b"") == 6142509188972423790
    assert hash_bytes(b"-engine") == 6331546772885810979
    order = iteration_order(OPTIONS)
    assert sorted(order) == sorted(OPTIONS)
    assert order[:4] == ["-ping-ms", "-ucinewgame-ms", "-check-mate-pvs", "-use-affinity"]
