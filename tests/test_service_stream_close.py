"""An event stream cut while FastAPI's SSE producer still holds an event ends quietly: the
producer's send fails on the closed stream inside a task group, and that group used to reach
the server's log as a traceback (seen at shutdown with a stream open)."""

from __future__ import annotations

import asyncio
from typing import Any

import anyio
import pytest

from runner.service.security import BodyLimit


def _app(error: BaseException, *, start: bool) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if start:
            await send({"type": "http.response.start", "status": 200, "headers": []})
        raise error
    return app


def _call(app: Any) -> None:
    async def receive() -> Any:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(_message: Any) -> None:
        return None

    asyncio.run(BodyLimit(app, 1024)({"type": "http", "headers": []}, receive, send))


def test_a_stream_cut_after_its_response_started_ends_quietly() -> None:
    cut = BaseExceptionGroup("unhandled errors in a TaskGroup", [anyio.BrokenResourceError()])
    _call(_app(cut, start=True))


def test_other_errors_still_reach_the_server() -> None:
    other = BaseExceptionGroup("unhandled errors in a TaskGroup",
                               [anyio.BrokenResourceError(), ValueError("a bug")])
    with pytest.raises(BaseExceptionGroup):
        _call(_app(other, start=True))
    cut = BaseExceptionGroup("unhandled errors in a TaskGroup", [anyio.BrokenResourceError()])
    with pytest.raises(BaseExceptionGroup):  # nothing was answered yet: the server must say so
        _call(_app(cut, start=False))
