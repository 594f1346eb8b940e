"""Tokens with roles (`runner token add/list/revoke`, the service's checks), the refusal of
tokens over plain HTTP from other machines, and `runner serve` over TLS."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi", reason="the service extra (fastapi) is not installed")

import httpx
from fastapi.testclient import TestClient

from runner.service.app import create_app
from runner.service.settings import ServiceSettings

REPO = Path(__file__).resolve().parent.parent
ENGINES = REPO / "configs" / "engines.toml"
LOCAL = ("127.0.0.1", 50000)
QUICK = ('name = "t"\nformat = "match"\nengines = ["bundled", "bundled-random"]\n'
         'tc = "5+0.05"\nrounds = 40\nconcurrency = 1\n')
TOML = {"content-type": "application/toml"}


def _runner(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "runner", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env={**os.environ, "COLUMNS": "200"})


def _token(db: Path, name: str, role: str) -> str:
    made = _runner("token", "add", name, "--role", role, "--db", f"sqlite:///{db}",
                   cwd=db.parent)
    assert made.returncode == 0, made.stderr
    (text,) = made.stdout.split()
    return text


def test_token_commands_keep_only_a_hash(tmp_path: Path) -> None:
    db = tmp_path / "service.db"
    text = _token(db, "alice", "submitter")
    assert len(text) >= 40
    assert text.encode() not in db.read_bytes()  # the token's text is never stored
    again = _runner("token", "add", "alice", "--role", "admin", "--db", str(db), cwd=tmp_path)
    assert again.returncode == 2 and "exists" in again.stderr
    wrong = _runner("token", "add", "bob", "--role", "root", "--db", str(db), cwd=tmp_path)
    assert wrong.returncode == 2 and "admin, submitter, worker" in wrong.stderr
    listed = _runner("token", "list", "--db", str(db), cwd=tmp_path)
    assert "alice  submitter" in listed.stdout and "never used" in listed.stdout
    assert text not in listed.stdout + listed.stderr
    assert _runner("token", "revoke", "alice", "--db", str(db), cwd=tmp_path).returncode == 0
    assert "revoked" in _runner("token", "list", "--db", str(db), cwd=tmp_path).stdout
    gone = _runner("token", "revoke", "alice", "--db", str(db), cwd=tmp_path)
    assert gone.returncode == 2 and "no live token" in gone.stderr


def test_roles_decide_what_a_token_may_do(tmp_path: Path) -> None:
    db = tmp_path / "service.db"
    submitter, admin, worker = (_token(db, n, r) for n, r in (
        ("sub", "submitter"), ("adm", "admin"), ("wrk", "worker")))
    settings = ServiceSettings(db_url=f"sqlite:///{db}", engines_file=ENGINES)
    with TestClient(client=LOCAL, app=create_app(settings)) as client:
        def auth(token: str) -> dict[str, str]:
            return {**TOML, "Authorization": f"Bearer {token}"}

        made = client.post("/api/tournaments", content=QUICK, headers=auth(submitter))
        assert made.status_code == 201, made.text
        tournament = made.json()["id"]
        assert client.post("/api/tournaments", content=QUICK,
                           headers=auth(worker)).status_code == 403
        refused = client.post(f"/api/tournaments/{tournament}/stop", headers=auth(submitter))
        assert refused.status_code == 403 and "admin" in refused.json()["detail"]
        assert client.post(f"/api/tournaments/{tournament}/stop?hard=true",
                           headers=auth(admin)).status_code == 200
        assert client.get("/api/tournaments").status_code == 200  # reads stay open
        assert client.post("/api/tournaments", content=QUICK,
                           headers=auth("not-a-token")).status_code == 401
        # Revoked while the service runs: the next request is refused.
        assert _runner("token", "revoke", "sub", "--db", str(db), cwd=tmp_path).returncode == 0
        revoked = client.post("/api/tournaments", content=QUICK, headers=auth(submitter))
        assert revoked.status_code == 401 and "revoked" in revoked.json()["detail"]
    listed = _runner("token", "list", "--db", str(db), cwd=tmp_path).stdout
    assert "adm  admin" in listed and "last used" in listed


def test_a_token_over_plain_http_from_another_machine_is_refused(tmp_path: Path) -> None:
    settings = ServiceSettings(db_url=f"sqlite:///{tmp_path / 's.db'}", engines_file=ENGINES,
                               token="service-token")
    with TestClient(client=("192.0.2.7", 40000), app=create_app(settings)) as remote:
        refused = remote.post("/api/tournaments", content=QUICK,
                              headers={**TOML, "Authorization": "Bearer service-token"})
        assert refused.status_code == 403 and "plain HTTP" in refused.json()["detail"]
        assert remote.get("/api/tournaments").status_code == 200  # no token, no refusal
    with TestClient(client=LOCAL, app=create_app(settings)) as local:
        assert local.post("/api/tournaments", content=QUICK, headers={
            **TOML, "Authorization": "Bearer service-token"}).status_code == 201


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed")
def test_runner_serve_over_tls_and_no_token_in_its_output(tmp_path: Path) -> None:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    db = tmp_path / "s.db"
    token = _token(db, "ci", "admin")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port), "--db", str(db),
         "--engines", str(ENGINES), "--ssl-certfile", str(cert), "--ssl-keyfile", str(key)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    base = f"https://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", verify=str(cert), timeout=1)
                break
            except httpx.TransportError:
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        made = httpx.post(f"{base}/api/tournaments", content=QUICK, verify=str(cert),
                          headers={**TOML, "Authorization": f"Bearer {token}"})
        assert made.status_code == 201, made.text
        stopped = httpx.post(f"{base}/api/tournaments/{made.json()['id']}/stop?hard=true",
                             verify=str(cert), headers={"Authorization": f"Bearer {token}"})
        assert stopped.status_code == 200
        with pytest.raises(httpx.TransportError):  # plain HTTP is not spoken on that port
            httpx.get(f"http://127.0.0.1:{port}/api/tournaments", timeout=5)
    finally:
        serve.terminate()
        output, _ = serve.communicate(timeout=60)
    assert "POST /api/tournaments" in output  # the access log is there ...
    assert token not in output  # ... and never holds the token


def test_serve_refuses_half_a_tls_pair(tmp_path: Path) -> None:
    done = _runner("serve", "--db", str(tmp_path / "x.db"), "--engines", str(ENGINES),
                   "--ssl-certfile", str(tmp_path / "none.pem"), cwd=tmp_path)
    assert done.returncode == 2 and "go together" in done.stderr


def test_forwarding_headers_only_from_a_trusted_proxy(tmp_path: Path) -> None:
    # A runner serve that trusts 127.0.0.1 as its reverse proxy: what the proxy forwards
    # decides. A client that reached the proxy over plain HTTP from another machine is refused
    # as if it had come straight; over HTTPS it is let through (404: no such tournament).
    db = tmp_path / "p.db"
    token = "proxy-test-token"  # the service's own (an admin's): no token add to wait for
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    serve = subprocess.Popen(
        [sys.executable, "-m", "runner", "serve", "--port", str(port), "--db", str(db),
         "--engines", str(ENGINES), "--trusted-proxy", "127.0.0.1"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "RUNNER_TOKEN": token})
    base = f"http://127.0.0.1:{port}"
    auth = {"Authorization": f"Bearer {token}"}
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/api/tournaments", timeout=1)
                break
            except httpx.TransportError:
                assert serve.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        stop = f"{base}/api/tournaments/9/stop"
        remote = {"X-Forwarded-For": "203.0.113.5"}
        plain = httpx.post(stop, headers={**auth, **remote, "X-Forwarded-Proto": "http"})
        assert plain.status_code == 403 and "plain HTTP" in plain.json()["detail"]
        secure = httpx.post(stop, headers={**auth, **remote, "X-Forwarded-Proto": "https"})
        assert secure.status_code == 404, secure.text
        assert httpx.post(stop, headers=auth).status_code == 404  # the proxy's own request
    finally:
        serve.terminate()
        output, _ = serve.communicate(timeout=60)
    assert "203.0.113.5" in output  # the access log names the client the proxy forwarded
    assert token not in output


def test_serve_refuses_a_trusted_proxy_that_is_not_an_address(tmp_path: Path) -> None:
    done = _runner("serve", "--db", str(tmp_path / "x.db"), "--engines", str(ENGINES),
                   "--trusted-proxy", "*", cwd=tmp_path)
    assert done.returncode == 2 and "--trusted-proxy *: not an IP address" in done.stderr
