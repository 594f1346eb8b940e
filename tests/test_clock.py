"""Time controls parsed from user strings, PGN forms, and the per-side running clock."""

from __future__ import annotations

import pytest

from runner.clock import Clock, TimeControl, TimePeriod


@pytest.mark.parametrize(
    ("text", "periods", "move_time", "depth", "nodes", "margin"),
    [
        ("40/60", (TimePeriod(40, 60.0),), None, None, None, 0.0),
        ("60+0.5", (TimePeriod(0, 60.0, 0.5),), None, None, None, 0.0),
        ("10+0.1", (TimePeriod(0, 10.0, 0.1),), None, None, None, 0.0),
        ("2+0.02", (TimePeriod(0, 2.0, 0.02),), None, None, None, 0.0),
        ("300", (TimePeriod(0, 300.0),), None, None, None, 0.0),
        ("40/120:20/60", (TimePeriod(40, 120.0), TimePeriod(20, 60.0)), None, None, None, 0.0),
        ("40/120+1:60+2", (TimePeriod(40, 120.0, 1.0), TimePeriod(0, 60.0, 2.0)), None, None,
         None, 0.0),
        ("tc=40/60", (TimePeriod(40, 60.0),), None, None, None, 0.0),
        ("inf", (), None, None, None, 0.0),
        ("st=1", (), 1.0, None, None, 0.0),
        ("st=0.5", (), 0.5, None, None, 0.0),
        ("depth=8", (), None, 8, None, 0.0),
        ("nodes=10000", (), None, None, 10000, 0.0),
        ("10+0.1 timemargin=100", (TimePeriod(0, 10.0, 0.1),), None, None, None, 0.1),
        ("40/60, depth=12", (TimePeriod(40, 60.0),), None, 12, None, 0.0),
        ("inf depth=8", (), None, 8, None, 0.0),
    ],
)
def test_parse_accepts_what_users_write(text, periods, move_time, depth, nodes, margin):
    tc = TimeControl.parse(text)
    assert tc.periods == periods
    assert tc.move_time == move_time
    assert tc.depth == depth
    assert tc.nodes == nodes
    assert tc.margin == pytest.approx(margin)
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("", "empty"),
        ("40/", "'40/'"),
        ("abc", "'abc'"),
        ("10+", "'10+'"),
        ("1:30:00", "minutes:seconds is one ':'"),
        ("0:10:5", "minutes:seconds is one ':'"),
        ("1:", "'1:'"),
        (":30", "':30'"),
        ("40/60:30/", "'30/'"),
        ("st=zero", "'st=zero'"),
        ("st=0", "positive"),
        ("depth=-3", "'depth=-3'"),
        ("nodes=1e4", "'nodes=1e4'"),
        ("timemargin=0.5", "'timemargin=0.5'"),
        ("moves=40", "'moves=40'"),
        ("40/60 10+1", "twice"),
        ("40/60 st=1", "either"),
        ("st=nan", "'st=nan'"),
    ],
)
def test_parse_rejects_bad_values_naming_them(text, named):
    with pytest.raises(ValueError) as info:
        TimeControl.parse(text)
    assert named in str(info.value)


@pytest.mark.parametrize(
    ("text", "pgn"),
    [
        ("40/60", "40/60"),
        ("60+0.5", "60+0.5"),
        ("40/7200:3600", "40/7200:3600"),
        ("40/5400+30:900+30", "40/5400+30:900+30"),
        ("inf", "-"),
        ("depth=8", "-"),
        ("st=1", "-"),
        ("2+0.02", "2+0.02"),
    ],
)
def test_to_pgn(text, pgn):
    assert TimeControl.parse(text).to_pgn() == pgn


def test_incremental_clock_adds_increment_after_each_move():
    clock = Clock(TimeControl.parse("10+0.5"))
    assert clock.spend(2.0) is False
    assert clock.remaining == pytest.approx(8.5)
    assert clock.moves_to_go is None
    assert clock.spend(8.4) is False
    assert clock.remaining == pytest.approx(0.6)


def test_moves_per_session_resets_add_the_next_period():
    clock = Clock(TimeControl.parse("2/10:1/5"))
    assert clock.moves_to_go == 2
    clock.spend(3.0)
    assert clock.moves_to_go == 1
    clock.spend(3.0)
    # Two moves done: the second period (1 move in 5 s) is added to the 4 s left.
    assert clock.period_index == 1
    assert clock.remaining == pytest.approx(9.0)
    assert clock.moves_to_go == 1
    clock.spend(1.0)
    # The last period repeats.
    assert clock.period_index == 2
    assert clock.remaining == pytest.approx(13.0)


