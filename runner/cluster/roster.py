"""What one cluster run knows about its Dask workers: which may take which game.

A worker is left out of the run when it runs another version of the runner (asked when it
is first seen, at the start or when it joins later), or after `MAX_WORKER_FAILURES` failed
jobs; one that could not start an engine takes no more games needing that engine. The
scheduler (`runner.cluster.scheduler`) asks `allowed` before it sends each job, and tells the
roster each failure a job came back with.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import cast

from distributed import Client

from runner.cluster.worker import JobReply, package_version
from runner.game.slot import EngineFailed
from runner.tournament.events import Notice

__all__ = ["MAX_WORKER_FAILURES", "WorkerRoster"]

MAX_WORKER_FAILURES = 3
"""Failed jobs (engines not starting, runner-side failures) before a worker is left out."""


class WorkerRoster:
    """The failing workers, the ones left out, and who cannot start which engine."""

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}
        """Failed jobs by worker address."""
        self.excluded: set[str] = set()
        """Addresses of the workers that take no more games in this run."""
        self.cannot: dict[str, set[str]] = {}
        """Engine name -> addresses of workers that could not start it."""
        self.live: set[str] = set()
        """The workers connected when last asked (`refresh`)."""
        self.asks_versions = False
        """Whether workers are asked their version (a cluster the run did not start)."""
        self.checked: set[str] = set()
        """Workers whose version was asked (`check_versions`)."""
        self.other_versions: set[str] = set()
        """Workers left out for their version: a game one of them played before it was
        asked (it joined while games were queued) is not counted but played again."""

    @property
    def restricted(self) -> bool:
        """Whether some worker is left out of some game (restrictions then name the others)."""
        return bool(self.excluded or self.cannot)

    async def refresh(self, client: Client) -> None:
        """Ask the scheduler which workers are connected now."""
        self.live = set(await cast("Awaitable[dict[str, int]]", client.nthreads()))

    async def check_versions(self, client: Client) -> list[Notice]:
        """Ask each worker not asked yet which version of the runner it runs, and leave out
        those of another version (or too old to say) with a notice for each; none left stops
        the run at its next game (`allowed`). Called at the start and whenever a game comes
        back, so a worker that joins during the run is asked before it takes a game."""
        from runner import __version__

        self.asks_versions = True
        await self.refresh(client)
        new = sorted(self.live - self.checked)
        if not new:
            return []
        answers = await client.run(package_version, workers=new, on_error="return")
        self.checked.update(answers)
        identity = await client.scheduler.identity()
        workers = identity.get("workers", {}) if isinstance(identity, dict) else {}
        notices = []
        for address, answer in sorted(answers.items()):
            if answer == __version__:
                continue
            self.excluded.add(address)
            self.other_versions.add(address)
            name = str((workers.get(address) or {}).get("name") or address)
            theirs = (f"cecp-runner {answer}" if isinstance(answer, str)
                      else "a version of cecp-runner that cannot say which")
            notices.append(Notice(
                f"worker {name} runs {theirs}, this runner is {__version__}: it takes no "
                "games in this run (install the same version on every worker)"))
        return notices

    async def game_came_back(self, client: Client) -> list[Notice]:
        """After a job came back: ask a worker that joined since its version (when workers
        are asked), or refresh who is connected (when restrictions name them). Nothing is
        said when the scheduler cannot answer: the jobs out fail then, and their failure says
        what happened (a lost scheduler)."""
        if client.status != "running" or not (self.asks_versions or self.restricted):
            return []
        try:
            if self.asks_versions:
                return await self.check_versions(client)
            await self.refresh(client)
        except Exception:  # distributed raises its own comm errors and timeouts here
            pass
        return []

    def allowed(self, engines: Iterable[str]) -> list[str] | None:
        """The workers a game of these engines may run on (None: any; empty: none left),
        leaving out failing and unable ones."""
        banned = set(self.excluded)
        for name in engines:
            banned |= self.cannot.get(name, set())
        if not banned:
            return None
        return sorted(self.live - banned)

    def engine_failed(self, reply: JobReply, outcome: EngineFailed) -> Notice | None:
        """A worker could not start an engine: it takes no more jobs needing that engine."""
        engine = outcome.engine
        address = str(reply.address)
        unable = self.cannot.setdefault(engine, set())
        if address in unable:
            return None  # a job sent before the first failure came back: said already
        unable.add(address)
        self.worker_failed(reply)
        return Notice(f"worker {reply.worker} cannot start engine {engine} "
                      f"({outcome.reason}); it takes no more games needing {engine}")

    def worker_failed(self, reply: JobReply) -> Notice | None:
        """Count a failure against a worker; leave it out of the run after too many."""
        address = str(reply.address)
        count = self.failures.get(address, 0) + 1
        self.failures[address] = count
        if count >= MAX_WORKER_FAILURES and address not in self.excluded:
            self.excluded.add(address)
            return Notice(f"worker {reply.worker} failed {count} jobs; it takes no more "
                          "games in this run")
        return None
