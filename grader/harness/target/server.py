"""The target process: the only process that imports the code under grade. It answers the judge's
calls over two pipes, one JSON line per message (`wire`), and sends nothing but plain data; the
`conn` the code is handed is a `dbproxy.ProxyConnection`, whose every database operation is a
request the judge answers (`dbhost`).

Lives here: `serve` (hide the channel fds, seal, jail, load the target, say ready, serve; `main`
runs it in a fresh interpreter, the zygote in a forked child), `Channel`, `Server` (calls,
callbacks, nested calls), `SendFailed`. Beside it: when the code's own threads are idle, and a
send held on its thread (`threads`, which the Server asks before it goes on); the channel's fds
hidden, the stdio channel and the process's end with its judge's (`lifeline`); what the code
prints (`printed`); the sealed packages and what the jail lets it read (`sealing`). Its messages
and threads: docs/protocol.md, "The target process". On the portable path (no fork, no fd
passing: grader.harness.processes.portable) it talks over its stdin and stdout (`--stdio`);
nothing POSIX-only is imported at the top.
"""

from __future__ import annotations

import builtins
import os
import sqlite3
import sys
import threading
import time

from lab.store import Claim

from . import dbproxy
from grader.harness.processes import jail
from grader.harness import wire
from . import loader as targets
from .filewatch import file_watch
from .lifeline import die_with_parent, hide, stdio_channel
from .printed import Printed, capture_output
from .sealing import SEALED_ENV, readable, seal
from .threads import SETTLE_LIMIT, Threads
from grader.harness.wire.values import describe_error, encode_value

#: What the server imported at its top before it imported only what every target process needs
#: (issue 42: each is a fresh interpreter's import on the portable path, and most targets need
#: none of them): the fork path's zygote imports them ahead
#: (grader.harness.target.zygote_server), so that a forked target starts with them imported,
#: as before, at no cost of its own.
AHEAD = ("grader.results", "queue", "random", "selectors", "signal", "sysconfig", "tempfile",
         "traceback")

PROTOCOL_BUG = 3  # exit code: the judge sent something this server does not understand
CALLS = ("claim", "finish", "work_once")  # the calls of the code under grade


class SendFailed(Exception):
    """Raised inside the target when the judge's send (or clock) fails: the judge said "raise"."""


class SendReceipt:
    """What the judge's send returns where a real client returns an object of its own (a
    response): not data (no JSON, no number, no str), and nothing work_once needs to read."""

    __slots__ = ()


#: The SendFailed that is also ConnectionError / TimeoutError (wire.SEND_ALSO), named as the
#: builtin: the judge's send failed the way the network does.
SEND_ALSO = {name: type(name, (SendFailed, getattr(builtins, name))
                        if issubclass(getattr(builtins, name), Exception)
                        else (getattr(builtins, name),),
                        {"__module__": __name__, "__doc__": f"SendFailed, as a {name}."})
             for name in wire.SEND_ALSO}


class _Refused(Exception):
    """The request names something that does not exist here (an unknown connection)."""


class _Call:
    """One call being served: the errors its callbacks raised."""

    def __init__(self, request: dict):
        self.request = request
        self.raised: list[SendFailed] = []
        #: how many of work_once's sends have returned (or raised) to the code: the clock moves
        #: on as each one ends, and a reading tells the judge how many had ended when clock()
        #: was called. A send is running from its call until it returns to the code, on any
        #: thread
        self.sends_back = 0
        self.entering = 0  # sends called, not yet on the wire (they go before any clock)
        self.holding = 0  # sends answered, held on their thread (`threads.Threads.hold`)
        self.reads = 0  # clock readings taken on its own thread (a held send may end)
        self.ending = False  # it has returned or raised: it waits for its callbacks' end
        self.thread = threading.get_ident()  # the thread that runs it (its statements are gated)
        self.in_flight = 0  # its callbacks under way, on any thread (the call ends after them)


