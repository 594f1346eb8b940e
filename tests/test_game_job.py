"""A game job is the wire format of one game: job -> JSON -> job is the identity, a broken
job is refused with the field that is wrong, and the job a tournament builds from its
configuration carries every engine setting a worker needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.clock import TimeControl, TimePeriod
from runner.config.parse import parse_config
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig
from runner.tournament.openings import OpeningPolicy
from runner.tournament.pairing import pairing_for
from runner.tournament.runtime import engine_configs, game_job
from runner.types import Variant

_text = st.text(max_size=12)
_word = st.text(min_size=1, max_size=12)
_count = st.integers(min_value=0, max_value=10**6)
_positive = st.floats(min_value=0.001, max_value=1e6, allow_nan=False, allow_infinity=False)
_seconds = st.floats(min_value=0, max_value=1e5, allow_nan=False, allow_infinity=False)


@st.composite
def _time_controls(draw: st.DrawFn) -> TimeControl:
    """Clock periods or a fixed time per move, with or without depth and node limits."""
    periods: tuple[TimePeriod, ...] = ()
    move_time = None
    if draw(st.booleans()):
        moves = draw(st.lists(st.integers(min_value=1, max_value=200), max_size=3))
        last = draw(st.integers(min_value=0, max_value=200))
        periods = tuple(TimePeriod(m, draw(_seconds), draw(_seconds)) for m in [*moves, last])
    elif draw(st.booleans()):
        move_time = draw(_positive)
    return TimeControl(periods, move_time, draw(st.none() | st.integers(1, 99)),
                       draw(st.none() | st.integers(1, 10**9)), draw(_seconds))


_engines = st.builds(
    EngineConfig,
    name=_word,
    argv=st.lists(_word, min_size=1, max_size=4).map(tuple),
    working_dir=st.none() | _word.map(Path),
    env=st.none() | st.dictionaries(_word, _text, max_size=3),
    protocol=st.sampled_from(["cecp", "uci"]),
    options=st.dictionaries(_word, _text | st.integers() | st.booleans(), max_size=4),
    init_strings=st.lists(_text, max_size=3).map(tuple),
    memory_mb=st.none() | _count,
    cores=st.none() | _count,
    nps=st.none() | _count,
    ponder=st.booleans(),
    options_submitted=st.booleans(),
    castling960=st.sampled_from(["oo", "kxr"]),
    start_timeout=_positive,
    ping_timeout=_positive,
    silent_start_retries=st.integers(0, 5),
    line_limit=st.integers(1024, 1 << 24),
    stderr_log=st.none() | _word.map(Path),
)

_rules = st.builds(
    AdjudicationRules,
    draw_move_number=st.none() | _count,
    draw_move_count=st.integers(1, 100),
    draw_score=_count,
    resign_move_count=st.none() | _count,
    resign_score=_count,
    resign_two_sided=st.booleans(),
    max_moves=st.none() | _count,
    false_claim_loses=st.booleans(),
)

_specs = st.builds(
    GameSpec,
    white_tc=_time_controls(),
    black_tc=_time_controls(),
    start_fen=st.none() | _text,
    opening_moves=st.lists(st.sampled_from(["e2e4", "e7e5", "g1f3", "e7e8q"]), max_size=6)
    .map(tuple),
    variant=st.sampled_from(list(Variant)),
    adjudication=_rules,
    tags=st.dictionaries(_word, _text, max_size=4),
    untimed_move_timeout=_positive,
)

_jobs = st.builds(GameJob, index=st.integers(0, 10**9), white=_engines, black=_engines,
                  spec=_specs)


@settings(max_examples=200, deadline=None)
@given(_jobs)
def test_job_to_json_and_back_is_the_identity(job: GameJob) -> None:
    text = job.to_json()
    json.loads(text)  # plain JSON, readable by any worker
    again = GameJob.from_json(text)
    assert again == job
    assert again.to_json() == text
    assert isinstance(again.white.argv, tuple) and isinstance(again.spec.white_tc.periods, tuple)


def test_a_broken_job_is_refused_naming_the_field() -> None:
    control = TimeControl.parse("40/60")
    job = GameJob(0, EngineConfig("a", ("a",)), EngineConfig("b", ("b",)), GameSpec(control, control))
    data = json.loads(job.to_json())
    data["black"]["castling960"] = "zz"
    with pytest.raises(ValueError, match="castling960"):
        GameJob.from_json(json.dumps(data))
    data = json.loads(job.to_json())
    del data["spec"]["white_tc"]
    with pytest.raises(ValueError, match="white_tc"):
        GameJob.from_json(json.dumps(data))


def test_the_tournament_s_job_carries_every_engine_setting(tmp_path: Path) -> None:
    config = parse_config({
        "name": "jobs", "format": "match", "tc": "10+0.1", "variant": "fischerandom",
        "engines": [
            {"name": "x", "command": ["python", "-m", "engine"], "castling960": "kxr",
             "env": {"HASH": "16"}, "options": {"Threads": 2, "Ponder": False},
             "init_strings": ["memory 16"]},
            {"name": "y", "command": ["python", "-m", "engine", "--uci"], "protocol": "uci",
             "tc": "st=1"},
        ],
        "adjudication": {"maxmoves": 40, "draw": {"movenumber": 30, "movecount": 4,
                                                  "score": 5}},
    }, base_dir=tmp_path)
    pairing = pairing_for(config)
    game = pairing.job(1)
    openings = OpeningPolicy(config)
    job = game_job(config, game, openings.for_pair(game.pair), pairing.per_round,
                   engine_configs(config))
    again = GameJob.from_json(job.to_json())
    assert again == job and job.index == 1
    x = job.white if job.white.name == "x" else job.black
    y = job.black if x is job.white else job.white
    assert (x.castling960, dict(x.env or {}), dict(x.options), x.init_strings) == (
        "kxr", {"HASH": "16"}, {"Threads": 2, "Ponder": False}, ("memory 16",))
    # Typed until the client spells them, through the job's JSON too (a bool is an int).
    assert [type(again.white.options[k]) for k in ("Threads", "Ponder") if x is job.white] \
        + [type(again.black.options[k]) for k in ("Threads", "Ponder") if x is job.black] \
        == [int, bool]
    assert y.protocol == "uci" and dict(y.options) == {}
    spec = job.spec
    y_tc = spec.white_tc if job.white is y else spec.black_tc
    assert y_tc == TimeControl.parse("st=1")
    assert spec.variant is Variant.FISCHERANDOM and spec.start_fen is not None
    assert spec.adjudication == AdjudicationRules(max_moves=40, draw_move_number=30,
                                                  draw_move_count=4, draw_score=5)
    assert spec.tags == {"Event": "jobs", "Site": "cecp-runner", "Round": "1.2"}
    # Both games of a pair start from the same position.
    first = game_job(config, pairing.job(0), openings.for_pair(0), pairing.per_round,
                     engine_configs(config))
    assert first.spec.start_fen == spec.start_fen
