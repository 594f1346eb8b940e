"""runner-cutechess's command line: every option and refusal against the real cutechess-cli
1.5.1, and its schedule (game numbers, colours, rounds, openings) against the games the real
cutechess-cli plays with fairymax (a CECP engine) at depth 1.

The comparisons run the binary in ../shared/peers (skipped with the reason when it, its Qt
library or fairymax is absent); python-chess reads its PGN (the test oracle only).
"""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import chess
import chess.pgn
import pytest

from runner.config.model import TournamentConfig
from runner.dropin.contract import DropinRun, Immediate, PeerUsageError
from runner.dropin.cutechess import parse
from runner.dropin.cutechess.order import cutechess_order
from runner.dropin.cutechess.schedule import cutechess_pairing
from runner.dropin.cutechess.suite import CutechessSuite, Mersenne, cutechess_epd_fen, knuth_shuffle
from runner.tournament.openings import OpeningPolicy
from runner.tournament.pairing import pairing_for

REPO = Path(__file__).resolve().parent.parent
PEER = REPO.parent / "shared" / "peers" / "cutechess-cli"
BOOKS = REPO.parent / "shared" / "data" / "books"
EPD_BOOK = BOOKS / "noob_3moves.epd"
PGN_BOOK = BOOKS / "8moves_v3.pgn"
FRC_BOOK = BOOKS / "3moves_FRC.epd"
DEMO_BOOK = REPO / "tests" / "data" / "small.epd"
"""A small book in the repository (the demo's positions, no comment lines: cutechess-cli and
fastchess read every line as a position): for tests that need some book, not a given one."""
FAIRYMAX = shutil.which("fairymax", path="/usr/games:/usr/local/games:"
                        + os.environ.get("PATH", ""))


def _peer_runs() -> str | None:
    """Why the real cutechess-cli cannot run here, or None when it can."""
    if not PEER.exists():
        return f"cutechess-cli is not in {PEER.parent}"
    try:
        done = subprocess.run([str(PEER), "-version"], capture_output=True, timeout=30,
                              check=False)
    except OSError as exc:
        return f"cutechess-cli does not start: {exc}"
    if done.returncode != 0:
        return f"cutechess-cli does not start (libqt6core6 missing?): {done.stderr[:200]!r}"
    return None


_WHY_NOT = _peer_runs()
needs_peer = pytest.mark.skipif(_WHY_NOT is not None, reason=_WHY_NOT or "")
needs_fairymax = pytest.mark.skipif(FAIRYMAX is None, reason="fairymax is not installed "
                                    "(apt-get install fairymax)")
needs_stockfish = pytest.mark.skipif(shutil.which("stockfish", path=os.environ.get("PATH", "")
                                                  + ":/usr/games") is None,
                                     reason="stockfish is not installed (apt-get install stockfish)")

TWO = ["-engine", "cmd=fairymax", "proto=xboard", "name=a",
       "-engine", "cmd=fairymax", "proto=xboard", "name=b"]
INF = ["-each", "tc=inf"]


def _ours(argv: list[str]) -> tuple[str, int]:
    """Our refusal of `argv`: (its lines, exit status)."""
    with pytest.raises(PeerUsageError) as refused:
        parse(argv)
    return refused.value.line, refused.value.exit_code