class Channel:
    """Line-delimited JSON over two fds: requests in, replies out."""

    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd
        self.buffer = b""

    def recv(self) -> dict | None:
        """The next request, or None when the judge has closed its end."""
        buffer = self.buffer
        end = buffer.find(b"\n")
        while end < 0:
            if len(buffer) > wire.MAX_LINE:
                _bug("request too long")
            chunk = os.read(self.read_fd, 65536)
            if not chunk:
                return None
            end = chunk.find(b"\n")
            if end >= 0:
                end += len(buffer)
            buffer = self.buffer = buffer + chunk
        line, self.buffer = buffer[:end], buffer[end + 1:]
        try:
            return wire.decode_trusted(line)
        except (wire.WireError, ValueError) as exc:
            _bug(str(exc))

    def send(self, message: dict) -> None:
        data = wire.encode(message)
        while data:
            data = data[os.write(self.write_fd, data):]


class Server:
    """Serves requests on a channel for the loaded target module."""

    def __init__(self, module, channel: Channel, printed: Printed | None = None):
        self.module = module
        self.channel = channel
        self.printed = printed
        self.proxies: dict[str, dbproxy.ProxyConnection] = {}  # by name, the latest epoch's
        self.stack: list[_Call] = []
        self.callbacks = 0
        # The channel is one thread's at a time (docs/protocol.md, "Threads"): `talking` while
        # a thread sends a callback and waits for its answer, or sends a reply; `turn` guards
        # it, the stack and the calls' in_flight.
        self.turn = threading.Condition()
        self.talking = False
        # the code's threads, which of them are idle (waiting in `park`, or for the judge)
        self.threads = Threads(self.turn)
        self.files = file_watch()

    def serve(self) -> None:
        while True:
            request = self.channel.recv()
            if request is None or request.get("op") == "close":
                return
            self.dispatch(request)

    # -- one call --------------------------------------------------------------------------------
    def dispatch(self, request: dict) -> None:
        if len(self.stack) >= wire.MAX_NESTING:
            _bug("calls nested too deeply")
        call_id = request.get("id")
        if type(call_id) is not int:
            _bug("request without an id")
        call = _Call(request)
        watch = None
        if request.get("op") in CALLS:
            watch = self.files.enter(any(c.request.get("op") in CALLS for c in self.stack))
        with self.turn:
            self.stack.append(call)
        try:
            value = self.run(call)
        except _Refused as refused:
            reply = {"refused": str(refused)}
        except BaseException as exc:  # the target's error, whatever it is, goes back as data
            try:
                reply = {"raised": describe_error(exc, call.raised, SendFailed)}
            except BaseException:  # a hostile exception class: say only that it was one
                reply = {"raised": {"type": "?", "message": "?", "where": None,
                                    "not_implemented": False, "sqlite_error": None,
                                    "send_failed": None, "chain": [],
                                    "hidden": []}}
            _let_go(exc)
        else:
            # a function's answer is an SQLite value (docs/protocol.md, "The code's SQL
            # functions"), not a call's VALUE
            reply = ({"result": value} if request.get("op") == "fn"
                     else {"value": encode_value(value)})
        finally:
            # the call ends once the callbacks made during it (on a thread of the code's own,
            # say) have had their answers; then the channel is this thread's until the reply
            # is sent, and a callback of this call from now on is refused (`may_call_back`)
            with self.turn:
                call.ending = True  # a send held on another thread ends now (`Threads.hold`)
                if request.get("op") == "work_once":
                    # a send on its way on another thread is called within the call: whatever
                    # the threads' luck
                    limit = time.monotonic() + SETTLE_LIMIT
                    self.threads.park(lambda: self.threads.settled(call, self.stack, limit))
                self.threads.park(lambda: not (call.in_flight or self.talking or call.entering
                                       or call.holding))
                self.talking = True
                self.stack.pop()
        for error in call.raised:
            _let_go(error)
        call.raised.clear()
        try:
            self.reply(call, reply, watch)
        finally:
            with self.turn:
                self.talking = False
                self.turn.notify_all()

    def reply(self, call: _Call, reply: dict, watch) -> None:
        """Sends the reply to `call` (the channel is this thread's)."""
        request = call.request
        reply.update(msg="reply", id=request.get("id"))
        if request.get("op") in CALLS:
            own = self.files.leave(watch)
            if own:
                reply["own_connections"] = own
            if self.printed is not None:
                printed, lost = self.printed.take()
                if printed or lost:
                    reply["printed"] = [printed, lost]
        # cursors let go of during the call: the judge resets their statements (not while one
        # of its statements runs a function of the code's: they are told with the next request)
        drop = self.dropped() if request.get("op") != "fn" else None
        if drop:
            reply["drop"] = drop
        self.channel.send(reply)

    def dropped(self) -> list:
        """[[conn, epoch, [cursor, ...]], ...]: the cursors the code let go of that the judge
        was not told of yet (at most 256 a connection), taken."""
        drop = [[name, proxy._epoch, proxy._drop[:256]] for name, proxy in self.proxies.items()
                if proxy._drop]
        for proxy in self.proxies.values():
            proxy._drop = proxy._drop[256:]
        return drop

    def run(self, call: _Call):
        request = call.request
        op = request.get("op")
        if op == "sync":
            return _field(request, "nonce", int)
        if op == "fn":  # a function of the code's, called by the judge's SQLite
            proxy = self.proxies.get(_field(request, "conn", str))
            if proxy is None or proxy._epoch != _field(request, "epoch", int):
                raise _Refused("no such connection")
            return proxy._functions.answer(request)
        conn = self.conn(request)
        if op == "claim":
            return self.module.claim(conn, _field(request, "owner", str),
                                     _field(request, "now", int), _field(request, "lease_ms", int))
        if op == "finish":
            fields = _field(request, "claim", dict)
            if set(fields) != {name for name, _ in wire.CLAIM_FIELDS} or any(
                    type(fields[name]) is not kind for name, kind in wire.CLAIM_FIELDS):
                _bug("finish: not a claim")
            return self.module.finish(conn, Claim(**fields), _field(request, "now", int))
        if op == "work_once":
            script = request.get("clock")
            if script is not None and (type(script) is not dict
                                       or set(script) != {"now", "per_send"}
                                       or any(type(v) is not int for v in script.values())):
                _bug("work_once: clock is not {now, per_send} ints")
            clock = (self.callback(call, "clock") if script is None
                     else self.local_clock(call, script["now"], script["per_send"]))
            return self.module.work_once(conn, _field(request, "owner", str),
                                         self.callback(call, "send"), clock,
                                         _field(request, "lease_ms", int))
        _bug(f"unknown op {str(op)[:40]!r}")

    def conn(self, request: dict) -> dbproxy.ProxyConnection:
        """The proxy for the connection a call is given: the one made for its name and epoch
        (a name the judge opened again is a new connection, and a new proxy), its state as the
        judge's connection has it now (sent only when not the one the proxy holds: the last)."""
        name = _field(request, "conn", str)
        epoch = _field(request, "epoch", int)
        state = _field(request, "state", dict) if "state" in request else None  # None: as held
        proxy = self.proxies.get(name)
        if proxy is None or proxy._epoch != epoch:  # a new one: its state and file are sent
            proxy = self.proxies[name] = dbproxy.ProxyConnection(
                name, epoch, self.transport, _field(request, "state", dict))
            # the judge's database, watched: a connection of the code's own to it (which the
            # jail denies) is named in the reply
            self.files.add(_field(request, "path", str))
        elif state is not None:
            proxy._state = dict(state)
        return proxy

    def transport(self, request: dict) -> dict:
        """A proxy's request, answered by the judge (dbhost) during the innermost call under way
        (from any thread, as a callback); outside every call the connection cannot be used."""
        with self.turn:
            # as a callback (`ask`): after another thread's request or callback, to its end
            self.threads.park(lambda: not (self.talking or (self.stack
                                                            and self.stack[-1].in_flight)))
            if not self.stack or self.stack[-1].request.get("op") not in CALLS:
                raise sqlite3.ProgrammingError(
                    "the connection the grader hands in can be used only while claim, finish"
                    " or work_once runs")
            call = self.stack[-1]
            self.talking = True
            call.in_flight += 1
        try:
            return self._ask_db(call, request)
        finally:
            with self.turn:
                self.talking = False
                call.in_flight -= 1
                self.turn.notify_all()

    def _ask_db(self, call: _Call, request: dict) -> dict:
        self.callbacks += 1
        cb = self.callbacks
        try:
            self.channel.send({"msg": "db", "id": call.request["id"], "cb": cb, "req": request})
        except wire.WireError:  # a request too long for one line (a huge script or blob)
            raise sqlite3.DataError("string or blob too big") from None
        with self.threads.waiting_for_judge():
            return self._db_answer(cb)

    def _db_answer(self, cb: int) -> dict:
        while True:
            answer = self.channel.recv()
            if answer is None or answer.get("op") == "close":
                os._exit(0)
            if answer.get("op") == "db":
                if answer.get("cb") != cb or type(answer.get("res")) is not dict:
                    _bug("db answer out of turn")
                return answer["res"]
            self.nested(answer)  # made by the judge while it served this request

    # -- callbacks -------------------------------------------------------------------------------
    def callback(self, call: _Call, name: str):
        """The `send` or `clock` handed to work_once: asks the judge, serves nested requests."""
        server = self

        def send(claim):
            return server.ask(call, "send", encode_value(claim))

        def clock():  # how many sends had ended when it was called, not when it is answered
            return server.ask(call, "clock", None)

        return send if name == "send" else clock

    def local_clock(self, call: _Call, now: int, per_send: int):
        """work_once's clock answered here: what the judge's would (`now`, moved on by
        `per_send` at each send), refused and scanned as a callback is."""
        server = self

        def clock():
            with server.turn:
                server.may_call_back(call, "clock")
                ended = server.reading(call)
            server.files.scan()  # as at a callback: a connection of the code's own, open now
            return now + per_send * ended

        return clock

    def reading(self, call: _Call) -> int:
        """A clock of `call` is read now (with `turn` held): the sends that had ended (a send
        under way has not); read on the call's own thread, a send held on another thread may
        end now (`Threads.hold`)."""
        if threading.get_ident() == call.thread:
            call.reads += 1
            self.turn.notify_all()
        return call.sends_back

    def may_call_back(self, call: _Call, name: str) -> None:
        """`call` may call back: it is under way (from any thread). Called with `turn` held."""
        if call not in self.stack:
            raise RuntimeError(f"{name} called outside the work_once call it was given to")

    def ask(self, call: _Call, name: str, arg: dict | None):
        me = threading.get_ident()
        with self.turn:
            self.may_call_back(call, name)
            if name == "send":  # under way from now on: a clock read from now on is during it
                call.entering += 1
                reads = call.reads
            else:  # the sends that had ended when clock() was called (another thread's may run)
                arg = self.reading(call)
                limit = time.monotonic() + SETTLE_LIMIT
            # Another thread's callback goes first, to its end: while the judge serves it, it
            # may make calls of its own (the lock probe's), which go above `call` on the stack
            # and take the channel meanwhile; a callback of `call` asked then (its clock, read on
            # a thread of the code's own) waits until `call` is the innermost call again and
            # no callback of it is under way (the judge answers one callback at a time). A
            # clock waits too for every send called (`entering`) and for every other thread of
            # the code's to be idle (`Threads.settled`: one on its way to call send calls it first):
            # which reaches the judge first never depends on the threads' luck.
            try:
                self.threads.park(lambda: not (
                    self.talking or (call in self.stack and (self.stack[-1] is not call
                                                             or call.in_flight))
                    or (name == "clock" and (call.entering
                                             or not self.threads.settled(call, self.stack,
                                                                         limit)))))
                self.may_call_back(call, name)
            finally:
                if name == "send":
                    call.entering -= 1
            self.talking = True
            call.in_flight += 1
        try:
            return self._ask(call, name, arg)
        finally:
            with self.turn:
                self.talking = False
                call.in_flight -= 1
                self.turn.notify_all()
                if name == "send":
                    if me != call.thread and call in self.stack:
                        call.holding += 1
                        try:
                            self.threads.hold(call, self.stack, reads)
                        finally:
                            call.holding -= 1
                    call.sends_back += 1
                    self.turn.notify_all()

    def _ask(self, call: _Call, name: str, arg: dict | None):
        """The round trip of one callback; the channel is this thread's (`talking`) but while
        it serves a nested call."""
        self.files.scan()  # a connection of the code's own, open while it waits for the judge
        self.callbacks += 1
        cb = self.callbacks
        message = {"msg": "callback", "id": call.request["id"], "cb": cb, "name": name}
        if name != "clock":
            message["arg"] = arg
        else:  # the sends that had ended when clock() was called (another thread's may run)
            message["ended"] = arg
        drop = self.dropped()
        if drop:  # a cursor freed before send: its statement is reset before send runs
            message["drop"] = drop
        self.channel.send(message)
        with self.threads.waiting_for_judge():
            return self._answer(call, cb)

    def _answer(self, call: _Call, cb: int):
        while True:
            request = self.channel.recv()
            if request is None or request.get("op") == "close":
                os._exit(0)  # the judge is gone or done: nothing to answer to
            op = request.get("op")
            if op in ("return", "raise"):
                if request.get("cb") != cb:
                    _bug("answer to another callback")
                if op == "return":
                    if request.get("object") is True:  # what a real client's send returns
                        return SendReceipt()
                    value = request.get("value")
                    if type(value) not in (type(None), bool, int, float, str):
                        _bug("callback value is not a scalar")
                    return value
                also = request.get("also")
                if also is not None and (type(also) is not str or also not in SEND_ALSO):
                    _bug("raise: unknown also")
                error = SEND_ALSO.get(also, SendFailed)(_field(request, "message", str))
                call.raised.append(error)
                raise error
            self.nested(request)  # made by the judge from inside its callback

    def nested(self, request: dict) -> None:
        """Serve a call the judge made while this thread waits for an answer on the channel:
        meanwhile the nested call's own callbacks and reply take the channel."""
        me = threading.get_ident()
        self.threads.on_wire.discard(me)
        with self.turn:
            self.talking = False
            self.turn.notify_all()
        self.dispatch(request)
        with self.turn:
            self.threads.park(lambda: not self.talking)
            self.talking = True
        self.threads.on_wire.add(me)


