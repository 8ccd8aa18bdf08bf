"""The contract as an executable model: the queue's rules in plain Python, no SQL, no transactions.

Its answers (return values and rows) are the expected ones for the differential check
(`timelines`): a timeline is played against the code under grade and against this model, and
every return value and every row must agree. The model is written from the course contract
(docs/contract.md: the contract and its decisions), rule by rule, not from the reference solution; the project's
tests prove the two agree on thousands of random timelines.

It is also the one model of the rows every call of every check is held to (the Lab's rules after
every call, grader.harness.judge.invariants): the runner hands `QueueModel` to each check's Lab,
which plays each call on `QueueModel.holding(the rows before it)`. Those rows are whatever the
code under grade left, so the model compares as SQLite's WHERE does: a NULL compares as unknown,
never true (`lt`, `le`, `eq`), and arithmetic on a NULL gives NULL.

Rows are dicts with the columns of `lab.store.COLUMNS`, as `lab.store.get_job` returns them.
Every change to a row is also written down (`changes`: the job and its row before), so that a
table of thousands of rows is compared with the model row by row only where the model changed
it (`timeline_db.Database.agrees`); the rules themselves never read it.
"""

from __future__ import annotations

import operator
from typing import Callable

from lab.store import COLUMNS, Claim

PENDING, LEASED, DONE, QUARANTINED = "pending", "leased", "done", "quarantined"
_COLUMNS_OF = operator.itemgetter(*COLUMNS)  # a row's values, in the order of COLUMNS


def lt(a, b) -> bool:
    """a < b as SQLite's WHERE takes it: NULL on either side is not true."""
    return a is not None and b is not None and a < b


def le(a, b) -> bool:
    """a <= b as SQLite's WHERE takes it."""
    return a is not None and b is not None and a <= b


def eq(a, b) -> bool:
    """a = b as SQLite's WHERE takes it (NULL = NULL is not true either)."""
    return a is not None and b is not None and a == b


def plus(a, b):
    """a + b as SQLite computes it: NULL if either is NULL."""
    return None if a is None or b is None else a + b


def lesson_ids(n: int) -> int:
    """The n-th job's id as lab.store.enqueue gives it on a fresh table: n (SQLite's rowid)."""
    return n