def _theirs(argv: list[str], cwd: Path) -> tuple[str, int]:
    """The real cutechess-cli's refusal of `argv`: (its stderr, exit status)."""
    done = subprocess.run([str(PEER), *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=30, stdin=subprocess.DEVNULL, check=False)
    return done.stderr.rstrip("\n"), done.returncode


# Command lines cutechess-cli refuses: ours must say the same lines with the same status.
REFUSED = [
    ["-foo"],
    [],
    [*TWO, *INF, "-games"],
    [*TWO, *INF, "-games", "x"],
    [*TWO, *INF, "-games", "0"],
    [*TWO, *INF, "-games", "5.0"],
    [*TWO, *INF, "-games", "+3", "-rounds", "0"],
    [*TWO, *INF, "-games", "2", "-games", "3"],
    [*TWO, *INF, "-srand", "-5"],
    [*TWO, *INF, "-srand", "x"],
    [*TWO, *INF, "-debug"],
    [*TWO, *INF, "-debug", "foo"],
    [*TWO, *INF, "-bookmode"],
    [*TWO, *INF, "-bookmode", "ram", "disk"],
    [*TWO, *INF, "-bookmode", "rom"],
    [*TWO, *INF, "-draw", "movenumber=3"],
    [*TWO, *INF, "-draw", "foo=3", "movenumber=1"],
    [*TWO, *INF, "-draw"],
    [*TWO, *INF, "-draw", "movenumber=1", "movecount=x", "score=3"],
    [*TWO, *INF, "-resign", "movecount=3"],
    [*TWO, *INF, "-resign", "movecount=3", "score=5", "score=6"],
    [*TWO, *INF, "-noswap", "1"],
    [*TWO, *INF, "-reverse", "x"],
    [*TWO, *INF, "-recover", "yes"],
    [*TWO, *INF, "-tbignore50", "1"],
    [*TWO, *INF, "foo=1"],
    [*TWO, *INF, "-tournament", "foo"],
    [*TWO, *INF, "-tournament", "foo", "-games", "x"],
    [*TWO, *INF, "-tournament", "knockout", "-rounds", "2"],
    ["-engine", "cmd=fairymax", "proto=xboard", "name=a", "foo=1", "-engine", "cmd=fairymax",
     *INF],
    ["-engine", "cmd=fairymax", "proto=xb", "-engine", "cmd=fairymax", *INF],
    ["-engine", "cmd=fairymax", "name=a", "-engine", "cmd=fairymax", *INF],
    ["-engine", "proto=xboard", "name=a", "-engine", "cmd=fairymax", "proto=xboard", *INF],
    ["-engine", "cmd=fairymax", "proto=xboard", *INF],
    ["-engine", "proto=xboard", *INF],
    [*TWO, "-each", "depth=1"],
    [*TWO, "-each", "tc=foo"],
    [*TWO, "-each", "tc=hg5+1"],
    [*TWO],
    ["-engine", "cmd=fairymax", "proto=xboard", "tc=10", "-engine", "cmd=fairymax",
     "proto=xboard"],
    [*TWO, "-each", "tc=inf", "st=0"],
    [*TWO, "-each", "tc=inf", "restart=maybe"],
    [*TWO, "-each", "tc=inf", "tscale=500"],
    [*TWO, "-each", "tc=inf", "tscale=x"],
    [*TWO, "-each", "tc=inf", "conf=nothere"],
    [*TWO, "-each", "tc=inf", "bookdepth=0"],
    [*TWO, "-each", "tc=inf", "depth=x"],
    [*TWO, "-each", "tc=inf", "nodes=-1"],
    [*TWO, "-each", "tc=inf", "timemargin=-1"],
    [*TWO, "-each", "foo", "tc=inf"],
    [*TWO, *INF, "-openings", "file=nothere.epd", "format=epd"],
    [*TWO, *INF, "-openings", "file=x", "format=fen"],
    [*TWO, *INF, "-openings", "format=epd"],
    [*TWO, *INF, "-openings"],
    [*TWO, *INF, "-openings", "file=x", "order=shuffle"],
    [*TWO, *INF, "-openings", "file=x", "policy=odd"],
    [*TWO, *INF, "-openings", "file=x", "plies=0"],
    [*TWO, *INF, "-openings", "file=x", "start=0"],
    [*TWO, *INF, "-openings", "file=x", "file=y"],
    [*TWO, *INF, "-pgnout", "a.pgn", "max"],
    [*TWO, *INF, "-pgnout"],
    [*TWO, *INF, "-pgnout", "a", "b", "c", "d"],
    [*TWO, *INF, "-epdout"],
    [*TWO, *INF, "-repeat", "0"],
    [*TWO, *INF, "-repeat", "2", "3"],
    [*TWO, *INF, "-variant", "foo"],
    [*TWO, *INF, "-concurrency", "0"],
    [*TWO, *INF, "-maxmoves", "-1"],
    [*TWO, *INF, "-tb", "/nonexistent"],
    [*TWO, *INF, "-tbpieces", "2"],
    [*TWO, *INF, "-sprt", "elo0=0", "elo1=5"],
    [*TWO, *INF, "-sprt", "elo0=0", "elo1=5", "alpha=x", "beta=0.05"],
    [*TWO, *INF, "-wait", "-1"],
    [*TWO, *INF, "-seeds", "-1"],
    [*TWO, *INF, "-ratinginterval", "x"],
    [*TWO, *INF, "-outcomeinterval", "1.5"],
    [*TWO, *INF, "-event"],
    [*TWO, *INF, "-site"],
    [*TWO, *INF, "-resultformat"],
    # The order cutechess-cli checks in is its own, not the command line's.
    [*TWO, *INF, "-wait", "-1", "-games", "0"],
    [*TWO, *INF, "-seeds", "x", "-concurrency", "0"],
]


@needs_peer
@pytest.mark.parametrize("argv", REFUSED, ids=lambda argv: " ".join(argv[-4:]) or "empty")
def test_refusals_are_cutechess_clis(argv: list[str], tmp_path: Path) -> None:
    """What cutechess-cli refuses we refuse with its very lines and its exit status."""
    theirs = _theirs(argv, tmp_path)
    assert theirs[1] != 0, f"cutechess-cli accepted {argv}: not a refusal case"
    cwd = Path.cwd()
    os.chdir(tmp_path)
    try:
        assert _ours(argv) == theirs
    finally:
        os.chdir(cwd)


def test_refusals_without_the_peer() -> None:
    """A few refusals word for word, checked without the binary (the same as it prints)."""
    assert _ours(["-foo"]) == ('Warning: Unknown option: "-foo"', 1)
    assert _ours([*TWO, *INF, "-draw", "movenumber=3"]) == (
        'Warning: Option "-draw" needs argument(s): "movecount", "score"\n'
        'Warning: Invalid value for option "-draw": "movenumber=3"', 1)
    assert _ours([*TWO, "-each", "tc=inf", "foo=1"]) == (
        'Warning: Invalid engine option: "foo"\n'
        "Warning: Invalid or missing time control", 1)
    assert _ours([*TWO, *INF, "-debug"]) == ('Warning: Empty value for option "-debug"', 1)


@pytest.mark.parametrize(("words", "why"), [
    (["-tournament", "knockout"], "knockout"),
    (["-variant", "atomic"], "-variant atomic"),
    (["book=x.bin"], "book=x.bin"),
    (["trust"], "trust"),
    (["tc=hg10"], "hourglass"),
    (["depth=0"], None),
])
def test_what_the_runner_cannot_play_is_refused(words: list[str], why: str | None) -> None:
    """An option cutechess-cli honours and the runner cannot is refused, saying which."""
    keys = [word for word in words if not word.startswith("-") and "=" in word
            or word == "trust"]
    options = [word for word in words if word not in keys]
    argv = [*TWO, *options, "-each", "tc=1+0.1", *keys]
    if why is None:  # cutechess-cli's own refusal comes first
        assert _ours(argv)[0].startswith("Warning: ")
        return
    line, status = _ours(argv)
    assert status == 1 and line.startswith("runner-cutechess: ") and why in line


def test_version_help_engines_resultformat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           ) -> None:
    """The answers without a run: the version names cutechess-cli's release first; the first
    such word anywhere on the line answers; -resultformat help exits 1 as cutechess-cli."""
    for word in ("-version", "--version", "-v"):
        answer = parse(["-games", "x", word])
        assert isinstance(answer, Immediate) and answer.exit_code == 0
        assert answer.text.startswith("runner-cutechess 1.5.1 (cecp-runner ")
    helped = parse(["-help", "-version"])
    assert isinstance(helped, Immediate) and helped.text.startswith("Usage:")
    assert "-openings" in helped.text and "database" in helped.text
    assert "continues an interrupted run" in helped.text
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engines.json").write_text(
        '[{"name": "fm", "command": "fairymax", "protocol": "xboard"}, {"name": "sf"}]')
    listed = parse(["-engines"])
    assert isinstance(listed, Immediate) and listed.text == "fm\nsf\n"
    formats = parse(["-resultformat", "help"])
    assert isinstance(formats, Immediate) and formats.exit_code == 1
    assert "wide3 \n   Rank,Name,TC,Elo,Error,Games,WLDStats,DrawStats,Terminations" in formats.text