def _let_go(exc: BaseException) -> None:
    """What the frames of a call that has ended still hold through `exc` and the exceptions
    chained to it (their tracebacks: the code's frames, its cursors in them), let go of, as its
    caller would let go of them once it handled the exception: a cursor the code opened while
    it handled send's error (and re-raised it) is freed, and its statement reset on the judge's
    side, before the reply goes (`dropped`), as a real cursor is once the exception is handled.
    The server keeps no frame of a call that has ended. A hostile exception class: left as it
    is."""
    seen: set[int] = set()
    try:
        while exc is not None and id(exc) not in seen and len(seen) < wire.MAX_CHAIN * 4:
            seen.add(id(exc))
            exc.__traceback__ = None  # (a frame still running elsewhere keeps running)
            exc = exc.__cause__ if exc.__cause__ is not None else exc.__context__
    except BaseException:  # noqa: BLE001 - the reply is made already; a frame kept is all it costs
        pass


def _field(request: dict, key: str, kind: type):
    value = request.get(key)
    if type(value) is not kind:
        _bug(f"{request.get('op')!s:.20}: {key} is not a {kind.__name__}")
    return value


def _bug(why: str):
    """The judge sent something this server does not understand: a bug, end here."""
    try:
        os.write(2, f"target_server: protocol bug: {why}\n".encode("utf-8", "replace"))
    finally:
        os._exit(PROTOCOL_BUG)