class QueueModel:
    """The jobs table and the three functions of the contract, on a logical clock.

    `ids(n)` is the id of the n-th job enqueued (1-based): the store's own numbering by
    default; a drawn world numbers its jobs otherwise (`World.job_id`), and the model must
    number them as the database it is compared with does."""

    def __init__(self, ids: Callable[[int], int] = lesson_ids) -> None:
        self.rows: dict[int, dict] = {}
        self.ids = ids
        self.enqueued = 0
        #: every change to a row, in order: (its number in this list, the job, the row before
        #: it or None for a new one); never read by the rules (see the module's docstring)
        self.changes: list[tuple[int, int, dict | None]] = []

    def _changing(self, job: int) -> None:
        """Write down that job's row is about to change (`changes`)."""
        row = self.rows.get(job)
        self.changes.append((len(self.changes), job, None if row is None else dict(row)))

    @classmethod
    def holding(cls, rows: dict[int, dict]) -> "QueueModel":
        """A model whose table is a copy of `rows` (by id, as the Lab reads them from the
        database): what the contract makes of a call from there is in `.rows` once played."""
        model = cls()
        model.rows = {job: dict(row) for job, row in rows.items()}
        model.enqueued = len(rows)
        return model

    # -- the store (provided to students; operator actions) ---------------------------------
    def enqueue(self, qty: int, deadline: int, max_attempts: int = 3) -> int:
        """Insert a pending job, with the id the numbering gives the next one."""
        self.enqueued += 1
        job = self.ids(self.enqueued)
        self._changing(job)
        self.rows[job] = {"id": job, "qty": qty, "status": PENDING, "owner": None,
                          "lease_until": None, "token": 0, "attempts": 0,
                          "max_attempts": max_attempts, "deadline": deadline,
                          "finished_at": None}
        return job

    def insert(self, rows: list[dict]) -> list[int]:
        """Rows set directly by the operator, all columns given but the id (thousands at once, a
        queue at the domain's size): numbered as enqueue numbers the next jobs."""
        jobs = []
        for values in rows:
            self.enqueued += 1
            job = self.ids(self.enqueued)
            self._changing(job)
            self.rows[job] = {column: job if column == "id" else values[column]
                              for column in COLUMNS}
            jobs.append(job)
        return jobs

    def requeue(self, job: int) -> None:
        """A quarantined job back to pending: attempts 0, no owner, no lease, the token kept."""
        row = self.rows.get(job)
        if row is None or row["status"] != QUARANTINED:
            raise ValueError(f"job {job} is not quarantined")
        self._changing(job)
        row.update(status=PENDING, attempts=0, owner=None, lease_until=None)

    def set_row(self, job: int, **values) -> None:
        """An operator's direct edit (quarantine by hand, a deadline moved earlier)."""
        unknown = set(values) - set(COLUMNS)
        if unknown:
            raise ValueError(f"not a column: {sorted(unknown)}")
        self._changing(job)
        self.rows[job].update(values)

    def table(self) -> list[tuple]:
        """Every row as a tuple of `COLUMNS`, by id: as `SELECT <COLUMNS> ... ORDER BY id`
        returns them."""
        return [_COLUMNS_OF(row) for _, row in sorted(self.rows.items())]

    def values(self, job: int) -> tuple | None:
        """The job's row as a tuple of `COLUMNS` (as `table` gives each), None if not there."""
        row = self.rows.get(job)
        return None if row is None else _COLUMNS_OF(row)

    def row(self, job: int) -> dict | None:
        row = self.rows.get(job)
        return None if row is None else {column: row[column] for column in COLUMNS}

    # -- the contract ------------------------------------------------------------------------
    @staticmethod
    def lease_not_valid(row: dict, now: int) -> bool:
        """Never claimed, or its lease has run out: `pending`, or `leased` with lease_until <= now."""
        return row["status"] == PENDING or (row["status"] == LEASED
                                             and le(row["lease_until"], now))

    def claim(self, owner: str, now: int, lease_ms: int) -> Claim | None:
        # The jobs whose lease is not valid (read once: a queue may hold thousands of jobs).
        free = [(job, row) for job, row in self.rows.items() if self.lease_not_valid(row, now)]
        # 1. Quarantine every job whose lease is not valid and that is out of attempts or past
        #    its deadline. Nothing else changes (no new token).
        for job, row in free:
            if le(row["max_attempts"], row["attempts"]) or le(row["deadline"], now):
                self._changing(job)
                row["status"] = QUARANTINED
        # 2. The claimable job with the lowest id: of those, the ones not quarantined now
        #    (their lease still not valid) with attempts and time left.
        claimable = [job for job, row in free
                     if row["status"] != QUARANTINED and lt(row["attempts"], row["max_attempts"])
                     and lt(now, row["deadline"])]
        if not claimable:
            return None
        # 3. A new generation of the lease, clamped to the job's deadline.
        job = min(claimable)
        row = self.rows[job]
        self._changing(job)
        row.update(status=LEASED, owner=owner, token=plus(row["token"], 1),
                   attempts=row["attempts"] + 1,  # not NULL: it is < max_attempts
                   lease_until=min(now + lease_ms, row["deadline"]))  # deadline: > now
        # 4. The values now stored in the row.
        return Claim(id=row["id"], qty=row["qty"], owner=row["owner"], token=row["token"],
                     attempt=row["attempts"], lease_until=row["lease_until"])

    def finish(self, claim: Claim, now: int) -> bool:
        """Done only if the row is leased, matches the stamp in every field, and both the lease
        and the deadline remain; otherwise False and the row unchanged."""
        row = self.rows.get(claim.id)
        if (row is None or row["status"] != LEASED or not eq(row["owner"], claim.owner)
                or not eq(row["token"], claim.token) or not eq(row["attempts"], claim.attempt)
                or not eq(row["lease_until"], claim.lease_until)
                or not lt(now, row["lease_until"]) or not lt(now, row["deadline"])):
            return False
        self._changing(claim.id)
        row.update(status=DONE, finished_at=now)
        return True

    def work_once(self, owner: str, send: Callable[[Claim], object], clock: Callable[[], int],
                  lease_ms: int) -> bool | None:
        """Claim with one reading of the clock, send with nothing held, finish with a fresh one.
        If send raises, the exception propagates and the job stays leased as claimed."""
        stamp = self.claim(owner, clock(), lease_ms)
        if stamp is None:
            return None
        send(stamp)
        return self.finish(stamp, clock())