@needs_peer
def test_resultformat_help_matches(tmp_path: Path) -> None:
    """-resultformat help prints cutechess-cli's list."""
    done = subprocess.run([str(PEER), "-resultformat", "help"], capture_output=True, text=True,
                          cwd=tmp_path, timeout=30, check=False)
    answer = parse(["-resultformat", "help"])
    assert isinstance(answer, Immediate)
    assert (answer.text, answer.exit_code) == (done.stdout, done.returncode)


def _run(argv: list[str]) -> DropinRun:
    run = parse(argv)
    assert isinstance(run, DropinRun)
    return run


@needs_fairymax
def test_accepted_line_becomes_the_tournament(tmp_path: Path) -> None:
    """Each option lands in the configuration or the output settings, with cutechess-cli's
    defaults where it is not given; -each keys come after each engine's own (they win)."""
    run = _run(["-engine", "cmd=fairymax", "proto=xboard", "name=a", "tc=1+1", "st=2",
                "option.Hash=16", "-engine", "cmd=fairymax", "proto=uci", "name=b",
                "-each", "tc=40/1:00+0.5", "timemargin=50", "initstr=memory 8\\nponder",
                "-games", "3", "-rounds", "2", "-repeat", "-noswap", "-reverse", "-seeds", "1",
                "-draw", "movenumber=30", "movecount=5", "score=8",
                "-resign", "movecount=4", "score=700", "twosided=true", "-maxmoves", "90",
                "-sprt", "elo0=0", "elo1=5", "alpha=0.05", "beta=0.1", "-event", "E",
                "-site", "S", "-ratinginterval", "10", "-outcomeinterval", "5",
                "-resultformat", "wide", "-pgnout", str(tmp_path / "o.pgn"), "min", "fi",
                "-epdout", str(tmp_path / "o.epd"), "-recover", "-wait", "250",
                "-concurrency", "2", "-bookmode", "disk",
                "-openings", f"file={DEMO_BOOK}", "format=epd", "order=random", "start=3",
                "policy=encounter", "-srand", "42"])
    config = run.config
    a, b = config.engines
    assert (a.name, a.tc) == ("a", "st=2 timemargin=50")  # st= and tc= both: st governs
    assert b.tc == "tc=40/60+0.5 timemargin=50"
    assert a.protocol.value == "cecp" and b.protocol.value == "uci"
    assert a.options_dict == {"Hash": "16"}
    assert a.init_strings == ("memory 8", "ponder")
    assert a.dir == Path(os.environ.get("TMPDIR", "/tmp")).resolve()
    assert config.order == cutechess_order(
        tournament="round-robin", games=3, rounds=2, repeat=2, policy="encounter", swap=False,
        reverse=True, seeds=1, srand=42)
    assert config.start_delay_ms == 250
    assert config.concurrency == 2 and config.recover
    adj = config.adjudication
    assert adj.draw is not None and (adj.draw.movenumber, adj.draw.movecount,
                                     adj.draw.score) == (30, 5, 8)
    assert adj.resign is not None and (adj.resign.movecount, adj.resign.score,
                                       adj.resign.twosided) == (4, 700, True)
    assert adj.maxmoves == 90
    assert config.sprt is not None and config.sprt.model == "scaled-bayeselo"
    assert config.openings is not None
    assert (config.openings.order.value, config.openings.seed, config.openings.start) == (
        "random", 42, 3)
    assert config.pgnout is None
    printed = io.StringIO()
    settings = run.make_output(printed).settings  # type: ignore[attr-defined]
    assert printed.getvalue() == "Indexing opening suite...\n"  # as cutechess-cli, first
    assert (settings.event, settings.site, settings.rating_interval,
            settings.outcome_interval, settings.result_format) == ("E", "S", 10, 5, "wide")
    assert settings.pgn_mode.value == "min" and settings.pgn_finished_only
    assert settings.final_game_count == 6 and settings.players == ("a", "b")
    assert settings.time_controls == ("2/move", "40/60+0.5")


