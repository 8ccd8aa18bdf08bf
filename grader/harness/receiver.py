"""The remote side of the integration run: a small HTTP receiver with a SQLite ledger of its own,
and the client helper the workers' `send` uses to deliver a claimed job to it.

The receiver stands for an external system that a queue cannot roll back. It is idempotent per
job id, which is what makes a resend after an expired lease harmless:

    POST /deliveries   {"id": <int>, "qty": <int > 0>, "token": <int>}

    201 {"result": "applied",   "id", "qty"}                  first delivery of this id: recorded
    200 {"result": "duplicate", "id", "qty"}                  same id and qty again: acknowledged,
                                                              not applied a second time
    409 {"result": "conflict",  "id", "qty", "recorded_qty"}  same id, another qty: refused
    400 {"result": "bad-request", "error": "..."}             not JSON, not an object, a field
                                                              missing or not an integer, qty <= 0
    404 {"result": "not-found"}                               any other path
    405 {"result": "method-not-allowed"} (Allow: POST)        any other method on /deliveries
    413 {"result": "too-large"}                               a body over 64 KiB

The token is written to the attempt log and never compared: this is idempotency (the same effect
is not applied twice), not fencing (the receiver does not reject an older token).
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from socketserver import ThreadingMixIn
from urllib.parse import urlsplit

PATH = "/deliveries"
MAX_BODY = 64 * 1024
FIELDS = ("id", "qty", "token")

LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS deliveries(
  id     INTEGER PRIMARY KEY,     -- the job id: recorded once
  qty    INTEGER NOT NULL,
  token  INTEGER NOT NULL         -- the token of the delivery that was applied (logged only)
);
CREATE TABLE IF NOT EXISTS attempts(
  seq    INTEGER PRIMARY KEY AUTOINCREMENT,
  id     INTEGER NOT NULL,
  qty    INTEGER NOT NULL,
  token  INTEGER NOT NULL,
  result TEXT NOT NULL            -- applied / duplicate / conflict
);
"""


