"""CECP: pure parser tables, transcript replay through a test double, and real engines.

Chess960 castling has its own module, test_cecp_chess960.py.
"""

from __future__ import annotations

import asyncio
import functools
import shutil
import sys
from pathlib import Path

import chess
import pytest

from runner.clock import Clock, TimeControl
from runner.protocol.cecp import CecpEngine
from runner.protocol.cecp_commands import edit_commands, format_level
from runner.protocol.cecp_parse import (
    DrawOffer,
    ErrorReport,
    FeatureLine,
    IllegalMoveReport,
    MoveLine,
    Other,
    Pong,
    Resign,
    ResultLine,
    Tell,
    ThinkingLine,
    is_coordinate_move,
    parse_engine_line,
    parse_features,
    parse_option,
    parse_thinking,
)
from runner.protocol.engine import ClockState, EngineConfig, EngineOption, GameSetup, Side
from tests.bundled_games import group_empty
from tests.cecp_replay import RecordedTranscript, ReplayTransport
from tests.conftest import SHARED_DATA, shared_cases, shared_file

TRANSCRIPTS = sorted((SHARED_DATA / "cecp-transcripts").glob("*.txt"))
def _stem(path: Path) -> str:
    return path.stem


def run_async(test):
    """Run an async test body in a fresh event loop (no asyncio plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        return asyncio.run(test(*args, **kwargs))

    return wrapper


# ----------------------------------------------------------------------------- parsers


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ('myname="Fairy-Max 5.0b"', (("myname", "Fairy-Max 5.0b"),)),
        ("memory=1 exclude=1", (("memory", "1"), ("exclude", "1"))),
        ('setboard=0 xedit=1 ping=1 done=0',
         (("setboard", "0"), ("xedit", "1"), ("ping", "1"), ("done", "0"))),
        ('option="Resign Threshold -spin 800 200 1200" ping=1',
         (("option", "Resign Threshold -spin 800 200 1200"), ("ping", "1"))),
        ('option="Polyglot exclude move -string " done=1',
         (("option", "Polyglot exclude move -string "), ("done", "1"))),
        ('myversion="[1.4.1 (x86_64)]"', (("myversion", "[1.4.1 (x86_64)]"),)),
        ("analyze=1 draw=0 ", (("analyze", "1"), ("draw", "0"))),
        ("garbage ping=1", (("ping", "1"),)),
        ('myname="unterminated', (("myname", "unterminated"),)),
        ("", ()),
    ],
)
def test_parse_features_table(text, pairs):
    assert parse_features(text) == pairs


@pytest.mark.parametrize("path", shared_cases(TRANSCRIPTS, SHARED_DATA / "cecp-transcripts", ids=_stem))
def test_features_of_every_transcript_match_its_summary(path):
    """Every feature name the probe summarised is found by our parser in the raw lines."""
    recording = RecordedTranscript(path)
    names = set()
    for text in recording.engine_lines():
        parsed = parse_engine_line(text)
        if isinstance(parsed, FeatureLine):
            names.update(name for name, _ in parsed.pairs)
            for name, value in parsed.pairs:
                if name == "option":
                    assert parse_option(value).name
    summary = next(
        line for line in path.read_text().splitlines() if line.startswith("- features:")
    )
    expected = {i.split("=")[0].strip() for i in summary[len("- features:"):].strip().split("; ") if i}
    assert expected <= names
    assert names, f"no feature at all parsed from {path.name}"


@pytest.mark.parametrize(
    ("value", "spec"),
    [
        ("Resign -check 0", EngineOption("Resign", "check", "0")),
        ("Resign Threshold -spin 800 200 1200", EngineOption("Resign Threshold", "spin", "800",
                                                            200, 1200)),
        ("Makruk rules -combo makruk /// Cambodian /// Ai-wok",
         EngineOption("Makruk rules", "combo", "makruk", choices=("makruk", "Cambodian", "Ai-wok"))),
        ("Level -combo Clueless /// Random /// Static /// *Normal",
         EngineOption("Level", "combo", "Normal",
                    choices=("Clueless", "Random", "Static", "Normal"))),
        ("Dummy String Example -string happy birthday!",
         EngineOption("Dummy String Example", "string", "happy birthday!")),
        ("Clear Hash -button", EngineOption("Clear Hash", "button")),
        ("Polyglot Save -save", EngineOption("Polyglot Save", "save")),
        ("Debug Log File -file <empty>", EngineOption("Debug Log File", "file", "<empty>")),
        ("Randomizer (0-50) -slider 0 0 50", EngineOption("Randomizer (0-50)", "slider", "0", 0, 50)),
        ("verbose -spin 0 -2147483648 2147483647",
         EngineOption("verbose", "spin", "0", -2147483648, 2147483647)),
    ],
)
def test_parse_option_table(value, spec):
    assert parse_option(value) == spec


@pytest.mark.parametrize("value", ["nonsense", "-spin 1 2 3", "X -spin 1 2", "X -check 2"])
def test_parse_option_rejects_malformed(value):
    with pytest.raises(ValueError):
        parse_option(value)


@pytest.mark.parametrize(
    ("text", "depth", "score", "mate", "seconds", "nodes", "pv"),
    [
        (" 7     13       74     485785 c7c6 d2d3 d7d5", 7, 13, None, 0.74, 485785,
         ("c7c6", "d2d3", "d7d5")),
        ("9 156 1084 48000 Nf3 Nc6 Nc3 Nf6", 9, 156, None, 10.84, 48000,
         ("Nf3", "Nc6", "Nc3", "Nf6")),
        ("1 +8 0 42 d5", 1, 8, None, 0.0, 42, ("d5",)),
        ("  2   -34      0       199  1. ...  d5 2. Nc3", 2, -34, None, 0.0, 199, ("d5", "Nc3")),
        ("  5      -4     4     7238  e6 Nc3 Nc6 d4 <Nf6> ", 5, -4, None, 0.04, 7238,
         ("e6", "Nc3", "Nc6", "d4", "Nf6")),
        (" 3&     14    0       89   d1d2  e8e7  d2d3", 3, 14, None, 0.0, 89,
         ("d1d2", "e8e7", "d2d3")),
        (" 9.     62    4    72578   d1e2", 9, 62, None, 4.0, 72578, ("d1e2",)),
        ("12 100003 120 5000 Qh5 Kd7 Qf7", 12, 100003, 3, 1.2, 5000, ("Qh5", "Kd7", "Qf7")),
        ("12 -100002 120 5000 Kd7", 12, -100002, -2, 1.2, 5000, ("Kd7",)),
        ("8 31995 10 900 Qxf7", 8, 31995, 3, 0.1, 900, ("Qxf7",)),
        ("8 -31996 10 900 Kh8", 8, -31996, -2, 0.1, 900, ("Kh8",)),
        ("10 25 300 40000 12\t1000\t0\te4 e5", 10, 25, None, 3.0, 40000, ("e4", "e5")),
        ("  0      0     0        0  (e4 64%, d4 24%)", 0, 0, None, 0.0, 0,
         ("(e4", "64%,", "d4", "24%)")),
    ],
)
def test_parse_thinking_table(text, depth, score, mate, seconds, nodes, pv):
    info = parse_thinking(text)
    assert info is not None
    assert (info.depth, info.score_cp, info.mate, info.nodes, info.pv) == (
        depth, score, mate, nodes, pv)
    assert info.time == pytest.approx(seconds)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("move c7c6", MoveLine("c7c6", "move")),
        ("move e7e8q", MoveLine("e7e8q", "move")),
        ("move O-O", MoveLine("O-O", "move")),
        ("move Nf3", MoveLine("Nf3", "move")),
        ("1. ... d7d5", MoveLine("d7d5", "numbered")),
        ("12 ... e1g1", MoveLine("e1g1", "numbered")),
        ("My move is : g8f6", MoveLine("g8f6", "mymove")),
        ("My move is: e7e5", MoveLine("e7e5", "mymove")),
        ("1. e2e4", Other("1. e2e4")),
        # Old forms carry a move only when the token looks like one (chatter stays chatter).
        ("1. ... ???", Other("1. ... ???")),
        ("1. ... hello", Other("1. ... hello")),
        ("My move is : ???", Other("My move is : ???")),
        ("1. ... O-O-O", MoveLine("O-O-O", "numbered")),
        ("7. ... 0-0", MoveLine("0-0", "numbered")),
        ("3. ... Nbd7+", MoveLine("Nbd7+", "numbered")),
        ("5. ... exd8=Q#", MoveLine("exd8=Q#", "numbered")),
        ("9. ... e7e8q", MoveLine("e7e8q", "numbered")),
        ("1. ... e7e5!?", MoveLine("e7e5", "numbered")),
        ("my move is: O-O", MoveLine("O-O", "mymove")),
        ("pong 12", Pong(12)),
        ("pong x", Other("pong x")),
        ("resign", Resign()),
        ("computer resigns", Resign()),
        ("offer draw", DrawOffer()),
        ("1-0 {White mates}", ResultLine("1-0", "White mates")),
        ("0-1 {White resigns}", ResultLine("0-1", "White resigns")),
        ("1/2-1/2 {Draw by repetition}", ResultLine("1/2-1/2", "Draw by repetition")),
        ("1/2-1/2", ResultLine("1/2-1/2", "")),
        ("Black resigns", ResultLine("1-0", "Black resigns")),
        ("Illegal move: e2e5", IllegalMoveReport("e2e5", "")),
        ("Illegal move (in check): Nf3", IllegalMoveReport("Nf3", "in check")),
        ("illegal move e2e5", IllegalMoveReport("e2e5", "")),
        ("Error (unknown command): nps", ErrorReport("unknown command", "nps")),
        ("telluser hello there", Tell("telluser", "hello there")),
        ("tellusererror Illegal position", Tell("tellusererror", "Illegal position")),
        ("tellics say     Fairy-Max 5.0b", Tell("tellics", "say     Fairy-Max 5.0b")),
        ("# times @ 4293222447", Other("# times @ 4293222447")),
        ("Time for move : 50", Other("Time for move : 50")),
        ("", Other("")),
    ],
)
def test_parse_engine_line_table(text, expected):
    assert parse_engine_line(text) == expected


def test_thinking_lines_are_classified_as_thinking():
    assert isinstance(parse_engine_line("4 -1 0 1787 c7c5 d2d4"), ThinkingLine)


@pytest.mark.parametrize(
    ("move", "coordinate"),
    [("e2e4", True), ("e7e8q", True), ("e1g1", True), ("Nf3", False), ("O-O", False),
     ("e8=Q", False), ("P@f7", False)],
)
def test_is_coordinate_move(move, coordinate):
    assert is_coordinate_move(move) is coordinate


@pytest.mark.parametrize(
    ("moves", "base", "inc", "text"),
    [
        (40, 60.0, 0.0, "level 40 1 0"),
        (0, 120.0, 12.0, "level 0 2 12"),
        (0, 10.0, 0.1, "level 0 0:10 0.1"),
        (40, 90.0, 0.0, "level 40 1:30 0"),
        (0, 2.0, 0.02, "level 0 0:02 0.02"),
        (1, 0.5, 0.0, "level 1 0:01 0"),
    ],
)
def test_format_level(moves, base, inc, text):
    assert format_level(moves, base, inc) == text


def test_edit_fallback_places_pieces_and_uses_the_black_kludge():
    fen = "4k3/8/8/8/8/8/4P3/4K2R b K - 0 1"
    assert edit_commands(fen) == ["a2a3", "edit", "#", "Pe2", "Ke1", "Rh1", "c", "Ke8", "."]
    with pytest.raises(ValueError):
        edit_commands("8/8/8 w - - 0 1")


# ----------------------------------------------------------------------------- replay


def _replay_config(**overrides) -> EngineConfig:
    settings = {"feature_timeout": 0.3, "start_timeout": 3.0, "no_ping_delay": 0.05}
    settings.update(overrides)
    return EngineConfig(name="", argv=("replayed",), **settings)


_ANSWER_DIFFERENCES = {"sjaakii": {"accepted highlight": "rejected highlight"}}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("path", shared_cases(TRANSCRIPTS, SHARED_DATA / "cecp-transcripts", ids=_stem))
@run_async
async def test_replay_startup_answers_and_first_move(path):
    recording = RecordedTranscript(path)
    buffered = path.stem.startswith("gnuchess")
    transport = ReplayTransport(recording, startup_after_inputs=2 if buffered else 0)
    engine = CecpEngine(_replay_config(), transport=transport)
    await engine.start()
    assert engine.features.seen_any
    if not buffered:
        expected = [
            _ANSWER_DIFFERENCES.get(path.stem, {}).get(a, a) for a in recording.answers()
        ]
        assert [s for s in transport.sent if s.startswith(("accepted", "rejected"))] == expected
    tc = TimeControl.parse("40/60")
    await engine.new_game(GameSetup(time_control=tc, side=Side.BLACK))
    reply = await engine.play(["e2e4"], ClockState(60.0, 60.0, 40), timeout=2.0)
    search = recording.first_search()
    moves = [p for p in map(parse_engine_line, search) if isinstance(p, MoveLine)]
    assert reply.move == moves[0].move
    thinking = [p.info for p in map(parse_engine_line, search) if isinstance(p, ThinkingLine)]
    assert reply.info == (thinking[-1] if thinking else None)
    sent = transport.sent
    usermove = engine.features.flag("usermove", False)
    assert ("usermove e2e4" if usermove else "e2e4") in sent
    assert sent.index("time 6000") < sent.index("go")
    assert "computer" not in sent  # fairymax crashes on it
    await engine.end_game("*")
    assert await engine.quit() == 0


@pytest.mark.timeout(20)
@run_async
async def test_replay_buffered_gnuchess_is_probed_not_declared_dead():
    recording = RecordedTranscript(shared_file("cecp-transcripts", "gnuchess-x-pipe-buffered.txt"))
    transport = ReplayTransport(recording, startup_after_inputs=3)
    engine = CecpEngine(_replay_config(feature_timeout=0.2), transport=transport)
    await engine.start()
    assert engine.features.done == 1
    assert engine.features.flag("usermove", False)
    probes = [s for s in transport.sent if s.startswith("ping")]
    assert len(probes) >= 3
    await engine.quit()


# ----------------------------------------------------------------------------- real engines


def _binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/games")
    if found is None:
        pytest.skip(f"{name} is not installed (CI installs it with apt-get)")
    return found


def _polyglot_stockfish(tmp_path: Path) -> tuple[str, ...]:
    """Polyglot reads its engine from an ini file: EngineCommand (+ EngineDir) and [Engine]."""
    polyglot, stockfish = _binary("polyglot"), _binary("stockfish")
    ini = tmp_path / "stockfish.ini"
    ini.write_text(
        "[PolyGlot]\n"
        f"EngineDir = {Path(stockfish).parent}\n"
        f"EngineCommand = {stockfish}\n"
        "Book = false\nLog = false\n"
        "[Engine]\nHash = 16\nThreads = 1\n"
    )
    return (polyglot, str(ini))


ENGINES = {
    "fairymax": lambda tmp: (_binary("fairymax"),),
    "gnuchess": lambda tmp: (_binary("gnuchess"), "-x"),
    "phalanx": lambda tmp: (_binary("phalanx"),),
    "hoichess": lambda tmp: (_binary("hoichess"),),
    "sjeng": lambda tmp: (_binary("sjeng"),),
    "polyglot-stockfish": _polyglot_stockfish,
}
START_FEN = "rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 1 2"


@pytest.mark.timeout(20)
@pytest.mark.parametrize("fen,positioned", [(chess.STARTING_FEN, False), (START_FEN, True)])
@run_async
async def test_the_standard_start_gets_no_position_after_new(fen, positioned):
    # "new" sets the standard start up; fairymax plays other moves after an "edit" of the
    # same position, and cutechess-cli sends none (docs/adjudication.md, tests/test_peer_games).
    recording = RecordedTranscript(shared_file("cecp-transcripts", "fairymax.txt"))
    transport = ReplayTransport(recording)
    engine = CecpEngine(_replay_config(), transport=transport)
    await engine.start()
    await engine.new_game(GameSetup(time_control=TimeControl.parse("40/60"), side=Side.BLACK,
                                    start_fen=fen))
    sent = transport.sent[transport.sent.index("new"):]
    assert any(line == "edit" or line.startswith("setboard") for line in sent) is positioned
    await engine.end_game("*")
    assert await engine.quit() == 0


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine_name", list(ENGINES))
@run_async
async def test_real_engine_start_ping_two_moves_quit(engine_name, tmp_path):
    argv = ENGINES[engine_name](tmp_path)
    config = EngineConfig(name=engine_name, argv=argv, working_dir=tmp_path,
                          env={"HOME": str(tmp_path)})
    engine = CecpEngine(config)
    await engine.start()
    pgid = engine.pid
    try:
        assert engine.features.flag("ping", False), engine.transcript[-20:]
        latency = await engine.ping()
        assert latency is not None and latency < 1.0
        tc = TimeControl.parse("40/20")
        await engine.new_game(GameSetup(time_control=tc, side=Side.BLACK, start_fen=START_FEN))
        board = chess.Board(START_FEN)
        own, opponent = Clock(tc), Clock(tc)
        moves: list[str] = []
        for _ in range(2):
            state = ClockState(own.remaining, opponent.remaining, own.moves_to_go, own.period_index)
            reply = await engine.play(moves, state, timeout=15.0)
            assert reply.move is not None, reply
            move = board.parse_san(reply.move) if reply.move_is_san else chess.Move.from_uci(
                reply.move)
            assert move in board.legal_moves, (reply.move, board.fen())
            assert own.spend(reply.elapsed) is False
            board.push(move)
            moves.append(move.uci())
            answer = next(iter(board.legal_moves))
            board.push(answer)
            moves.append(answer.uci())
        await engine.end_game("*")
    finally:
        code = await engine.quit()
    assert code is not None
    assert await group_empty(pgid), f"{engine_name} left processes behind"


@pytest.mark.timeout(60)
@pytest.mark.parametrize("engine_name", list(ENGINES))
@run_async
async def test_real_engine_survives_and_accepts_every_new_game_sequence(engine_name, tmp_path):
    """Eight games set up in one process, one per kind of time control: the engine is alive
    after each (fairymax crashed about one time in two on the "computer" we used to send)
    and refuses none of the commands (its "Error"/"Illegal move" lines are counted)."""
    from tests.test_real_engines import protocol_complaints

    argv = ENGINES[engine_name](tmp_path)
    config = EngineConfig(name=engine_name, argv=argv, working_dir=tmp_path,
                          env={"HOME": str(tmp_path)})
    engine = CecpEngine(config)
    await engine.start()
    try:
        limits = ("40/20", "5+0.05", "10", "st=2", "depth=3", "40/20", "5+0.05", "st=1")
        # gnuchess 6.2.7 ("Invalid move: sd 3") and phalanx XXII ("Illegal move: sd 3") know
        # no "sd": a depth-only game is refused at set-up with the reason, not played for a
        # day per move on "st 86400".
        no_depth = engine_name in {"gnuchess", "phalanx"}
        for tc in limits:
            setup = GameSetup(time_control=TimeControl.parse(tc), side=Side.BLACK,
                              start_fen=START_FEN, opponent="someone")
            if no_depth and tc.startswith("depth"):
                with pytest.raises(ValueError, match="cannot play to a fixed depth"):
                    await engine.new_game(setup)
            else:
                await engine.new_game(setup)
            await engine.end_game("*")
            assert await engine.ping() is not None, engine.transcript[-20:]
        transcript = tuple(str(entry) for entry in engine.transcript)
        complaints = [line for line in protocol_complaints(transcript)
                      if not (no_depth and line.endswith("sd 3"))]
        assert complaints == [], transcript[-40:]
    finally:
        await engine.quit()


@pytest.mark.slow
@pytest.mark.timeout(90)
@run_async
async def test_gnuchess_starts_every_time_in_one_event_loop(tmp_path):
    # gnuchess 6.2.7 deadlocks at start-up more often than not (see CecpEngine._negotiate);
    # the second and later starts in one process used to stay silent past the start timeout.
    gnuchess = _binary("gnuchess")
    for attempt in range(4):
        engine = CecpEngine(EngineConfig(name="gnuchess", argv=(gnuchess, "-x"),
                                         working_dir=tmp_path, env={"HOME": str(tmp_path)}))
        try:
            await engine.start()
            notes = [e.text for e in engine.transcript if e.direction == "!"]
            assert engine.features.done == 1, (attempt, notes)
            assert engine.features.flag("ping", False)
            assert await engine.ping() is not None
        finally:
            await engine.quit()


# A protocol-1 engine: answers no protover and no ping, only errors for unknown commands.
_V1_ENGINE = """
import sys
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "quit":
        break
    if word in ("protover", "ping"):
        print(f"Error (unknown command): {word}", flush=True)
