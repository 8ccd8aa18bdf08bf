"""The judge's side of the target process: start it, call into it, believe only validated data.

`TargetProcess(spec)` starts a target server (spawned, or forked by the zygote) and mirrors what
a check does with the code under grade: its connections, held here (`dbhost`), claim / finish /
work_once with the judge's callbacks, and what was seen of the call (the statements traced, the
connections of its own, a transaction open at each send). Every message from the target is
checked field by field; anything irregular is a `ProtocolError` and the process is killed. Beside
it: its errors (`TargetEnded`, `TargetTimeout`, ..., `SendFailed` for the judge's callbacks) in
target_errors, a reply's fields and a call under way in target_fields, its pipes and launcher in
target_pipe, the statement gate of its gated connections in target_gate; what a call returns or
raises (`Foreign`, `RaisedInTarget`) in grader.harness.wire.values. Its methods, callbacks and
gated connections: docs/protocol.md, "The judge's side".

This module never imports the code under grade, and nothing it receives is unpickled.
"""

from __future__ import annotations

import builtins
import os
import random
import sqlite3
import subprocess
import sys
import threading
import time
import weakref
from typing import Any, Callable

from lab.store import BUSY_TIMEOUT_MS, Claim

from grader.harness import wire
from grader.harness.processes import sandbox, workroot
from grader.harness.processes.launch import scrubbed
from . import callbacks
from .dbhost import DbHost
from .dbvalues import RequestError
from .target_errors import (FunctionHung, ProtocolError, RequestRefused, SendFailed, TargetClosed,
                            TargetEnded, TargetProcessError, TargetTimeout, restated)
from .target_fields import (CALLS, CallFrame, conn_name, dropped_field, int64, load_error,
                            own_connections_field as _own_connections, printed_field as _printed,
                            raised_error, ready_fields, short_str, weakly, what)
from .target_gate import Gates
from .target_pipe import (Pipe, PipeBroken, PipeEnded, PipeTimeout, default_launcher, end_target,
                          kill_target)
from grader.harness.wire.values import RaisedInTarget, decode_error, decode_value


#: Folders the target may write besides its databases' (os.pathsep-separated): for the
#: project's attack tests, which need to see what an attack managed to do. Never set it to
#: grade a class: it widens the jail (grader.harness.processes.jail).
EXTRA_WRITABLE = "LEASELAB_EXTRA_WRITABLE"
CALL_TIMEOUT = 10.0  # seconds the target may keep control before it is taken as hung
START_TIMEOUT = 20.0  # a fresh interpreter that imports the target, on a loaded machine
_SCALARS = (type(None), bool, int, float, str)  # what a callback's answer may be