# -- the process -----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # Ctrl-C's handler as a fresh interpreter has it in a terminal, as a target forked from the
    # zygote gets it (forkloop.leave_loop), whatever the grader inherited: a grader started in
    # the background of a script (`cmd &` without job control) ignores SIGINT, and Python
    # leaves an ignored SIGINT ignored in every interpreter started under it. (`_signal`: loaded
    # at every interpreter's start; `signal` is imported only by the targets that need it, AHEAD.)
    import _signal
    _signal.signal(_signal.SIGINT, _signal.default_int_handler)
    if args == ["--stdio", "--await"]:
        return serve_awaited()
    if len(args) == 2 and args[0] == "--stdio":
        return serve(*stdio_channel(), args[1], announce=True)
    if len(args) != 5 or args[0] != "--in" or args[2] != "--out":
        print("usage: python -m grader.harness.target.server (--in FD --out FD | --stdio) SPEC",
              file=sys.stderr)
        return 2
    return serve(int(args[1]), int(args[3]), args[4])


def serve_awaited() -> int:
    """A spare target server (grader.harness.processes.portable.spawn_target): started, and its
    imports done, before the judge knows which target it will load; its first line says
    (`{"spec", "env"}`: the environment variables that name this target's own folders, None to
    unset). Then `serve`, as if started for it (the judge sends nothing more before "ready")."""
    read_fd, write_fd = stdio_channel()
    first = Channel(read_fd, write_fd).recv()
    if first is None:  # not needed after all
        return 0
    for name, value in first["env"].items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if "tempfile" in sys.modules:  # its cache of TMPDIR (the server does not import it)
        sys.modules["tempfile"].tempdir = None
    return serve(read_fd, write_fd, first["spec"], spare=True, announce=True)


