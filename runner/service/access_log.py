"""The access log's lines for the remote workers' batch traffic, left out when the operator
says so (``runner serve --access-log workers-quiet``, the default).

A fleet uploads games and heartbeats many times a second; under load, writing a line for
each took about a sixth of the event loop's time (the loop that also referees the games),
for lines nobody reads. A refusal (status 400 or more) keeps its line, and so does every
other route (a worker's registration, an admin's block).
"""

from __future__ import annotations

import logging
import re

from runner.service.fleet_api import router as fleet_router

__all__ = ["ACCESS_LOGGER", "QuietWorkers", "quiet_workers"]

ACCESS_LOGGER = "uvicorn.access"
"""The logger uvicorn writes its access lines to."""
_BATCH_TRAFFIC = re.compile(re.escape(fleet_router.prefix)
                            + r"/\d+/(?:batch|batches/\d+/[a-z]+)")
"""A worker's request for a batch, and its uploads, heartbeats, builds and end of one."""


class QuietWorkers(logging.Filter):
    """Drops the line of a worker's batch request answered with success."""

    def filter(self, record: logging.LogRecord) -> bool:
        """False for the line to drop (uvicorn's arguments: client, method, path with
        query, HTTP version, status)."""
        args = record.args
        if not isinstance(args, tuple) or len(args) != 5:
            return True
        path, status = args[2], args[4]
        return not (isinstance(status, int) and status < 400 and isinstance(path, str)
                    and _BATCH_TRAFFIC.fullmatch(path) is not None)


def quiet_workers(logger: logging.Logger, quiet: bool) -> None:
    """Leave the workers' batch traffic out of `logger`'s lines (`quiet`), or put it back."""
    for present in [f for f in logger.filters if isinstance(f, QuietWorkers)]:
        logger.removeFilter(present)
    if quiet:
        logger.addFilter(QuietWorkers())
