"""`runner serve --access-log`: the remote workers' batch traffic answered with success has
no line by default (it comes many a second); their refusals and every other route keep
theirs; a value that is not one is refused before anything listens."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

import httpx
from test_service_browser import TOKEN as SERVICE_TOKEN
from test_service_browser import _serve

from runner.fleet import WIRE_VERSION
from runner.service.access_log import quiet_workers
from runner.service.server import ServeRefused, serve

REPO = Path(__file__).resolve().parents[1]
ENGINES = REPO / "configs" / "engines.toml"


def test_the_filter_drops_only_a_worker_s_batch_traffic_answered_with_success() -> None:
    logger = logging.getLogger("test_access_log")
    seen: list[str] = []
    handler = logging.Handler()
    handler.emit = lambda record: seen.append(record.getMessage())  # type: ignore[method-assign]
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        for quiet in (True, True, False):  # twice: still one filter
            seen.clear()
            quiet_workers(logger, quiet)
            for path, status in (("/api/workers/3/batch", 200), ("/api/workers/3/batch", 204),
                                 ("/api/workers/3/batches/9/games", 201),
                                 ("/api/workers/3/batches/9/games", 422),
                                 ("/api/workers/3/batches/9/heartbeat", 409),
                                 ("/api/workers", 201), ("/api/workers/3/block", 200),
                                 ("/api/tournaments", 201)):
                # uvicorn's line and arguments (uvicorn/protocols/http/h11_impl.py)
                logger.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5", "POST", path, "1.1",
                            status)
            kept = [line.split('"')[1].split()[1] + line.rsplit(" ", 1)[1] for line in seen]
            assert kept == [
                *([] if quiet else ["/api/workers/3/batch200", "/api/workers/3/batch204",
                                    "/api/workers/3/batches/9/games201"]),
                "/api/workers/3/batches/9/games422", "/api/workers/3/batches/9/heartbeat409",
                "/api/workers201", "/api/workers/3/block200", "/api/tournaments201"]
    finally:
        quiet_workers(logger, False)
        logger.removeHandler(handler)


@pytest.mark.slow  # a real runner serve: about 12 s to start on a loaded machine
def test_a_worker_s_answered_requests_are_quiet_and_its_refusals_are_not(
        tmp_path: Path) -> None:
    auth = {"Authorization": f"Bearer {SERVICE_TOKEN}"}  # the service's token is an admin's
    with _serve(tmp_path, "--accept-workers") as base:
        joined = httpx.post(f"{base}/api/workers", headers=auth, timeout=30, json={
            "name": "quiet", "concurrency": 1, "cores": 1, "memory_mb": 1, "os": "x",
            "version": "test", "wire": WIRE_VERSION, "engines": ["bundled"]})
        assert joined.status_code == 201, joined.text
        me = f"/api/workers/{joined.json()['id']}"
        assert httpx.post(f"{base}{me}/batch", headers=auth, timeout=30).status_code == 204
        refused = httpx.post(f"{base}{me}/batches/77/heartbeat", headers=auth, timeout=30)
        assert refused.status_code == 409
    output = (tmp_path / "serve.log").read_text(errors="replace")
    assert '"POST /api/workers HTTP/1.1" 201' in output  # a registration keeps its line
    assert f"POST {me}/batch " not in output  # asked and answered: no line
    assert f'"POST {me}/batches/77/heartbeat HTTP/1.1" 409' in output  # a refusal has one


def test_an_access_log_that_is_not_one_is_refused(tmp_path: Path) -> None:
    def no_store(_db: str | None) -> None:
        raise AssertionError("the store is opened after the choices are checked")

    with pytest.raises(ServeRefused, match="--access-log some: not one of all, "
                                           "workers-quiet, none"):
        serve({"engines_file": ENGINES, "access_log": "some"}, db=str(tmp_path / "x.db"),
              token_file=None, open_store=no_store, say=print)  # type: ignore[arg-type]
