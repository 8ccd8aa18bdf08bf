"""The remote side of the integration run: a small HTTP receiver with a SQLite ledger of its own,
and the client helper the workers' `send` uses to deliver a claimed job to it.

The receiver stands for an external system that a queue cannot roll back. It is idempotent per
job id, which is what makes a resend after an expired lease harmless:

    POST /deliveries   {"id": <int>, "qty": <int > 0>, "token": <int>}

    201 {"result": "applied",   "id", "qty"}                  first delivery of this id: recorded
    200 {"result": "duplicate", "id", "qty"}                  same id and qty again: acknowledged,
                                                              not applied a second time
    409 {"result": "conflict",  "id", "qty", "recorded_qty"}  same id, another qty: refused
    400 {"result": "bad-request", "error": "..."}             not JSON (NaN, Infinity, 1e999,
                                                              bad UTF-8, nested too deeply), not
                                                              an object, a field missing, not an
                                                              integer or outside the signed 64-bit
                                                              range, qty <= 0, a body shorter than
                                                              its Content-Length
    404 {"result": "not-found"}                               any other path
    405 {"result": "method-not-allowed"} (Allow: POST)        any other method on /deliveries
    413 {"result": "too-large"}                               a body over 64 KiB

The token is written to the attempt log and never compared: this is idempotency (the same effect
is not applied twice), not fencing (the receiver does not reject an older token).
"""

from __future__ import annotations

import http.client
import json
import math
import socket
import sqlite3
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from socketserver import ThreadingMixIn
from urllib.parse import urlsplit

PATH = "/deliveries"
MAX_BODY = 64 * 1024
FIELDS = ("id", "qty", "token")
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1  # what a SQLite INTEGER holds
REQUEST_TIMEOUT = 5.0  # seconds a client may stay silent in the middle of a request
STOP_WAIT = 5.0  # seconds stop() waits for the requests in flight to end, at most

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
    data = _load_json(body)
    if not isinstance(data, dict):
        raise ValueError("body must be a JSON object")
    missing = [f for f in FIELDS if f not in data]
    if missing:
        raise ValueError(f"missing field(s): {', '.join(missing)}")
    wrong = [f for f in FIELDS if type(data[f]) is not int]  # bool and float are not ids
    if wrong:
        raise ValueError(f"field(s) must be integers: {', '.join(wrong)}")
    too_big = [f for f in FIELDS if not INT64_MIN <= data[f] <= INT64_MAX]
    if too_big:
        raise ValueError(f"field(s) outside the signed 64-bit range: {', '.join(too_big)}")
    if data["qty"] <= 0:
        raise ValueError("qty must be positive")
    return {f: data[f] for f in FIELDS}


def _load_json(body: bytes):
    """Strict JSON: no NaN/Infinity, no number that overflows a float, bounded nesting."""
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_no_constant,
                          parse_float=_finite_float)
    except RecursionError:
        raise ValueError("body is not JSON: nested too deeply") from None
    except ValueError as exc:  # bad UTF-8, bad syntax, an integer of over 4300 digits, ...
        raise ValueError(f"body is not JSON: {exc}") from None


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON value")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {literal[:20]}")
    return value


# -- the HTTP server -------------------------------------------------------------------------------
class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    timeout = REQUEST_TIMEOUT  # a client silent mid-request is dropped (handle_one_request)

    def do_POST(self):
        if self.path != PATH:
            return self._reply(404, {"result": "not-found"})
        length = self.headers.get("Content-Length", "0")
        if not (length.isascii() and length.isdigit()):  # "²".isdigit() too
            return self._reply(400, {"result": "bad-request", "error": "bad Content-Length"})
        if int(length) > MAX_BODY:
            return self._reply(413, {"result": "too-large"})
        body = self.rfile.read(int(length))
        try:
            if len(body) < int(length):
                raise ValueError("body shorter than its Content-Length")
            delivery = parse_delivery(body)
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
    """One daemon thread per connection, each known to the server, so that stopping can end
    them all within a bounded time: a client that sends half a request and waits holds none."""

    daemon_threads = True
    request_queue_size = 64  # the default 5 drops simultaneous connects (they retry after 1 s)
    ledger: Path

    def server_activate(self) -> None:
        super().server_activate()
        self._open: dict[socket.socket, threading.Thread] = {}
        self._open_lock = threading.Lock()

    def process_request(self, request, client_address) -> None:
        thread = threading.Thread(target=self.process_request_thread, name="receiver-request",
                                  args=(request, client_address), daemon=True)
        with self._open_lock:  # forget the connections that ended; joining them is instant
            self._open = {r: t for r, t in self._open.items() if t.is_alive()}
            self._open[request] = thread
        thread.start()

    def server_close(self) -> None:
        """Close the listening socket, then end the connections: a handler waiting for its
        client's next bytes reads end-of-file at once (it may still write its answer); one
        busy with its delivery finishes it. Waits STOP_WAIT seconds at most in all."""
        super().server_close()
        with self._open_lock:
            open_now = dict(self._open)
        for request in open_now:
            try:
                request.shutdown(socket.SHUT_RD)
            except OSError:  # closed meanwhile
                pass
        deadline = time.monotonic() + STOP_WAIT
        for thread in open_now.values():
            thread.join(max(0.0, deadline - time.monotonic()))

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], OSError):  # a client gone away is not news
            super().handle_error(request, client_address)


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
        """Stop serving, close the socket, let the requests in flight end (within STOP_WAIT
        seconds, whatever the clients do)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(STOP_WAIT)
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