# -- the ledger (the receiver's own SQLite file) ---------------------------------------------------
def open_ledger(path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=10.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def init_ledger(path) -> None:
    conn = open_ledger(path)
    try:
        conn.executescript(LEDGER_SCHEMA)
    finally:
        conn.close()


def record(conn: sqlite3.Connection, job_id: int, qty: int, token: int) -> tuple[str, int]:
    """Apply one delivery; return (result, recorded qty). One write transaction, so concurrent
    deliveries of the same id see each other: exactly one of them is 'applied'."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        inserted = conn.execute(
            "INSERT OR IGNORE INTO deliveries(id, qty, token) VALUES (?, ?, ?)",
            (job_id, qty, token)).rowcount == 1
        recorded = conn.execute("SELECT qty FROM deliveries WHERE id = ?", (job_id,)).fetchone()[0]
        result = "applied" if inserted else "duplicate" if recorded == qty else "conflict"
        conn.execute("INSERT INTO attempts(id, qty, token, result) VALUES (?, ?, ?, ?)",
                     (job_id, qty, token, result))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result, recorded


def parse_delivery(body: bytes) -> dict:
    """The delivery in a request body; ValueError (with a short reason) if it is not one."""
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    missing = [f for f in FIELDS if f not in data]
    if missing:
        raise ValueError(f"missing field(s): {', '.join(missing)}")
    wrong = [f for f in FIELDS if type(data[f]) is not int]  # bool and float are not ids
    if wrong:
        raise ValueError(f"field(s) must be integers: {', '.join(wrong)}")
    if data["qty"] <= 0:
        raise ValueError("qty must be positive")
    return {f: data[f] for f in FIELDS}


# -- the HTTP server -------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    timeout = 10  # a client that stops sending mid-request cannot hold a thread forever

    def do_POST(self):
        if self.path != PATH:
            return self._reply(404, {"result": "not-found"})
        length = self.headers.get("Content-Length", "0")
        if not length.isdigit():
            return self._reply(400, {"result": "bad-request", "error": "bad Content-Length"})
        if int(length) > MAX_BODY:
            return self._reply(413, {"result": "too-large"})
        try:
            delivery = parse_delivery(self.rfile.read(int(length)))
        except ValueError as exc:
            return self._reply(400, {"result": "bad-request", "error": str(exc)})
        conn = open_ledger(self.server.ledger)
        try:
            result, recorded = record(conn, delivery["id"], delivery["qty"], delivery["token"])
        finally:
            conn.close()
        body = {"result": result, "id": delivery["id"], "qty": delivery["qty"]}
        if result == "conflict":
            body["recorded_qty"] = recorded
        self._reply({"applied": 201, "duplicate": 200, "conflict": 409}[result], body)

    def _other_method(self):
        if self.path != PATH:
            return self._reply(404, {"result": "not-found"})
        self._reply(405, {"result": "method-not-allowed"}, {"Allow": "POST"})

    do_GET = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _other_method

    def _reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, format, *args):  # noqa: A002 - the ledger is the log; keep stderr quiet
        pass


class _Server(ThreadingMixIn, HTTPServer):
    daemon_threads = False  # so that server_close() joins every request thread
    block_on_close = True
    request_queue_size = 64  # the default 5 drops simultaneous connects (they retry after 1 s)
    ledger: Path


class Receiver:
    """The receiver on 127.0.0.1 (port 0: the OS picks a free one), serving from a thread.

        with Receiver(tmp / "receiver.db") as receiver:
            deliver(receiver.url, claim)
            receiver.records()   # {job id: qty}
    """

    def __init__(self, ledger, host: str = "127.0.0.1", port: int = 0):
        self.ledger = Path(ledger)
        self._address = (host, port)
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> "Receiver":
        init_ledger(self.ledger)
        self._server = _Server(self._address, _Handler)
        self._server.ledger = self.ledger
        self._thread = threading.Thread(target=self._server.serve_forever, name="receiver",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}{PATH}"

    def stop(self) -> None:
        """Stop serving, wait for requests in flight, close the socket."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()
        self._server = None

    def __enter__(self) -> "Receiver":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def records(self) -> dict[int, int]:
        """What the receiver has applied: {job id: qty}."""
        return dict(self._read("SELECT id, qty FROM deliveries ORDER BY id"))

    def attempts(self) -> list[dict]:
        """Every delivery it answered (applied, duplicate or conflict), in order."""
        rows = self._read("SELECT seq, id, qty, token, result FROM attempts ORDER BY seq")
        return [dict(zip(("seq", "id", "qty", "token", "result"), row)) for row in rows]

    def _read(self, sql: str) -> list[tuple]:
        conn = open_ledger(self.ledger)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()


# -- the client ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    status: int
    body: dict

    @property
    def result(self) -> str | None:
        return self.body.get("result")

    @property
    def accepted(self) -> bool:
        """The receiver holds this delivery now (applied, or applied before)."""
        return self.result in ("applied", "duplicate")


class DeliveryRefused(Exception):
    """The receiver did not accept a delivery (conflict, bad request, ...)."""

    def __init__(self, reply: Reply):
        super().__init__(f"receiver answered {reply.status} {reply.body}")
        self.reply = reply


def request(url: str, method: str = "POST", body: bytes | None = None,
            timeout: float = 10.0) -> Reply:
    """One HTTP request straight to the receiver (no proxies); the reply, whatever its status."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request(method, parts.path or "/", body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
    finally:
        conn.close()
    try:
        parsed = json.loads(data) if data else {}
    except json.JSONDecodeError:
        parsed = {"raw": data.decode("utf-8", "replace")}
    return Reply(response.status, parsed if isinstance(parsed, dict) else {"raw": parsed})


def deliver(url: str, claim, timeout: float = 10.0) -> Reply:
    """POST a claimed job (anything with id, qty, token) to the receiver; raise DeliveryRefused
    unless it was applied or acknowledged as a duplicate."""
    payload = {"id": claim.id, "qty": claim.qty, "token": claim.token}
    reply = request(url, "POST", json.dumps(payload).encode(), timeout)
    if not reply.accepted:
        raise DeliveryRefused(reply)
    return reply
