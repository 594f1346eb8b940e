"""Pairings: how many games each format schedules, game pairs with colors swapped, color
balance, stable job keys, and random access agreeing with iteration."""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runner.tournament.pairing import Pairing, ScheduledGame, gauntlet, match, round_robin


def _check_pairs(schedule: Pairing) -> list[ScheduledGame]:
    """Invariants every schedule keeps; returns its jobs."""
    jobs = list(schedule)
    assert len(jobs) == schedule.total() == len(schedule)
    assert [job.index for job in jobs] == list(range(schedule.total()))
    assert [schedule.job(job.index) for job in jobs] == jobs
    for first, second in zip(jobs[::2], jobs[1::2], strict=True):
        # One opening, two games, same engines, colors swapped, one after the other.
        assert first.pair == second.pair == first.index // 2
        assert (first.game_in_pair, second.game_in_pair) == (0, 1)
        assert (first.white, first.black) == (second.black, second.white)
        assert first.opening_index == second.opening_index
        assert first.round == second.round and first.encounter == second.encounter
    assert len({job.opening_index for job in jobs}) == schedule.total() // 2
    assert len({(job.round, job.pair, job.game_in_pair) for job in jobs}) == len(jobs)
    for job in jobs:
        assert job.white != job.black
    return jobs


def _colors(jobs: list[ScheduledGame]) -> tuple[Counter[str], Counter[str]]:
    """How often each engine had White and Black."""
    return Counter(j.white for j in jobs), Counter(j.black for j in jobs)


@pytest.mark.parametrize("rounds, games", [(1, 2), (3, 2), (2, 6), (5, 4)])
def test_match(rounds: int, games: int) -> None:
    jobs = _check_pairs(match("new", "old", rounds=rounds, games=games))
    assert len(jobs) == rounds * games
    whites, blacks = _colors(jobs)
    assert whites["new"] == whites["old"] == blacks["new"] == blacks["old"] == rounds * games // 2
    assert {job.round for job in jobs} == set(range(1, rounds + 1))


@pytest.mark.parametrize("opponents, rounds, games", [(1, 1, 2), (3, 2, 2), (4, 3, 4)])
def test_gauntlet(opponents: int, rounds: int, games: int) -> None:
    others = [f"o{i}" for i in range(opponents)]
    jobs = _check_pairs(gauntlet("hero", others, rounds=rounds, games=games))
    assert len(jobs) == opponents * rounds * games
    assert all("hero" in job.engines for job in jobs)
    per_opponent = Counter(job.black if job.white == "hero" else job.white for job in jobs)
    assert per_opponent == {o: rounds * games for o in others}
    whites, blacks = _colors(jobs)
    assert whites["hero"] == blacks["hero"] == len(jobs) // 2
    for other in others:
        assert whites[other] == blacks[other] == rounds * games // 2


@pytest.mark.parametrize("engines, rounds, games", [(2, 1, 2), (3, 1, 2), (4, 2, 2),
                                                   (5, 1, 4), (8, 2, 2)])
def test_round_robin(engines: int, rounds: int, games: int) -> None:
    names = [f"e{i}" for i in range(engines)]
    schedule = round_robin(names, rounds=rounds, games=games)
    jobs = _check_pairs(schedule)
    encounters = engines * (engines - 1) // 2
    assert len(jobs) == encounters * rounds * games
    met = Counter(frozenset(job.engines) for job in jobs)
    assert met == {frozenset(p): rounds * games for p in combinations(names, 2)}
    whites, blacks = _colors(jobs)
    for name in names:
        assert whites[name] == blacks[name] == (engines - 1) * rounds * games // 2


def test_round_robin_spreads_engines_over_consecutive_encounters() -> None:
    """Circle method: within each block of n/2 encounters, no engine appears twice."""
    names = [f"e{i}" for i in range(6)]
    encounters = round_robin(names).encounters
    for start in range(0, len(encounters), 3):
        block = [name for pair in encounters[start:start + 3] for name in pair]
        assert len(block) == len(set(block)) == 6


def test_pair_openers_alternate_within_an_encounter() -> None:
    jobs = list(match("a", "b", games=8))
    assert [j.white for j in jobs if j.game_in_pair == 0] == ["a", "b", "a", "b"]


def test_rounds_come_in_order_and_hold_every_encounter() -> None:
    schedule = gauntlet("a", ["b", "c"], rounds=3, games=4)
    for job in schedule:
        assert job.round == job.index // schedule.per_round + 1
    rounds = Counter(job.round for job in schedule)
    assert rounds == {1: 8, 2: 8, 3: 8}


def test_max_games_cuts_on_a_pair_boundary() -> None:
    assert match("a", "b", rounds=100, max_games=31).total() == 30
    assert match("a", "b", rounds=2, max_games=1000).total() == 4
    jobs = _check_pairs(match("a", "b", rounds=100, max_games=10))
    assert len(jobs) == 10


def test_resume_skips_finished_jobs_and_keys_are_stable() -> None:
    schedule = round_robin(["a", "b", "c"], rounds=2)
    done = {0, 1, 2, 5, 7}
    rest = list(schedule.jobs(skip=done))
    assert [job.index for job in rest] == [i for i in range(schedule.total()) if i not in done]
    again = round_robin(["a", "b", "c"], rounds=2)
    assert [again.job(job.index) for job in rest] == rest
    assert [job.index for job in schedule.jobs(start=9)] == list(range(9, schedule.total()))


def test_scheduled_games_are_frozen_values_rebuilt_from_their_index() -> None:
    schedule = gauntlet("a", ["b", "c"], rounds=2)
    again = gauntlet("a", ["b", "c"], rounds=2)
    for game in schedule:
        rebuilt = again.job(game.index)
        assert rebuilt == game and hash(rebuilt) == hash(game)
        key = game.key
        assert json.loads(json.dumps(dataclasses.astuple(key))) == [
            game.index, game.round, game.pair, game.game_in_pair, game.white, game.black,
            game.opening_index]
    game = match("a", "b").job(0)
    with pytest.raises(AttributeError):
        game.white = "c"  # type: ignore[misc]


@pytest.mark.parametrize("make, message", [
    (lambda: match("a", "b", games=3), "even"),
    (lambda: match("a", "b", games=0), "even"),
    (lambda: match("a", "b", rounds=0), "rounds"),
    (lambda: match("a", "a"), "cannot play itself"),
    (lambda: round_robin(["a"]), "at least 2"),
    (lambda: round_robin(["a", "b", "a"]), "unique"),
    (lambda: gauntlet("a", []), "at least one encounter"),
    (lambda: match("a", "b", max_games=1), "max_games"),
])
def test_bad_schedules_are_refused(make, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_job_outside_the_schedule() -> None:
    schedule = match("a", "b")
    with pytest.raises(IndexError, match="outside the schedule"):
        schedule.job(2)
    with pytest.raises(IndexError):
        schedule.job(-1)


@given(st.integers(2, 9), st.integers(1, 3), st.sampled_from([2, 4, 6]))
def test_round_robin_properties(engines: int, rounds: int, games: int) -> None:
    names = [f"e{i}" for i in range(engines)]
    schedule = round_robin(names, rounds=rounds, games=games)
    jobs = _check_pairs(schedule)
    whites, blacks = _colors(jobs)
    assert whites == blacks
    assert len(set(schedule.encounters)) == len(schedule.encounters)
    assert {frozenset(p) for p in schedule.encounters} == {
        frozenset(p) for p in combinations(names, 2)}
