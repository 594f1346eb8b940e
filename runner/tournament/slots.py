"""Dask workers started without the ``slots`` resource, found when a run connects.

Every game job asks for one ``slots`` resource; a worker started as plain ``dask worker ADDR``
has none, and the scheduler keeps such jobs waiting forever with no word. A run on a cluster
whose workers all lack it stops at once and says how to start them.
"""

from __future__ import annotations

from typing import Any

__all__ = ["no_slots_message", "workers_without"]


async def workers_without(client: Any, resource: str) -> tuple[list[str], int]:
    """The names of the connected workers that lack `resource`, and how many are connected."""
    identity = await client.scheduler.identity()
    workers: dict[str, Any] = identity.get("workers", {}) if isinstance(identity, dict) else {}
    lacking = [str(info.get("name") or address) for address, info in workers.items()
               if not (info.get("resources") or {}).get(resource)]
    return sorted(lacking), len(workers)


def no_slots_message(address: str, lacking: list[str], resource: str) -> str:
    """The line a run stops with when none of the workers at `address` has `resource`."""
    names = ", ".join(lacking[:5]) + (f" and {len(lacking) - 5} more" if len(lacking) > 5 else "")
    return (f"no Dask worker at {address} has the '{resource}' resource (workers: {names}), so "
            "no game could ever start: start each worker with one slot per game it may play, "
            f'e.g. dask worker {address} --nthreads 8 --resources "{resource}=8" '
            "(runner worker check --cluster ADDR lists the workers and their slots)")
