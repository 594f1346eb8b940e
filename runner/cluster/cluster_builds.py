"""The coordinator's side of engines built on the Dask workers: the build orders it sends,
the builds the workers report, and their benches checked against the expected ones.

`ClusterBuilds` asks every connected worker to build before the first game (a notice per
build; a worker whose build failed is left out for that engine) and reads the builds a late
worker reports with its first game. A bench that differs from another machine's or from the
declared count ends the run, as does an engine no worker could build. The worker's side is
`runner.build.placed`.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping

from distributed import Client

from runner.build.benches import MachineBuild, machines_disagree
from runner.build.placed import orders_json
from runner.cluster.roster import WorkerRoster
from runner.cluster.worker import JobReply, build_engines
from runner.config.recipes import BuildOrder
from runner.tournament.events import MachineBuilt, Notice
from runner.tournament.scheduler import SchedulerEvent, SchedulerFailure

__all__ = ["ClusterBuilds", "first_line"]


class ClusterBuilds:
    """The engines each worker builds itself before it plays them, seen from the coordinator."""

    def __init__(self, orders: Mapping[str, BuildOrder] | None = None) -> None:
        self.orders = dict(orders or {})
        """The build orders by engine name (none: every engine is given by its path)."""
        self.orders_json = orders_json(self.orders) if self.orders else None
        """The orders as the workers' tasks receive them, or None when nothing is built."""

    async def build_everywhere(self, client: Client,
                               workers: WorkerRoster) -> AsyncGenerator[SchedulerEvent, None]:
        """Have every connected worker build the ordered engines and bench them before the
        first game: a notice per build; a worker whose build failed plays no game of that
        engine; no worker left for an engine, or a bench that differs from the expected one
        (another machine's or the declared count), ends the run with why."""
        await workers.refresh(client)
        asked = sorted(workers.live - workers.excluded)
        if not asked:
            return  # none yet: each builds at its first game
        answers = await client.run(build_engines, self.orders_json, workers=asked,
                                   on_error="return")
        made: list[MachineBuild] = []
        failed: dict[str, list[str]] = {}
        for address, answer in sorted(answers.items()):
            if not isinstance(answer, list):  # it builds at its first game instead
                yield Notice(f"worker {address} could not be asked to build: "
                             f"{first_line(answer)}")
                continue
            for entry in answer:
                engine = str(entry["engine"])
                if "failed" in entry:
                    workers.cannot.setdefault(engine, set()).add(address)
                    failed.setdefault(engine, []).append(str(entry["failed"]))
                    yield Notice(f"worker {address} cannot build {engine}: "
                                 f"{str(entry['failed']).splitlines()[0]}")
                    continue
                record = MachineBuild(**entry["build"])
                made.append(record)
                yield _built(engine, record)
        wrong = machines_disagree(self.orders.values(), made)
        if wrong is not None:
            yield SchedulerFailure(str(wrong), refused=True)
            return
        for engine, why in failed.items():
            if len(why) == len(asked):
                yield SchedulerFailure(f"no worker could build {engine}: {why[0]}", refused=True)
                return

    def came_back(self, reply: JobReply) -> tuple[list[MachineBuilt], str | None]:
        """The builds a worker that joined late made at its first game, as notices, and why
        their benches disagree with the expected ones (None: they agree)."""
        notices = [_built(f"{made.side}-{made.commit[:8]}", made) for made in reply.builds]
        wrong = machines_disagree(self.orders.values(), reply.builds)
        return notices, None if wrong is None else str(wrong)


def _built(engine: str, record: MachineBuild) -> MachineBuilt:
    """The notice of a worker's build of `engine`, with its record."""
    how = "from its cache" if record.cached else f"in {record.seconds:.1f} s"
    speed = f", {record.nps} nodes/s" if record.nps is not None else ""
    bench = f": bench {record.nodes} nodes{speed}" if record.nodes is not None else ""
    return MachineBuilt(f"worker {record.machine} built {engine} {how}{bench}",
                        record.to_json())


def first_line(error: BaseException) -> str:
    """An exception as the end of a one-line message: its type and its message's first line
    (Dask's add a second line of advice that would split the run's one line of failure)."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