@needs_fairymax
def test_same_words_same_tournament() -> None:
    """The name and the random seed come from the words that decide the games: a rerun
    continues, also with another -concurrency or -pgnout; other games, another name."""
    base = [*TWO, "-each", "tc=inf", "depth=1", "-openings", f"file={DEMO_BOOK}",
            "format=epd", "order=random"]
    first, again = _run(base), _run([*base, "-concurrency", "2", "-pgnout", "x.pgn"])
    assert first.config.name == again.config.name
    assert first.config.fingerprint() == again.config.fingerprint()
    assert first.config.openings is not None and again.config.openings is not None
    assert first.config.openings.seed == again.config.openings.seed
    other = _run([*base, "-rounds", "2"])
    assert other.config.name != first.config.name


@needs_fairymax
def test_unnamed_engines_and_names_given_twice() -> None:
    """Unnamed engines take the name they report, as with cutechess-cli (numbered when
    repeated: results are kept by name); one name given to two engines is refused."""
    run = _run(["-engine", "cmd=fairymax", "proto=xboard", "-engine", "cmd=fairymax",
                "proto=xboard", "-each", "tc=inf", "depth=1"])
    assert [e.name for e in run.config.engines] == ["Fairy-Max 5.0b", "Fairy-Max 5.0b-2"]
    line, _ = _ours(["-engine", "cmd=fairymax", "proto=xboard", "name=x", "-engine",
                     "cmd=fairymax", "proto=xboard", "name=x", "-each", "tc=inf", "depth=1"])
    assert "two engines are named 'x'" in line


def test_epd_counters_restart_at_move_one() -> None:
    """An EPD line written as a whole FEN starts at move 1 with a zero halfmove clock, as in
    cutechess-cli; the hmvc and fmvn operations are kept."""
    fen = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 5 12"
    assert cutechess_epd_fen(fen) == "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1"
    assert cutechess_epd_fen("8/8/8/8/8/8/8/K1k5 w - - hmvc 7; fmvn 40; id \"x\";") == (
        "8/8/8/8/8/8/8/K1k5 w - - 7 40")


def test_mersenne_is_not_the_reference_twister() -> None:
    """cutechess's generator differs from MT19937 (its state update mixes other bits): the
    numbers are its own, and a seed gives the same shuffle every time."""
    import random

    reference = random.Random()
    reference.seed(7)
    assert [Mersenne(7).random() for _ in range(3)] != [reference.getrandbits(32)
                                                        for _ in range(3)]
    assert knuth_shuffle(50, Mersenne(9)) == knuth_shuffle(50, Mersenne(9))
    assert sorted(knuth_shuffle(50, Mersenne(9))) == list(range(50))


