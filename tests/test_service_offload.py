"""Where the service builds its heavy reads: a small tournament's on a thread of its own
process (fast even on a busy machine), a big one's in a worker process at low priority."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from runner.service.offload import SMALL_READ, Offload
from runner.store.store import Store


def where(store: Store | None = None) -> tuple[int, bool]:
    """The process this ran in, and whether it was handed the service's store (a thread)."""
    return os.getpid(), store is not None


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store.open(f"sqlite:///{tmp_path / 'reads.db'}")


def test_a_small_tournament_is_read_on_a_thread(store: Store) -> None:
    offload = Offload(store, 1)
    try:
        assert offload.in_processes
        found = asyncio.run(offload.call(where, games=SMALL_READ))
        assert found == (os.getpid(), True)
        assert offload._pool is None, "a small read started the worker processes"
    finally:
        offload.close()


@pytest.mark.timeout(120)
def test_a_big_tournament_is_read_in_a_worker_process(store: Store) -> None:
    offload = Offload(store, 1)
    try:
        pid, given = asyncio.run(offload.call(where, games=SMALL_READ + 1))
        assert pid != os.getpid() and not given
        unknown, _ = asyncio.run(offload.call(where))  # the size not known: a worker too
        assert unknown == pid
    finally:
        offload.close()


def test_without_workers_every_read_is_on_a_thread(store: Store) -> None:
    offload = Offload(store, 0)
    assert asyncio.run(offload.call(where, games=10 * SMALL_READ)) == (os.getpid(), True)