def test_flag_falls_only_beyond_the_margin():
    tc = TimeControl.parse("1+0 timemargin=50")
    clock = Clock(tc)
    assert clock.spend(1.04) is False  # 40 ms over, within the 50 ms margin
    assert clock.flag_fell is False
    clock = Clock(tc)
    assert clock.spend(1.06) is True
    assert clock.flag_fell is True


def test_fixed_time_per_move_does_not_accumulate():
    clock = Clock(TimeControl.parse("st=1 timemargin=10"))
    assert clock.spend(0.2) is False
    assert clock.remaining == pytest.approx(1.0)
    assert clock.spend(1.005) is False
    assert clock.spend(1.02) is True


def test_untimed_clock_never_falls():
    clock = Clock(TimeControl.parse("depth=8"))
    assert clock.remaining is None
    assert clock.spend(1000.0) is False
    assert clock.moves_made == 1


def test_start_stop_use_monotonic_instants():
    clock = Clock(TimeControl.parse("5+1"))
    clock.start(at=100.0)
    assert clock.running
    assert clock.time_left(at=102.0) == pytest.approx(3.0)
    assert clock.stop(at=103.5) is False
    assert clock.last_elapsed == pytest.approx(3.5)
    assert clock.remaining == pytest.approx(2.5)
    with pytest.raises(RuntimeError):
        clock.stop()


def test_spend_rejects_nonsense():
    clock = Clock(TimeControl.parse("5"))
    with pytest.raises(ValueError):
        clock.spend(-1.0)


def test_increment_follows_the_current_period() -> None:
    clock = Clock(TimeControl.parse("2/60+1:30+0.5"))
    assert clock.increment == 1.0
    clock.spend(0.1)
    clock.spend(0.1)  # the first period's two moves are made: the second period starts
    assert clock.increment == 0.5
    assert Clock(TimeControl.parse("st=1")).increment is None
    assert Clock(TimeControl.parse("depth=3")).increment is None


@pytest.mark.parametrize(
    ("text", "period", "pgn"),
    [
        # cutechess-cli's minutes:seconds base; the PGN tag is in seconds as cutechess writes it.
        ("0:10+0.1", TimePeriod(0, 10.0, 0.1), "10+0.1"),
        ("tc=0:10+0.1", TimePeriod(0, 10.0, 0.1), "10+0.1"),
        ("40/1:00", TimePeriod(40, 60.0), "40/60"),
        ("1:30", TimePeriod(0, 90.0), "90"),
        ("2:30+1", TimePeriod(0, 150.0, 1.0), "150+1"),
        ("40/2:30+0.5", TimePeriod(40, 150.0, 0.5), "40/150+0.5"),
        ("0:5", TimePeriod(0, 5.0), "5"),
        ("0.5:00", TimePeriod(0, 30.0), "30"),
        ("40/60:30", TimePeriod(40, 3630.0), "40/3630"),
    ],
)
def test_minutes_seconds_as_cutechess_cli_reads_it(text, period, pgn):
    tc = TimeControl.parse(text)
    assert tc.periods == (period,)
    assert tc.to_pgn() == pgn
    assert TimeControl.parse(str(tc)) == tc


@pytest.mark.parametrize(
    ("text", "periods"),
    [
        # PGN period lists keep their meaning: a later period with a move count, an increment
        # before the ':', or more than two digits of seconds is not minutes:seconds.
        ("40/120:20/60", (TimePeriod(40, 120.0), TimePeriod(20, 60.0))),
        ("2/60+1:30+0.5", (TimePeriod(2, 60.0, 1.0), TimePeriod(0, 30.0, 0.5))),
        ("40/7200:3600", (TimePeriod(40, 7200.0), TimePeriod(0, 3600.0))),
        ("40/60:300", (TimePeriod(40, 60.0), TimePeriod(0, 300.0))),
    ],
)
def test_period_lists_are_not_taken_for_minutes_seconds(text, periods):
    assert TimeControl.parse(text).periods == periods


def test_a_head_start_puts_one_increment_on_the_clock_before_the_first_move():
    # cutechess-cli's clocks: base plus one increment at the start, then the same accounting
    # (a flag falls when a move takes more than the time left plus the margin).
    clock = Clock(TimeControl.parse("3+0.05"), head_start=True)
    assert clock.remaining == pytest.approx(3.05)
    assert clock.spend(1.0) is False
    assert clock.remaining == pytest.approx(2.10)
    assert clock.spend(2.0) is False
    assert clock.remaining == pytest.approx(0.15)
    assert clock.spend(0.16) is True  # past the time left (no margin): the flag falls
    plain = Clock(TimeControl.parse("3+0.05"))
    assert plain.remaining == pytest.approx(3.0)
    # Moves per period: only the first period's start carries the increment (none here).
    assert Clock(TimeControl.parse("40/20"), head_start=True).remaining == pytest.approx(20.0)
    assert Clock(TimeControl.parse("inf"), head_start=True).remaining is None