def test_random_order_draws_only_what_it_deals(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A random-order suite deals what the whole shuffle deals (start= wrapping, blank lines
    read from the next position), yet draws one number per entry dealt so far, not one per
    line of the book when it opens."""
    import runner.dropin.cutechess.suite as books

    drawn = [0]

    class Counting(Mersenne):
        def random(self) -> int:
            drawn[0] += 1
            return super().random()

    gaps = [(n % 6 + 1, 5 - n % 6) for n in range(3000)]  # squares between and after kings
    lines = [f"8/8/8/8/8/8/8/K{a}k{b or ''} w - - hmvc {n}; fmvn 1;"
             for n, (a, b) in enumerate(gaps)]
    lines[5] = lines[2999] = ""
    book = tmp_path / "big.epd"
    book.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(books, "Mersenne", Counting)
    suite = CutechessSuite(book, epd=True, random_order=True, start=2990, seed=3)
    assert drawn[0] == 0
    order = knuth_shuffle(len(lines), Mersenne(3))
    for served in range(20):
        index = order[(2989 + served) % len(lines)]
        assert suite.entry(served) == index
        while not lines[index]:
            index += 1
        if index == len(lines):
            assert suite.opening(served).fen.startswith("rnbqkbnr/")
        else:
            assert suite.opening(served).fen.split()[4] == lines[index].split()[5].rstrip(";")
    assert drawn[0] < len(lines)


def test_sequential_start_wraps_around(tmp_path: Path) -> None:
    """start= counts from 1 and wraps past the end of the book; blank lines are skipped."""
    book = tmp_path / "b.epd"
    lines = ["8/8/8/8/8/8/8/K1k5 w - -", "8/8/8/8/8/8/8/K2k4 w - -", "", "8/8/8/8/8/8/8/K3k3 w - -"]
    book.write_text("\n".join(lines) + "\n")
    suite = CutechessSuite(book, epd=True, random_order=False, start=2, seed=0)
    fens = [suite.opening(k).fen.split()[0] for k in range(4)]
    assert fens == ["8/8/8/8/8/8/8/K2k4", "8/8/8/8/8/8/8/K3k3", "8/8/8/8/8/8/8/K1k5",
                    "8/8/8/8/8/8/8/K2k4"]


# -- the same games as the real cutechess-cli ---------------------------------------------


def _skip_unless_reproducible(argv: list[str], tmp_path: Path,
                              read: Callable[[Path], object]) -> None:
    """Called when our games differ from cutechess-cli's: skip when either program, run again
    on `argv`, plays other games than its first run (as `read` sees them). Fairymax stops
    deepening on the wall clock whatever its depth limit, so on some machines its games are
    not reproducible, and a move-for-move comparison with any run says nothing there."""
    again = tmp_path / "again"
    again.mkdir(exist_ok=True)
    _real_games(argv, again)
    if read(again / "real.pgn") != read(tmp_path / "real.pgn"):
        pytest.skip("cutechess-cli's own two runs of this command line played different "
                    "games: the engine's search is not reproducible on this machine")
    done = _our_games(argv, again, again / "ours.pgn")
    assert done.returncode == 0, done.stderr
    if read(again / "ours.pgn") != read(tmp_path / "ours.pgn"):
        pytest.skip("the runner's own two runs of this command line played different games: "
                    "the engine's search is not reproducible on this machine")


def _our_games(argv: list[str], where: Path, pgn: Path) -> subprocess.CompletedProcess[str]:
    """`runner cutechess` on `argv` in `where`, its games written to `pgn`."""
    env = {**os.environ, "RUNNER_DB": str(where / "runner.db"),
           "PATH": "/usr/games:" + os.environ.get("PATH", "")}
    return subprocess.run([sys.executable, "-m", "runner", "cutechess", *argv, "-pgnout",
                           str(pgn)], capture_output=True, text=True, cwd=where, env=env,
                          timeout=600, stdin=subprocess.DEVNULL, check=False)


def _real_games(argv: list[str], tmp_path: Path) -> list[chess.pgn.Game]:
    """The games the real cutechess-cli writes for `argv` (plus a PGN file), in number order."""
    pgn = tmp_path / "real.pgn"
    # Debian puts the engines in /usr/games, which root's PATH lacks: cutechess-cli looks
    # them up by PATH, so give it the directories the runner's own lookup searches too.
    path = "/usr/games:/usr/local/games:" + os.environ.get("PATH", "")
    done = subprocess.run([str(PEER), *argv, "-pgnout", str(pgn)], capture_output=True,
                          text=True, cwd=tmp_path, timeout=300, stdin=subprocess.DEVNULL,
                          check=False, env={**os.environ, "PATH": path})
    assert done.returncode == 0, done.stderr
    games = []
    with open(pgn, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append(game)
    return games


def _ours_games(argv: list[str]) -> list[tuple[str, str, str, str, list[str]]]:
    """Per game number: White, Black, Round, start FEN and opening moves, as we deal them."""
    config: TournamentConfig = _run(argv).config
    pairing = pairing_for(config)
    openings = OpeningPolicy(config)
    out = []
    for game in pairing:
        opening = openings.for_pair(game.pair)
        chess960 = config.variant.value == "fischerandom"
        fen = chess.Board(chess960=chess960).fen() if opening is None else opening.fen
        out.append((game.white, game.black, str(game.round),
                    chess.Board(fen, chess960=chess960).fen(),
                    [] if opening is None else list(opening.moves)))
    return out


def _theirs_games(games: list[chess.pgn.Game], plies: list[int], chess960: bool,
                  ) -> list[tuple[str, str, str, str, list[str]]]:
    out = []
    for game, count in zip(games, plies, strict=True):
        board = game.board()
        fen = board.fen() if not chess960 else chess.Board(board.fen(), chess960=True).fen()
        moves = [move.uci() for move in game.mainline_moves()][:count]
        out.append((game.headers["White"], game.headers["Black"], game.headers["Round"],
                    fen, moves))
    return out


ENGINES3 = ["-engine", "cmd=fairymax", "proto=xboard", "name=a",
            "-engine", "cmd=fairymax", "proto=xboard", "name=b",
            "-engine", "cmd=fairymax", "proto=xboard", "name=c"]
ENGINES4 = [*ENGINES3, "-engine", "cmd=fairymax", "proto=xboard", "name=d"]
QUICK = ["-each", "tc=inf", "depth=1", "-maxmoves", "1", "-concurrency", "2"]

SCHEDULES = {
    "rr3-repeat-random": [*ENGINES3, *QUICK, "-games", "2", "-rounds", "2", "-repeat",
                          "-openings", f"file={EPD_BOOK}", "format=epd", "order=random",
                          "start=5", "-srand", "7"],
    "rr4-odd-games-sequential": [*ENGINES4, *QUICK, "-games", "3", "-openings",
                                 f"file={EPD_BOOK}", "format=epd", "start=150930"],
    "rr3-reverse-noswap-repeat3": [*ENGINES3, *QUICK, "-games", "3", "-repeat", "3",
                                   "-reverse", "-noswap", "-openings", f"file={EPD_BOOK}",
                                   "format=epd", "order=random", "-srand", "3"],
    "gauntlet-seeds": [*ENGINES4, *QUICK, "-tournament", "gauntlet", "-seeds", "2", "-games",
                       "2", "-repeat", "-openings", f"file={EPD_BOOK}", "format=epd",
                       "order=random", "-srand", "11"],
    "pyramid-policy-round": [*ENGINES4, *QUICK, "-tournament", "pyramid", "-games", "2",
                             "-rounds", "2", "-openings", f"file={EPD_BOOK}", "format=epd",
                             "policy=round", "order=random", "-srand", "5"],
    "match-pgn-plies-encounter": [*TWO, *QUICK, "-games", "4", "-rounds", "2", "-openings",
                                  f"file={PGN_BOOK}", "plies=5", "order=random",
                                  "policy=encounter", "-srand", "13"],
    "match-pgn-sequential-start": [*TWO, *QUICK, "-games", "6", "-repeat", "-openings",
                                   f"file={PGN_BOOK}", "format=pgn", "start=4", "plies=3"],
    "frc-drawn-repeat": [*TWO, *QUICK, "-variant", "fischerandom", "-games", "4", "-repeat",
                         "-srand", "21"],
    "frc-drawn-one-at-a-time": [*TWO, "-each", "tc=inf", "depth=1", "-maxmoves", "1",
                                "-variant", "fischerandom", "-games", "3", "-srand", "8"],
    "frc-book": [*TWO, *QUICK, "-variant", "fischerandom", "-games", "4", "-repeat",
                 "-openings", f"file={FRC_BOOK}", "format=epd", "order=random", "-srand",
                 "99"],
}


@needs_peer
@needs_fairymax
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_games_are_cutechess_clis(name: str, tmp_path: Path) -> None:
    """Game for game (by number): the same players in the same colours, the same round, the
    same start position and the same opening moves as the real cutechess-cli."""
    argv = SCHEDULES[name]
    ours = _ours_games(argv)
    real = _real_games(argv, tmp_path)
    assert len(real) == len(ours)
    chess960 = "fischerandom" in argv
    theirs = _theirs_games(real, [len(game[4]) for game in ours], chess960)
    for number, (mine, its) in enumerate(zip(ours, theirs, strict=True), start=1):
        assert mine == its, f"game {number}"


def test_pairing_matches_cutechess_by_hand() -> None:
    """Three engines, two games per encounter, -repeat: cutechess-cli's circle with the bye
    seat, its rounds, its colours (a pair keeps its orientation between rounds)."""
    games = list(cutechess_pairing(cutechess_order(games=2, rounds=2, repeat=2),
                                   ["a", "b", "c"]))
    assert [(g.white, g.black, g.round, g.pair) for g in games] == [
        ("b", "c", 1, 0), ("c", "b", 1, 0), ("a", "c", 2, 1), ("c", "a", 2, 1),
        ("a", "b", 3, 2), ("b", "a", 3, 2), ("b", "c", 4, 3), ("c", "b", 4, 3),
        ("a", "c", 5, 4), ("c", "a", 5, 4), ("a", "b", 6, 5), ("b", "a", 6, 5)]


STOCKFISH = shutil.which("stockfish", path="/usr/games:/usr/local/games:"
                         + os.environ.get("PATH", ""))

PLAYED = {
    # -draw movenumber=4 fires where it does only because the EPD positions restart at move 1.
    "cecp-fairymax": ["-engine", "cmd=fairymax", "proto=xboard", "name=a", "-engine",
                      "cmd=fairymax", "proto=xboard", "name=b", "-each", "tc=inf", "depth=2",
                      "-games", "2", "-rounds", "3", "-repeat", "-openings", f"file={EPD_BOOK}",
                      "format=epd", "order=random", "-srand", "7", "-draw", "movenumber=4",
                      "movecount=2", "score=20", "-concurrency", "2"],
    "uci-stockfish": ["-engine", "cmd=stockfish", "proto=uci", "name=s1", "option.Threads=1",
                      "-engine", "cmd=stockfish", "proto=uci", "name=s2", "option.Threads=1",
                      "-each", "tc=inf", "depth=1", "-games", "2", "-rounds", "2", "-repeat",
                      "-openings", f"file={PGN_BOOK}", "format=pgn", "order=random",
                      "plies=6", "-srand", "3", "-maxmoves", "40"],
}


def _played(path: Path) -> list[tuple[str, str, str, str, list[str], str]]:
    games = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            headers = game.headers
            # The start position, whether a FEN tag states it or not (the tags are the
            # output's to compare).
            games.append((headers["White"], headers["Black"], headers["Round"],
                          game.board().fen(), [m.uci() for m in game.mainline_moves()],
                          headers["Result"]))
    return games


@needs_peer
@pytest.mark.parametrize("name", sorted(PLAYED))
def test_played_games_are_cutechess_clis(name: str, tmp_path: Path) -> None:
    """The same command line through `runner cutechess` and the real cutechess-cli: the same
    games, move for move, with the same results, in the same numbering."""
    engine = FAIRYMAX if name.startswith("cecp") else STOCKFISH
    if engine is None:
        pytest.skip(f"the engine of {name} is not installed")
    argv = PLAYED[name]
    real = _real_games(argv, tmp_path)  # also checks cutechess-cli's success
    ours_pgn = tmp_path / "ours.pgn"
    done = _our_games(argv, tmp_path, ours_pgn)
    assert done.returncode == 0, done.stderr
    assert len(real) > 0
    if _played(ours_pgn) != _played(tmp_path / "real.pgn"):
        _skip_unless_reproducible(argv, tmp_path, _played)
    assert _played(ours_pgn) == _played(tmp_path / "real.pgn")


@needs_fairymax
def test_tablebases_engine_files_and_waits(tmp_path: Path) -> None:
    """-tb with its pieces and fifty-move setting reaches the adjudication; stderr=, tscale=
    and -wait reach the engines and the scheduler that run the games."""
    from runner.tournament.runtime import engine_config, local_scheduler

    syzygy = REPO.parent / "shared" / "data" / "syzygy"
    if not any(syzygy.glob("K?vK.rtbw")):
        pytest.skip(f"no 3-piece Syzygy tables in {syzygy}")
    run = _run([*TWO, "-each", "tc=inf", "depth=1", f"stderr={tmp_path / 'e.log'}",
                "tscale=2.5", "-tb", str(syzygy), "-tbpieces", "4", "-tbignore50",
                "-wait", "1500"])
    adj = run.config.adjudication
    assert adj.tablebases == (syzygy,) and adj.tbpieces == 4 and adj.tbignore50
    engine = engine_config(run.config.engines[0])
    default = engine_config(dataclasses.replace(run.config.engines[0], timeout_scale=1.0))
    assert engine.stderr_log == tmp_path / "e.log"
    assert engine.start_timeout == pytest.approx(2.5 * default.start_timeout)
    assert engine.ping_timeout == pytest.approx(2.5 * default.ping_timeout)
    assert local_scheduler(run.config, 1).start_delay == pytest.approx(1.5)


@needs_fairymax
def test_zero_switches_a_rule_off_as_in_cutechess() -> None:
    """-draw movenumber=0 and -resign movecount=0 switch the rule off (cutechess-cli), where
    the runner's own vocabulary would draw from the first move; a movecount of 0 for the
    draw (a draw whatever the scores) is refused."""
    run = _run([*TWO, "-each", "tc=inf", "depth=1", "-draw", "movenumber=0", "movecount=1",
                "score=1", "-resign", "movecount=0", "score=3"])
    assert run.config.adjudication.draw is None and run.config.adjudication.resign is None
    line, _ = _ours([*TWO, "-each", "tc=inf", "depth=1", "-draw", "movenumber=5",
                     "movecount=0", "score=1"])
    assert line.startswith("runner-cutechess: -draw")


@needs_peer
def test_variant_names_are_cutechess_clis() -> None:
    """-variant accepts exactly the variants cutechess-cli's -help lists."""
    from runner.dropin.cutechess.args import VARIANTS

    done = subprocess.run([str(PEER), "-help"], capture_output=True, text=True, timeout=30,
                          check=False)
    block = done.stdout.split("-variant VARIANT", 1)[1].split("-concurrency", 1)[0]
    listed = re.findall(r"^\t\t\t'([a-z0-9-]+)' ?:", block, re.MULTILINE)
    assert listed and sorted(listed) == sorted(VARIANTS)


_DECIDED = r"^Finished game (\d+) \(.*\): (?:1-0|0-1|1/2-1/2) "
"""A game that ended with a result (a game cut by the stop prints ``*``)."""


@needs_fairymax
def test_rerun_plays_only_the_missing_games(tmp_path: Path) -> None:
    """The same command line run again after a SIGINT continues the run: it starts only the
    games the first run did not finish (cutechess-cli's numbers), and the database ends with
    every game once."""
    import signal
    import sqlite3

    argv = [*TWO, "-each", "tc=inf", "depth=3", "-games", "6", "-openings",
            f"file={DEMO_BOOK}", "format=epd", "order=random", "-srand", "5", "-wait", "200"]
    env = {**os.environ, "RUNNER_DB": str(tmp_path / "runner.db"),
           "PATH": "/usr/games:" + os.environ.get("PATH", "")}
    command = [sys.executable, "-m", "runner", "cutechess", *argv]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, cwd=tmp_path, env=env)
    assert first.stdout is not None
    finished: set[int] = set()
    for line in first.stdout:
        if match := re.match(_DECIDED, line):
            finished.add(int(match.group(1)))
            first.send_signal(signal.SIGINT)
            break
    rest, _ = first.communicate(timeout=120)
    finished |= {int(m) for m in re.findall(_DECIDED, rest, re.MULTILINE)}
    second = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env,
                            timeout=600, check=False)
    assert second.returncode == 0, second.stderr
    started = {int(m) for m in re.findall(r"^Started game (\d+) of 6 ", second.stdout,
                                          re.MULTILINE)}
    assert finished and started and not started & finished
    assert started | finished == set(range(1, 7))
    with sqlite3.connect(tmp_path / "runner.db") as db:
        rows = db.execute("select count(*) from games where result is not null").fetchone()
    assert rows == (6,)