def serve(read_fd: int, write_fd: int, spec: str, spare: bool = False,
          announce: bool = False) -> int:
    """The life of a target server once its process exists: hide the channel fds, seal and jail
    as the environment says, load the target, say ready (or why not), serve until the judge
    closes; the exit code. `main` runs it in a fresh interpreter; `grader.harness.processes.zygote` runs it
    in a child forked for the judge. `spare`: started ahead by a thread that may have ended
    since (`serve_awaited`), so no death signal (Linux ties it to that thread): its stdin's
    end ends it once it is idle, and its judge kills it. `announce`: say "loading" before the
    import (a fresh interpreter of the portable path: its start-up until then is not counted
    against the check, its import is)."""
    channel = Channel(hide(read_fd), hide(write_fd))
    if not spare:
        die_with_parent()
    file_watch()  # before the target is imported: it sees every connection opened after
    writable = os.environ.pop(wire.JAIL_ENV, None)
    sealed = os.environ.get(SEALED_ENV) == "1"
    if sealed:
        seal()
    contained = 0
    if writable is not None:
        contained = jail.enter(read=readable(spec, sealed),
                               write=[p for p in writable.split(os.pathsep) if p])
        if contained:  # the databases' folder cannot be opened: no descriptor to look for
            file_watch().descriptors = False
        jail.deny_sysv_ipc()
        jail.drop_capabilities()
    printed = capture_output()  # before the import: what it prints is the first call's
    if announce:
        channel.send({"msg": "loading"})
    try:
        module = targets.load(spec)
    except targets.TargetError as exc:
        params = {wire.bounded(str(k), wire.MAX_NAME): v if type(v) is int else
                  wire.bounded(str(v), wire.MAX_MESSAGE) for k, v in list(exc.params.items())[:10]}
        channel.send({"msg": "load-error", "kind": wire.bounded(exc.kind, wire.MAX_NAME),
                      "params": params})
        return 0
    channel.send({"msg": "ready", "pid": os.getpid(), "contained": contained})
    Server(module, channel, printed).serve()
    return 0


if __name__ == "__main__":
    # Run main() from the module imported under its real name, so that a target importing
    # grader.harness.target.server sees the same SendFailed class as the one raised here.
    from . import server as target_server

    sys.stdout.flush()
    os._exit(target_server.main())
