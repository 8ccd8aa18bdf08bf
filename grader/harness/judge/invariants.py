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
The model here reads rows as SQLite compares them (a NULL compares as unknown: never true).
"""

from __future__ import annotations

import dataclasses
import sqlite3

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


def _lt(a, b) -> bool:
    """a < b as SQLite's WHERE takes it: NULL on either side is not true."""
    return a is not None and b is not None and a < b


def _le(a, b) -> bool:
    return a is not None and b is not None and a <= b


def _free(row: dict, now: int) -> bool:
    """No valid lease: pending, or leased with lease_until <= now."""
    return row["status"] == "pending" or (row["status"] == "leased"
                                          and _le(row["lease_until"], now))


def due(row: dict, now: int) -> bool:
    """Claim's step 1 quarantines it."""
    return _free(row, now) and (_le(row["max_attempts"], row["attempts"])
                                or _le(row["deadline"], now))


def claimable(row: dict, now: int) -> bool:
    return (_free(row, now) and _lt(row["attempts"], row["max_attempts"])
            and _lt(now, row["deadline"]))


def after_claim(before: dict[int, dict], owner: str, now: int,
                lease_ms: int) -> dict[int, dict]:
    """The rows once claim(owner, now, lease_ms) returned (the contract's four steps)."""
    after = {job: ({**row, "status": "quarantined"} if due(row, now) else dict(row))
             for job, row in before.items()}
    free = [job for job in sorted(after) if claimable(after[job], now)]
    if free:
        row = after[free[0]]
        row.update(status="leased", owner=owner, token=row["token"] + 1,
                   attempts=row["attempts"] + 1, lease_until=min(now + lease_ms, row["deadline"]))
    return after


def after_finish(before: dict[int, dict], claim: Claim, now: int) -> dict[int, dict]:
    """The rows once finish(claim, now) returned."""
    after = {job: dict(row) for job, row in before.items()}
    row = after.get(claim.id)
    if (row is not None and row["status"] == "leased" and row["owner"] == claim.owner
            and row["token"] == claim.token and row["attempts"] == claim.attempt
            and row["lease_until"] == claim.lease_until and _lt(now, row["lease_until"])
            and _lt(now, row["deadline"])):
        row.update(status="done", finished_at=now)
    return after


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


class Rules:
    """What one Lab holds its calls to (see the module's docstring): `before(conn)` ahead of a
    call, `after(...)` once it returned or raised; the first rule broken is kept (`broken`).
    `rows_too`: the queue's rows are the model's after every call (the code under grade is
    all that writes them while a call runs: a check of the Lab alone)."""

    def __init__(self, observer: sqlite3.Connection, rows_too: bool):
        self.observer, self.rows_too = observer, rows_too
        self.broken: Broken | None = None

    def snapshot(self) -> dict[int, dict] | None:
        return rows(self.observer) if self.rows_too else None

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
        self.rows_as("claim", event, before if raised else after_claim(before, owner, now,
                                                                      lease_ms))

    def after_finish(self, event: dict, before, claim, now, raised: bool) -> None:
        if before is None or not (plain_stamp(claim) and type(now) is int):
            return
        self.rows_as("finish", event, before if raised else after_finish(before, claim, now))


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