@needs_fairymax
def test_engine_keys_and_engines_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """conf= takes an engine from engines.json (keys after it still apply); dir=, arg=,
    restart=, nodes=, ponder and debug reach the engine as cutechess-cli means them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "engines.json").write_text(
        '[{"name": "fm", "command": "fairymax", "protocol": "xboard", "restart": "off",'
        ' "initStrings": ["memory 4"], "options": [{"name": "Hash", "type": "spin",'
        ' "value": 8}]}]')
    work = tmp_path / "work"
    work.mkdir()
    run = _run(["-engine", "conf=fm", "nodes=5000", "-engine", "cmd=/usr/games/fairymax",
                "proto=xboard", "name=other", f"dir={work}", "arg=8", "arg=-x", "ponder",
                "restart=on", "-engine", "cmd=stockfish", "proto=uci", "name=sf", "debug",
                "-each", "tc=10+0.1", "-epdout", "out.epd", "-bookmode", "disk"])
    fm, other, sf = run.config.engines
    assert (fm.name, fm.protocol.value, fm.restart.value, fm.init_strings,
            fm.options_dict, fm.tc) == ("fm", "cecp", "off", ("memory 4",), {"Hash": "8"},
                                        "tc=10+0.1 nodes=5000")
    assert other.dir == work and other.command[1:] == ("8", "-x") and other.ponder
    assert other.restart.value == "on"
    assert sf.init_strings == ("debug on",)
    printed = io.StringIO()
    settings = run.make_output(printed).settings  # type: ignore[attr-defined]
    assert settings.epd_out == "out.epd" and settings.tournament == "round-robin"


@needs_peer
@needs_fairymax
def test_an_epd_file_read_as_pgn_deals_no_opening(tmp_path: Path) -> None:
    """Without format=epd an EPD file is read as PGN (cutechess-cli's default format): in
    sequential order every game starts from the start position, as in cutechess-cli; in
    random order cutechess-cli crashes, and we refuse saying why."""
    argv = [*TWO, *QUICK, "-games", "2", "-openings", f"file={EPD_BOOK}"]
    ours = _ours_games(argv)
    theirs = _theirs_games(_real_games(argv, tmp_path), [0, 0], False)
    assert ours == theirs and ours[0][3] == chess.STARTING_FEN
    line, status = _ours([*TWO, *QUICK, "-openings", f"file={EPD_BOOK}", "order=random"])
    assert status == 1 and "format=epd" in line


def _scores(path: Path) -> list[list[tuple[str, str]]]:
    """Per game, each engine move with the score its PGN comment gives (``+0.15/1``)."""
    games = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            games.append([(node.move.uci(), node.comment.split()[0])
                          for node in game.mainline() if node.comment])
    return games


@needs_peer
@needs_stockfish
def test_whitepov_negates_black_scores_as_cutechess_does(tmp_path: Path) -> None:
    """whitepov: an engine's scores as Black are negated, in the PGN comments and for the
    adjudication, as the real cutechess-cli does. Stockfish at a fixed depth on one thread
    searches the same tree whatever the machine's load (fairymax stops deepening on the wall
    clock: its games differed from run to run under load, cutechess-cli's own included)."""
    argv = ["-engine", "cmd=stockfish", "proto=uci", "name=a", "whitepov", "-engine",
            "cmd=stockfish", "proto=uci", "name=b", "-each", "tc=inf", "depth=2",
            "-games", "2", "-maxmoves", "8", "-openings", f"file={EPD_BOOK}", "format=epd",
            "order=random", "-srand", "2"]
    _real_games(argv, tmp_path)
    done = _our_games(argv, tmp_path, tmp_path / "ours.pgn")
    assert done.returncode == 0, done.stderr
    theirs, ours = _scores(tmp_path / "real.pgn"), _scores(tmp_path / "ours.pgn")
    if ours != theirs:
        _skip_unless_reproducible(argv, tmp_path, _scores)
    assert theirs and ours == theirs
    # Black's own scores read from White's side: game 2's "a" (Black) moves are negated.
    assert any(score.startswith("-") for score in (s for _, s in theirs[1][1::2]))


def test_two_sided_resign_counts_per_side_under_cutechess() -> None:
    """runner-cutechess's two-sided resign is cutechess-cli's: the loser's own moves at or
    below -S and the winner's own at or above +S, C each; when both sides think they are
    losing it never fires (fastchess's single count would)."""
    from runner.game.adjudication import AdjudicationRules, ResignTracker

    def ends(per_side: bool, scores: list[int]) -> int | None:
        rules = AdjudicationRules(resign_move_count=2, resign_score=100,
                                  resign_two_sided=True, resign_per_side=per_side)
        tracker = ResignTracker(rules)
        for ply, score in enumerate(scores):
            white = ply % 2 == 0
            tracker.update(white, score)
            if tracker.verdict(white, score) is not None:
                return ply
        return None

    both_losing = [-200, -200, -200, -200, -200, -200]
    assert ends(False, both_losing) == 3 and ends(True, both_losing) is None
    agreed = [200, -200, 200, -200]
    assert ends(True, agreed) == 3
    # The winner's count restarted at its +0.50: two more of its moves are needed.
    assert ends(True, [200, -200, 50, -200, 200, -200, 200, -200]) == 7


def test_draw_is_checked_before_resignation_under_cutechess() -> None:
    """When a wide draw window and the resign threshold hold on one ply, cutechess-cli's order
    (draw first) decides under runner-cutechess; fastchess's (resign first) otherwise."""
    from runner.game.adjudication import AdjudicationRules, DrawTracker, ResignTracker
    from runner.game.arbiter import adjudicate as _adjudicate

    def verdict(board_plies: bool) -> str:
        rules = AdjudicationRules(draw_move_number=1, draw_move_count=1, draw_score=700,
                                  resign_move_count=1, resign_score=600,
                                  board_plies=board_plies)
        draws, resigns = DrawTracker(rules), ResignTracker(rules)
        for white in (True, False):
            draws.update(-650, False)
            resigns.update(white, -650)
        over = _adjudicate(draws, resigns, rules, False, -650, 1, 2)
        assert over is not None
        return str(over.result)

    assert verdict(True) != verdict(False)
    assert "1/2" in verdict(True)
