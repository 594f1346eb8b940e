"""What the fleet's tests and its load benchmark (benchmarks/fleet_load.py) send as a worker:
a job of a batch played here for real by the bundled engines of this checkout, and its
upload body (runner.fleet.uploads, the encoder ``runner worker join`` uses)."""

from __future__ import annotations

import asyncio
import dataclasses
import sys

from runner.fleet.uploads import upload_body
from runner.game.job import GameJob
from runner.game.record import GameRecord
from runner.tournament.scheduler import JobFinished, LocalScheduler

__all__ = ["BUNDLED_COMMANDS", "play_here", "upload_body"]

BUNDLED_COMMANDS = {"bundled": ("-m", "engine"), "bundled-v1": ("-m", "engine", "--version", "v1")}
"""The arguments of this Python that start each bundled engine a worker's job may name."""


def play_here(job: GameJob) -> GameRecord:
    """The job played on this machine as an honest worker plays it: its engines started from
    this checkout (a job from the service names its engines, never their commands), through
    the scheduler every local run uses."""
    sides = [dataclasses.replace(c, argv=(sys.executable, *BUNDLED_COMMANDS[c.name]))
             for c in (job.white, job.black)]
    job = dataclasses.replace(job, white=sides[0], black=sides[1])

    async def play() -> GameRecord:
        scheduler = LocalScheduler(1)
        scheduler.submit([job])
        async for event in scheduler.events():
            if isinstance(event, JobFinished):
                return event.record
        raise RuntimeError(f"game {job.index + 1} did not finish")

    return asyncio.run(play())
