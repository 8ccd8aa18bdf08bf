"""The rules the contract makes true after every call of claim, finish and work_once, whatever
the check is about (docs/contract.md, "After every call"): the connection has no transaction
open, no statement of the code's still runs on it, and the queue's rows are what the contract's
model makes of them — claim quarantines exactly the jobs it must (nothing else in them changes)
and changes one job more, the claimable one with the lowest id, as the contract says; finish
changes its own job only, and only when every condition holds; a call that raised changes
nothing. work_once is held to both, around its send, with the finishing clock read after send
returned.

The Lab (scenario) asks these after each call and keeps the first rule broken (`Broken`); a
check that then passes on its own fails with it, its timeline cut at the call that broke it.

Only the generic rules are written here: no transaction open, no statement running (after every
call, and on work_once's connection as it calls send: send runs with no lock held), the busy
timeout not lowered (after every call), a call that raised changes nothing, the clock read after
send returned. What a call makes of the rows is the
contract's one model (`grader.checks.model.QueueModel`, which reads rows as SQLite compares
them: a NULL compares as unknown, never true), handed to the Lab by the check run (`RowModel`);
the harness may not import the checks, and a copy of the grader without the model
(export-student --without-model) holds its calls to the generic rules only.
"""

from __future__ import annotations

import dataclasses
import sqlite3
from typing import Protocol

from lab.store import Claim

COLUMNS = ("id", "qty", "status", "owner", "lease_until", "token", "attempts", "max_attempts",
           "deadline", "finished_at")


@dataclasses.dataclass
class Broken:
    """A rule a call broke: the catalogue sentence `detail.invariant-<rule>`, its parameters,
    the call's event (the step the failure marks) and, for a row, the job's row current vs
    what the model makes of it."""
    rule: str
    event: dict
    params: dict
    job: int | None = None
    current: dict | None = None
    expected: dict | None = None


def rows(observer: sqlite3.Connection) -> dict[int, dict] | None:
    """Every row of jobs, by id, read on the judge's own connection (None: it cannot be read
    now, the database locked by what the code holds; the rule about that says so)."""
    try:
        cursor = observer.execute(f"SELECT {', '.join(COLUMNS)} FROM jobs")
        return {row[0]: dict(zip(COLUMNS, row)) for row in cursor.fetchall()}
    except sqlite3.Error:
        return None


class RowModel(Protocol):
    """The contract's model of the rows, as the check run hands it to the Lab (`Lab(model=...)`,
    grader.checks' `contract_model`: the runner gives `grader.checks.model.QueueModel`). The
    harness holds no model of its own: a copy of the grader without the model (export-student
    --without-model) holds calls to the connection rules and the clock rule only."""

    rows: dict[int, dict]

    @classmethod
    def holding(cls, rows: dict[int, dict]) -> "RowModel":
        """A model of the table `rows` (by id, each row a dict of COLUMNS; copied)."""

    def claim(self, owner: str, now: int, lease_ms: int) -> object:
        """claim(owner, now, lease_ms) played on the model's rows."""

    def finish(self, claim: Claim, now: int) -> object:
        """finish(claim, now) played on the model's rows."""


def after_claim(model: type[RowModel], before: dict[int, dict], owner: str, now: int,
                lease_ms: int) -> dict[int, dict]:
    """The rows once claim(owner, now, lease_ms) returned, as `model` makes them."""
    played = model.holding(before)
    played.claim(owner, now, lease_ms)
    return played.rows


def after_finish(model: type[RowModel], before: dict[int, dict], claim: Claim,
                 now: int) -> dict[int, dict]:
    """The rows once finish(claim, now) returned, as `model` makes them."""
    played = model.holding(before)
    played.finish(claim, now)
    return played.rows


def plain_stamp(claim) -> bool:
    """A Claim of the exact types the contract gives (so the model compares as SQLite would)."""
    return (type(claim) is Claim and type(claim.owner) is str
            and all(type(getattr(claim, name)) is int
                    for name in ("id", "qty", "token", "attempt", "lease_until")))


def differs(after: dict[int, dict] | None,
            expected: dict[int, dict]) -> tuple[int | None, dict | None, dict | None] | None:
    """The first job whose row is not the expected one: (job, current, expected); None: all
    as expected (or the rows could not be read)."""
    if after is None:
        return None
    for job in sorted(set(after) | set(expected)):
        if after.get(job) != expected.get(job):
            return job, after.get(job), expected.get(job)
    return None


def send_broke(held: list[tuple[bool, tuple[int, int] | None]]) -> tuple[str, dict] | None:
    """The rule the first send of a work_once broke, and its parameters, or None. The contract
    calls send with no lock held, so that other workers can enqueue and claim meanwhile: no
    transaction open on its connection, no statement of the code's still running there.
    `held`: for each send, (a transaction open, the statements running as (reads, writes);
    None: not known), as dbhost.DbHost.held reads them."""
    for in_transaction, running in held:
        if in_transaction:
            return "send-in-transaction", {"function": "work_once"}
        if running is not None and any(running):
            reads, writes = running
            return "send-statement-running", {"function": "work_once", "reads": reads,
                                              "writes": writes}
    return None


def busy_broke(function: str, lowered: tuple[int, int] | None) -> tuple[str, dict] | None:
    """The rule a call of `function` broke by leaving its connection's busy timeout lower than
    the connection was handed with, and its parameters, or None. `lowered`: (now, handed) in ms,
    as dbhost.DbHost.busy_lowered reads it on the real connection (None: not lowered). The busy
    timeout is the caller's setting: lowered, every later call on the connection gives up at
    once where it should wait its turn for another worker's lock."""
    if lowered is None:
        return None
    ms, handed = lowered
    return "busy-timeout-lowered", {"function": function, "ms": ms, "default": handed}