"""
# An engine that says nothing at all until it has been started `N` times (a counter file).
_SILENT_UNTIL_NTH_START = """
import pathlib, sys
counter = pathlib.Path(sys.argv[1])
starts = int(counter.read_text()) + 1 if counter.exists() else 1
counter.write_text(str(starts))
for line in sys.stdin:
    word = line.split()[0] if line.split() else ""
    if word == "quit":
        break
    if starts < int(sys.argv[2]):
        continue
    if word == "protover":
        print("feature ping=1 myname=\\"late\\" done=1", flush=True)
    elif word == "ping":
        print(f"pong {line.split()[1]}", flush=True)
"""


@pytest.mark.timeout(30)
@run_async
async def test_a_protocol_1_engine_gets_default_features_without_restarts(tmp_path):
    script = tmp_path / "v1.py"
    script.write_text(_V1_ENGINE)
    engine = CecpEngine(EngineConfig(name="v1", argv=(sys.executable, str(script)),
                                     start_timeout=1.5, silent_restart_after=0.5))
    try:
        await engine.start()
        notes = [e.text for e in engine.transcript if e.direction == "!"]
        assert engine.features.done is None and not engine.features.flag("ping", False)
        assert not any("killed" in n for n in notes), notes
        assert any("assumed (v1 defaults)" in n for n in notes), notes
        assert engine.startup_seconds >= 1.4  # it waited for the features it was not sent
    finally:
        await engine.quit()


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("silent_starts", "retries", "complete"), [(2, 2, True), (3, 1, False)])
@run_async
async def test_an_engine_silent_at_start_up_is_respawned(tmp_path, silent_starts, retries,
                                                         complete):
    script, counter = tmp_path / "silent.py", tmp_path / "starts"
    script.write_text(_SILENT_UNTIL_NTH_START)
    # Each process must get as far as counting its start before it is killed as silent, and
    # the one that speaks must be heard before the last attempt gives up: a Python start
    # takes seconds on a loaded machine. The last attempt ends as soon as the features come,
    # so the long start_timeout costs time only where the engine never speaks.
    engine = CecpEngine(EngineConfig(
        name="late", argv=(sys.executable, str(script), str(counter), str(silent_starts + 1)),
        start_timeout=60.0 if complete else 5.0, silent_restart_after=3.0,
        silent_start_retries=retries))
    try:
        await engine.start()
        notes = [e.text for e in engine.transcript if e.direction == "!"]
        killed = [n for n in notes if "no features" in n and "killed" in n]
        assert len(killed) == min(silent_starts, retries), notes
        assert int(counter.read_text()) == 1 + min(silent_starts, retries)
        assert (engine.features.done == 1) is complete, notes
        if complete:
            assert engine.features.text("myname") == "late" and await engine.ping() is not None
    finally:
        await engine.quit()