class TargetProcess:
    """A proxy for the code under grade, running in a process of its own."""

    def __init__(self, spec: str, *, cwd: str | None = None, env: dict | None = None,
                 log: str | None = None, timeout: float = CALL_TIMEOUT,
                 start_timeout: float = START_TIMEOUT, python: str = sys.executable,
                 writable: tuple | list = (), launcher: Callable | None = None,
                 hung: frozenset | set | tuple = (), jail: bool = True):
        self.spec = spec
        #: functions this grade saw hang (FunctionHung: a call of one is not made)
        self.hung = frozenset(hung)
        self.contained = 0  # the Landlock ABI the target process is jailed with (0: none)
        # The target may write only a scratch folder of its own (its TMPDIR), never the
        # databases' folders: it holds no database handle (the judge's DbHost does), and the
        # jail denies it the files (grader.harness.processes.jail). `writable`: folders it may write too.
        self.scratch = workroot.make("target-")  # its judge's folder (workroot)
        places = [self.scratch] + [str(p) for p in writable]
        # The project's own attack tests let an attack leave marks where the test looks.
        places += [p for p in os.environ.get(EXTRA_WRITABLE, "").split(os.pathsep) if p]
        env = {**scrubbed(os.environ if env is None else env), "TMPDIR": places[0],
               "SQLITE_TMPDIR": places[0]}
        if jail:  # False: as on a kernel without Landlock (the project's tests of that case)
            env[wire.JAIL_ENV] = os.pathsep.join(places)
        self.timeout = timeout
        #: traced during the last call: (conn, sql, tables), `tables` those the statement reads
        #: or writes as SQLite's authorizer told (dbhost.DbHost.tables_read), None: not known
        self.statements: list[tuple[str, str, frozenset | None]] = []
        #: conn.in_transaction after the last claim / finish / work_once (None: not known)
        self.in_transaction_after: bool | None = None
        #: for each send of the last work_once, what its connection held as send was called
        #: (dbhost.DbHost.held: a transaction open; the code's statements still running)
        self.sends_held: list[tuple[bool, tuple[int, int] | None]] = []
        self.sending_in_transaction: bool | None = None  # a transaction, for the send now
        #: for the clock being called back now: how many sends of its work_once had returned
        #: (or raised) when the code called clock(), on whatever thread (a reading taken while
        #: send still runs is answered only once it returned: this says when it was asked)
        self.clock_ended: int | None = None
        self.dropped = 0  # statements of the last call not kept (over the limit)
        #: paths of the connections the last claim / finish / work_once opened of its own to
        #: the databases opened here (the contract: it uses the connection it is given)
        self.own_connections: list[str] = []
        #: what the code printed during the last call (its text, and how many characters of it
        #: were left out), or None: shown beside the call, never believed
        self.printed: tuple[str, int] | None = None
        #: characters the code printed in this process so far, left-out ones included: every
        #: call's, through a Lab or not (the random timelines call here directly)
        self.printed_total = 0
        self.calls = 0
        #: the real connections behind the proxies the code under grade holds (dbhost)
        self.db = DbHost(traced=weakly(self, TargetProcess._traced))
        self.db.call_out = weakly(self, TargetProcess._function)
        self.gates = Gates()  # the connections opened gated, their statement gate
        self._gate_error: BaseException | None = None  # a gate's callable raised: re-raised
        self._stack: list[CallFrame] = []
        self._closed: str | None = None
        self._thread = threading.get_ident()
        self._last_cb = 0
        launch = launcher or default_launcher()
        self._process, out, in_ = launch(spec, python=python, cwd=cwd, env=env, log=log)
        self._pipe = Pipe(out, in_, getattr(self._process, "reader", None))
        self.pid = self._process.pid
        self._finalizer = weakref.finalize(self, end_target, self._process, in_, out,
                                           db=self.db, scratch=self.scratch)
        sandbox.on_time_up(self.kill)  # a judge's watchdog (the portable path) kills it
        try:
            self._start(start_timeout)
        except BaseException:
            self.close()
            raise

    # -- the calls ---------------------------------------------------------------------------------
    def open(self, name: str, path, busy_timeout_ms: int = BUSY_TIMEOUT_MS,
             gated: bool = False) -> None:
        """Open (or reopen) connection `name` (in the judge: `db`, synchronous OFF); `gated`:
        its claims ask before each statement.
        The target process learns the file with the first call on it, and watches it for
        connections of the code's own (filewatch): its jail denies them,
        and the watch names the mistake."""
        if type(gated) is not bool:
            raise TypeError("open: gated is a bool")
        if self._closed is not None:
            raise TargetClosed(f"the target process is closed ({self._closed})")
        conn_name(name)
        self.gates.close(name)
        try:
            self.db.open(name, str(path), int64(busy_timeout_ms))
        except sqlite3.Error as exc:  # as lab.store.connect raises it (a lock held on the file)
            raise raised_error("open", exc) from None
        if gated:
            self.gates.open(name)

    def execute(self, name: str, sql: str, params: tuple | list = ()) -> None:
        params = list(params)
        if any(type(p) not in (type(None), int, float, str) for p in params):
            raise TypeError("execute: parameters must be None, int, float or str")
        self._conn(name)
        try:
            self.db.execute(name, str(sql), params)
        except sqlite3.Error as exc:  # as when the target process ran setup SQL: its error
            raise raised_error("execute", exc) from None

    @property
    def sends_in_transaction(self) -> list[bool]:  # each send of the last work_once: one open?
        return [in_transaction for in_transaction, _ in self.sends_held]

    def in_transaction(self, conn: str) -> bool:
        self._conn(conn)
        return self.db.in_transaction(conn)

    def isolation_level(self, conn: str):
        """The connection's isolation_level as the code left it (None: autocommit, as handed)."""
        self._conn(conn)
        return self.db.state(conn).get("isolation_level")

    def tables_read(self, conn: str) -> frozenset | None:
        """The tables the statement traced last on that connection reads or writes, as SQLite's
        authorizer told; None where not known (dbhost.DbHost.tables_read)."""
        self._conn(conn)
        return self.db.tables_read(conn)

    def statements_so_far(self) -> int:
        """How many statements the innermost call under way has run so far (its traced ones and
        those over the limit): asked from a callback, what ran before it."""
        frame = self._stack[-1] if self._stack else None
        return 0 if frame is None else len(frame.statements) + frame.dropped

    def unfinished(self, conn: str) -> tuple[int, int] | None:
        """(reads, writes): the cursors of that connection whose statement still runs (each
        keeps its lock); None where that cannot be seen (dbhost.DbHost.unfinished)."""
        self._conn(conn)
        return self.db.unfinished(conn)

    def journal_mode(self, conn: str) -> str:
        """`PRAGMA journal_mode` on that connection."""
        self._conn(conn)
        try:
            return self.db.journal_mode(conn)
        except sqlite3.Error as exc:
            raise raised_error("journal_mode", exc) from None

    def close_conn(self, conn: str) -> None:
        """Close a connection opened with `open` (its name may be opened again)."""
        self._conn(conn)
        self.gates.close(conn)
        self.db.close(conn)

    def count(self, key: str) -> int:
        """How often a trigger called `harness_count(key)` on a connection opened here: a TEMP
        trigger's WHEN clause counts its firings with it, even those that abort. Counted in the
        judge's process; the code under grade cannot call it (dbhost)."""
        return self.db.count(conn_name(key))

    def _conn(self, name: str) -> None:
        if self._closed is not None:
            raise TargetClosed(f"the target process is closed ({self._closed})")
        if conn_name(name) not in self.db.conns:
            raise RequestRefused(f"no connection named {name[:40]!r}")

    def sync(self) -> None:
        """One more round trip, with a nonce the target cannot know in advance: afterwards every
        message the target sent has been accounted for (a forged extra reply shows up here)."""
        nonce = random.SystemRandom().randrange(1, 2**62)
        statements, dropped = self.statements, self.dropped
        if self._call({"op": "sync", "nonce": nonce}) != nonce:
            self._fail("sync answered another nonce")
        self.statements, self.dropped = statements, dropped  # sync is not a call to report

    def claim(self, conn: str, owner: str, now: int, lease_ms: int,
              statement: Callable[[int, str, bool], str] | None = None) -> Any:
        """The target's claim; on a gated connection `statement(step, sql, holds_write)` is
        asked before each of its statements and answers "go" or "free" (see above)."""
        if (statement is not None) != (conn in self.gates):
            raise TypeError("claim: statement= is given exactly for a gated connection")
        self._not_hung("claim")
        return self._call({**self._on(conn, "claim"), "owner": short_str(owner), "now": int64(now),
                           "lease_ms": int64(lease_ms)}, statement=statement)

    def finish(self, conn: str, claim: Claim, now: int) -> Any:
        if type(claim) is not Claim:
            raise TypeError("finish: the stamp must be a lab.store.Claim")
        fields = {name: getattr(claim, name) for name, _ in wire.CLAIM_FIELDS}
        for name, kind in wire.CLAIM_FIELDS:
            int64(fields[name]) if kind is int else short_str(fields[name])
        self._not_hung("finish")
        return self._call({**self._on(conn, "finish"), "claim": fields, "now": int64(now)})

    def work_once(self, conn: str, owner: str, send: Callable[[Any], Any],
                  clock: Callable[[], int] | None, lease_ms: int, *,
                  clock_script: tuple[int, int] | None = None) -> Any:
        """work_once on connection `conn`; `send` and `clock` are called back. `clock_script`
        (now, per_send): the target answers clock() itself, with now plus per_send for each
        send called so far, as a judge's clock that each send moves on by per_send would (one
        round trip less per reading); `clock` is then never called."""
        request = {**self._on(conn, "work_once"), "owner": short_str(owner),
                   "lease_ms": int64(lease_ms)}
        if clock_script is not None:
            now, per_send = clock_script
            request["clock"] = {"now": int64(now), "per_send": int64(per_send)}
            clock = None
        self._not_hung("work_once")
        return self._call(request, send=send, clock=clock)

    def _on(self, conn: str, op: str) -> dict:
        """A call's request on connection `conn`: its name, its epoch (a name opened again is
        another connection), its file with the first call on it (the target watches it);
        `_call` adds what its proxy reads without asking (dbhost.DbHost.state) when that is not
        what the proxy holds already (`DbHost.news`)."""
        self._conn(conn)
        request = {"op": op, "conn": conn, "epoch": self.db.epoch(conn)}
        if not self.db.conns[conn].proxied:  # the first call on it: the target makes its proxy
            request["path"] = self.db.conns[conn].path
        return request

    def _not_hung(self, function: str) -> None:
        if function in self.hung:
            raise FunctionHung(function)

    def kill(self) -> None:
        """SIGKILL the target's process group, from any thread: a crash, nothing more. Nothing
        is closed or reaped here (the thread that uses the proxy may be reading its pipe): that
        thread sees the end (TargetEnded) at its next read or write, and closes the proxy."""
        self.db.interrupt_all()  # a statement it waits in (a busy wait) ends now
        kill_target(self._process)

    def close(self) -> None:
        """Kill the target's process group and reap it; idempotent."""
        if self._closed is None:
            self._closed = "closed"
        self._finalizer()

    @property
    def returncode(self) -> int | None:
        return self._process.poll()

    def __enter__(self) -> "TargetProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the exchange ------------------------------------------------------------------------------
    def _start(self, timeout: float) -> None:
        # A fresh interpreter (the portable path) says "loading" once it is up, before it
        # imports the code under grade: its start-up until then is not the code's time
        # (sandbox.starting), its import is, as on the fork path, whose fork takes
        # milliseconds. `timeout` bounds each of the two.
        with sandbox.starting():
            message = self._recv(timeout, "start-up")
        if message.get("msg") == "loading":
            message = self._recv(timeout, "start-up")
        kind = message.get("msg")
        try:
            if kind == "load-error":
                error = load_error(message)
                self.close()
                raise error
            if kind != "ready":
                raise wire.WireError(f"expected ready, got {what(message)}")
            # the server's own pid: the Popen pid unless `python` is a wrapper that forks
            self.server_pid, self.contained = ready_fields(message)
        except wire.WireError as exc:
            self._fail(str(exc))
        self._check_quiet()

    def _call(self, request: dict, send: Callable | None = None,
              clock: Callable | None = None, statement: Callable | None = None,
              timeout: float | None = None) -> Any:
        if self._closed is not None:
            raise TargetClosed(f"the target process is closed ({self._closed})")
        if threading.get_ident() != self._thread:
            raise RuntimeError("a TargetProcess is used from the thread that started it only")
        if len(self._stack) >= wire.MAX_NESTING:
            raise RuntimeError("calls nested too deeply")
        self.calls += 1
        frame = CallFrame(self.calls, request["op"], send, clock, statement=statement,
                       conn=request.get("conn"))
        request["id"] = frame.call_id
        self._stack.append(frame)
        try:
            if frame.op in CALLS:  # the connection's state, unless its proxy holds it already
                state = self.db.news(frame.conn)
                if state is not None:
                    request["state"] = state
                if frame.conn in self.db.conns:
                    self.db.conns[frame.conn].proxied = True
            self._send(request, frame.op)
            given = time.monotonic()  # the target has control since: a database request it
            limit = self.timeout if timeout is None else timeout  # makes runs on its time,
            while True:                                           # a callback on the judge's
                message = self._recv(limit - (time.monotonic() - given), frame.op)
                kind = message.get("msg")
                if kind == "db":
                    self._db(frame, message, given + self.timeout)
                elif kind == "callback":
                    self._callback(frame, message)
                    given = time.monotonic()
                elif kind == "reply":
                    return self._reply(frame, message)
                else:
                    self._fail(f"{what(message)} during {frame.op}")
        except (TargetProcessError, RaisedInTarget):
            raise
        except BaseException:  # the judge's own callable raised: never send it through the target
            self._abandon("a judge callback raised")
            raise
        finally:
            self._stack.pop()

    def _reply(self, frame: CallFrame, message: dict) -> Any:
        if frame.op == "fn":  # checked by what asked (`_function`)
            if message.get("id") != frame.call_id or type(message.get("id")) is not int:
                self._fail("reply to a function out of turn")
            self._check_quiet()
            return message
        try:
            outcome = [k for k in ("value", "raised", "refused") if k in message]
            if len(outcome) != 1:
                raise wire.WireError("reply needs exactly one of value, raised, refused")
            wire.keys(message, ("msg", "id") + tuple(outcome),
                      ("own_connections", "drop", "printed"), what="reply")
            printed = _printed(message["printed"], frame.op) if "printed" in message else None
            own = (_own_connections(message["own_connections"], frame.op)
                   if "own_connections" in message else [])
            if wire.integer(message["id"], "reply id") != frame.call_id:
                raise wire.WireError(f"reply to call {message['id']} during call "
                                     f"{frame.call_id} ({frame.op}): out of turn")
            if "drop" in message:  # cursors the code let go of as the call ended
                self._drop(message["drop"])
            if outcome == ["value"]:
                value = decode_value(message["value"])
            elif outcome == ["raised"]:
                value = decode_error(message["raised"], frame.op)
            else:
                value = RequestRefused(wire.string(message["refused"], "refused",
                                                   wire.MAX_MESSAGE))
        except wire.WireError as exc:
            self._fail(str(exc))
        self._check_quiet()
        if frame.op in CALLS:
            self.statements, self.dropped = frame.statements, frame.dropped
            self.in_transaction_after = (self.db.in_transaction(frame.conn)
                                         if frame.conn in self.db.conns else None)
            self.own_connections = own
            self.printed = printed
            if printed is not None:
                self.printed_total += len(printed[0]) + max(0, printed[1])
        if frame.op == "work_once":
            self.sends_held = frame.sends_held
        if isinstance(value, RaisedInTarget):
            raise value
        if isinstance(value, RequestRefused):
            raise value
        return value

    # -- the database, served here -----------------------------------------------------------------
    def _db(self, frame: CallFrame, message: dict, deadline: float) -> None:
        """A request of a proxy connection's (dbproxy), made during the innermost call: run
        on the real connection (dbhost), answered."""
        if frame.op == "fn":  # a function of the code's computes only (the target refuses it)
            self._fail("a database request from inside a function of the code's")
        try:
            wire.keys(message, ("msg", "id", "cb", "req"), what="db")
            if wire.integer(message["id"], "db id") != frame.call_id:
                raise wire.WireError("db request for another call: out of turn")
            cb = wire.integer(message["cb"], "callback number")
            if cb != self._last_cb + 1:
                raise wire.WireError("callback number out of sequence")
            request = wire.obj(message["req"], "db request")
        except wire.WireError as exc:
            self._fail(str(exc))
        self._check_quiet()
        self._last_cb = cb
        # the request runs on the target's time: a statement still running at the call's
        # deadline is interrupted (SQLite's progress handler), and the call has timed out
        self.db.deadline, self.db.overran = deadline, False
        try:
            reply = self._serve_db(request)
        finally:
            self.db.deadline = None
        error, self._gate_error = self._gate_error, None
        if error is not None:  # the gate's callable raised (a crash's kill, a stop): not answered
            self._abandon("the judge's statement callable raised")
            raise error
        if self.db.overran:
            self._timeout(frame.op)
        self._send({"op": "db", "cb": cb, "res": reply}, frame.op)

    def _serve_db(self, request: dict) -> dict:
        try:
            return self.db.serve(request)
        except RequestError as exc:
            self._fail(str(exc))

    def _drop(self, value) -> None:
        """The cursors the code let go of during the call (a reply's "drop": `dropped_field`):
        their statements are reset, as a freed real cursor's are."""
        for conn, epoch, ids in dropped_field(value):
            try:
                self.db.drop(conn, epoch, ids)
            except RequestError as exc:
                raise wire.WireError(str(exc)) from None

    def _traced(self, name: str, sql: str) -> None:
        """Every statement SQLite traces on a connection opened here (in the judge's process):
        kept for the innermost call under way; on a gated connection, during a claim on it, the
        statement waits for the gate's answer (a stop interrupts it before it changes anything)."""
        frame = self._stack[-1] if self._stack else None
        if frame is not None and frame.op in CALLS:
            if len(frame.statements) < wire.MAX_STATEMENTS:
                frame.statements.append((name, wire.bounded(sql, wire.MAX_SQL),
                                         self.db.tables_read(name)))
            else:
                frame.dropped += 1
        error = self.gates.before(frame, name, sql, self.db, self._gate_error is not None)
        if error is not None:  # stop here: the statement must not run (`_db` raises it)
            self._gate_error = error

    def _callback(self, frame: CallFrame, message: dict) -> None:
        try:
            name = message.get("name")
            if name not in ("send", "clock"):
                raise wire.WireError("callback: unknown name")
            wire.keys(message, ("msg", "id", "cb", "name") + (("arg",) if name != "clock"
                                                             else ("ended",)),
                      ("drop",), what="callback")
            if wire.integer(message["id"], "callback id") != frame.call_id:
                raise wire.WireError("callback for another call: out of turn")
            if frame.op != "work_once":
                raise wire.WireError(f"{name} callback during {frame.op}")
            if name == "clock" and frame.clock is None:
                raise wire.WireError("clock callback during a work_once whose clock the target"
                                     " reads itself")
            cb = wire.integer(message["cb"], "callback number")
            if cb != self._last_cb + 1:
                raise wire.WireError("callback number out of sequence")
            arg = (decode_value(message["arg"]) if name == "send"
                   else wire.integer(message["ended"], "sends ended"))
            if "drop" in message:  # cursors the code let go of before it called back
                self._drop(message["drop"])
        except wire.WireError as exc:
            self._fail(str(exc))
        self._check_quiet()
        self._last_cb = cb
        if name == "send":  # read here, on the real connection: the contract sends with none
            frame.sends_held.append(self.db.held(frame.conn))
            self.sending_in_transaction = frame.sends_held[-1][0]
        if name == "clock":  # the sends of this work_once that had ended when it was read
            self.clock_ended = arg
        try:
            result = frame.send(arg) if name == "send" else frame.clock()
        except SendFailed as failed:
            answer = {"op": "raise", "cb": cb,
                      "message": str(failed)[:wire.MAX_MESSAGE]}
            also = next((name for name in wire.SEND_ALSO
                         if isinstance(failed, getattr(builtins, name))), None)
            if also is not None:
                answer["also"] = also
        except BaseException:  # the judge's own error (a nested call's included): stop here
            self._abandon(f"the judge's {name} raised")
            raise
        else:
            if type(result) not in _SCALARS and result is not wire.SEND_OBJECT:
                raise TypeError(f"the judge's {name} returned a {type(result).__name__}")
            answer = ({"op": "return", "cb": cb, "object": True} if result is wire.SEND_OBJECT
                      else {"op": "return", "cb": cb, "value": result})  # an object: made there
        self._send(answer, frame.op)

    def _function(self, request: dict):
        """A function of the code's, called by SQLite on one of the real connections here while
        a proxy's request is served (`callbacks`' stand-ins, through DbHost.call_out): asked of
        the target as a call nested in that request, with what is left of the call's time; its
        answer, checked. The code's callable raised: callbacks.FunctionRaised (sqlite3 fails
        the statement with its own error). Anything else (a timeout, the target ended or broke
        the protocol) is kept and raised once SQLite has given control back (`_db`, as a
        gate's error), the statement interrupted meanwhile."""
        outer = self._stack[-1] if self._stack else None
        if outer is None or outer.op not in CALLS or self._gate_error is not None:
            raise callbacks.Refused("no call of the code's under way")
        deadline = self.db.deadline
        left = self.timeout if deadline is None else deadline - time.monotonic()
        try:
            message = self._call(dict(request, op="fn"), timeout=left)
            try:
                return callbacks.answer(request, message)
            except wire.WireError as exc:
                self._fail(str(exc))
        except callbacks.FunctionRaised:
            raise
        except BaseException as exc:  # noqa: BLE001 - raised once SQLite is done (`_db`)
            self._gate_error = restated(exc, self.timeout, outer.op)
        self.db.interrupt_all()
        raise callbacks.Refused("the target process cannot answer")

    # -- the pipes ---------------------------------------------------------------------------------
    def _send(self, message: dict, during: str) -> None:
        try:
            self._pipe.send(wire.encode(message), self.timeout)
        except PipeTimeout:
            self._timeout(during)
        except PipeEnded:
            self._ended(during)

    def _recv(self, timeout: float, during: str) -> dict:
        try:  # floats: a proxy's float parameter; every field read elsewhere has its exact type
            return wire.decode(self._pipe.line(timeout), floats=True)
        except PipeTimeout:
            self._timeout(during)
        except PipeEnded:
            self._ended(during)
        except (PipeBroken, wire.WireError) as exc:
            self._fail(str(exc))

    def _check_quiet(self) -> None:
        # The target waits for the judge after every message: anything already behind it
        # was written by something else.
        if not self._pipe.quiet():
            self._fail("output after a message, before the judge answered")

    # -- endings -----------------------------------------------------------------------------------
    def _fail(self, why: str):
        self._abandon(f"protocol error: {why}")
        raise ProtocolError(why)

    def _timeout(self, during: str):
        self._abandon("timed out")
        raise TargetTimeout(self.timeout, during)

    def _ended(self, during: str):
        try:
            code = self._process.wait(timeout=2.0)
        except subprocess.TimeoutExpired:  # closed the channel yet runs on
            self._fail("the target closed the channel")
        self._abandon("ended")
        raise TargetEnded(code, during)

    def _abandon(self, why: str) -> None:
        if self._closed is None:
            self._closed = why
        self._finalizer()

    def _expect_none(self, value, op: str) -> None:
        if value is not None:
            self._fail(f"{op} answered {value!r}")