class Rules:
    """What one Lab holds its calls to (see the module's docstring): `before(conn)` ahead of a
    call, `after(...)` once it returned or raised; the first rule broken is kept (`broken`).
    `model`: the contract's model of the rows (`RowModel`), when the queue's rows are to be
    the model's after every call (the code under grade is all that writes them while a call
    runs: a check of the Lab alone, and the check run handed the Lab a model); None: the rows
    are not read."""

    def __init__(self, observer: sqlite3.Connection, model: type[RowModel] | None):
        self.observer, self.model = observer, model
        self.broken: Broken | None = None

    def snapshot(self) -> dict[int, dict] | None:
        return rows(self.observer) if self.model is not None else None

    def keep(self, broken: Broken) -> None:
        if self.broken is None:
            self.broken = broken

    def connection(self, function: str, event: dict, in_transaction: bool,
                   unfinished: tuple[int, int] | None) -> bool:
        """The call left its connection clean: no transaction open, no statement running.
        False (and the rule kept) otherwise."""
        if in_transaction:
            self.keep(Broken("transaction-open", event, {"function": function}))
            return False
        if unfinished is not None and any(unfinished):
            reads, writes = unfinished
            self.keep(Broken("statement-running", event,
                             {"function": function, "reads": reads, "writes": writes}))
            return False
        return True

    def settings(self, function: str, event: dict, lowered: tuple[int, int] | None) -> None:
        """The call left its connection's busy timeout no lower than the connection was handed
        with (`busy_broke`)."""
        broke = busy_broke(function, lowered)
        if broke is not None:
            rule, params = broke
            self.keep(Broken(rule, event, params))

    def sends(self, event: dict, held: list[tuple[bool, tuple[int, int] | None]]) -> None:
        """work_once called each send with no lock held (`send_broke`; `held`: for each send,
        as the judge read it on the real connection as send was called)."""
        broke = send_broke(held)
        if broke is not None:
            rule, params = broke
            self.keep(Broken(rule, event, params))

    def rows_as(self, function: str, event: dict, expected: dict[int, dict] | None,
                rule: str = "rows") -> None:
        """The rows now are `expected` (None: not known, nothing said)."""
        if expected is None or self.broken is not None:
            return
        found = differs(self.snapshot(), expected)
        if found is not None:
            job, current, wanted = found
            self.keep(Broken(rule, event, {"function": function, "job": job}, job, current,
                             wanted))

    def after_claim(self, event: dict, before, owner, now, lease_ms, raised: bool) -> None:
        if before is None or not (type(owner) is str and type(now) is int
                                  and type(lease_ms) is int):
            return
        self.rows_as("claim", event, before if raised else after_claim(self.model, before, owner,
                                                                      now, lease_ms))

    def after_finish(self, event: dict, before, claim, now, raised: bool) -> None:
        if before is None or not (plain_stamp(claim) and type(now) is int):
            return
        self.rows_as("finish", event,
                     before if raised else after_finish(self.model, before, claim, now))


class WorkOnce:
    """One work_once's course, as the Lab's send and clock see it: the rows before it, the
    clock's readings (each with how many sends had ended when the code read it), what send was
    given and the rows as send returned; told to `rules` as each part ends."""

    def __init__(self, rules: Rules, event: dict, owner, lease_ms):
        self.rules, self.event, self.owner, self.lease_ms = rules, event, owner, lease_ms
        self.before = rules.snapshot()
        self.readings: list[tuple[int | None, object]] = []
        self.sends = 0
        self.sent = None
        self.returned: dict[int, dict] | None = None  # the rows as the first send returned
        self.raised = False  # the first send raised (SendFailed: the network's failure)

    def read(self, ended: int | None, value) -> None:
        self.readings.append((ended, value))

    def _claim_now(self):
        return self.readings[0][1] if self.readings else None

    def at_send(self, claim) -> None:
        """send is called (the claim part has ended)."""
        self.sends += 1
        if self.sends == 1:
            self.sent = claim
            if self.before is not None and type(claim) is Claim:
                self.rules.after_claim(self.event, self.before, self.owner, self._claim_now(),
                                       self.lease_ms, raised=False)

    def send_ended(self, raised: bool) -> None:
        if self.sends == 1 and self.returned is None:
            self.raised = raised
            self.returned = self.rules.snapshot()

    def ended(self, result, raised: bool) -> None:
        """work_once returned `result` (or raised): its finishing part, or its claim part when
        send was never called."""
        rules = self.rules
        if self.sends == 0:
            rules.after_claim(self.event, self.before, self.owner, self._claim_now(),
                              self.lease_ms, raised=raised)
            return
        if self.sends > 1 or self.raised:
            if self.raised and self.returned is not None:  # send raised: nothing more changes
                rules.rows_as("work_once", self.event, self.returned)
            return
        after_send = [value for ended, value in self.readings if ended is not None and ended >= 1]
        callback = any(ended is not None for ended, _ in self.readings)
        if callback and not after_send and not raised and rules.broken is None:
            rules.keep(Broken("clock-before-send-returned", self.event,
                              {"function": "work_once",
                               "count": len(self.readings)}))  # the values race: not told
            return
        if after_send and self.returned is not None:
            rules.after_finish(self.event, self.returned, self.sent, after_send[0], raised)
