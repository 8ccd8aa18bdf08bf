"""The world a check runs in, drawn from one seed: when it starts, how long a lease is, the
workers' names, the jobs' quantities and ids, the database files' names.

The lesson's seed (`LESSON_SEED`, what a local run uses) gives the lesson's own values: time
starts at 0 ms, leases last 1000 ms, the workers are A, B, C..., jobs are numbered 1, 2, 3...
and the database is `queue.db`. Any other seed draws them at random, check by check (the world
of one check tells nothing about another's), so that a graded program cannot recognise a check
or replay answers learned from an earlier report: a recorded grade draws a fresh seed and
writes it down, and `--replay SEED` runs exactly the same worlds again.

Checks write their times as `w.t0 + ...` in terms of `w.lease_ms` (never an instant of their
own), their owners as `w.name("B")`, their quantities as `w.qty(5)`; the Lab numbers the jobs
and names the files. Roles keep their letters in the check's code and in the report's
sentences ("{B}'s claim"): the sentences are filled with the names this world gave them.

May import: the standard library and the wire (`wire.SEND_OBJECT`, one of what sends return).
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass, field

from grader.harness import wire

#: The seed of a local run: the lesson's own values, the same on every run.
LESSON_SEED = 1

#: The roles a check may cast (letters, as the lesson names its workers).
ROLES = tuple(string.ascii_uppercase)

#: What worker names are made of in a drawn world: words a real fleet might use, a number.
_WORDS = ("worker", "w", "node", "host", "ingest", "mailer", "billing", "crawler", "pod",
          "runner", "batch", "svc", "edge", "shard", "job-runner", "agent", "consumer")


def fresh_seed() -> int:
    """A seed for a recorded grade: unpredictable, never the lesson's (1)."""
    return random.SystemRandom().randrange(LESSON_SEED + 1, 2 ** 63)


@dataclass
class World:
    """One check's world under one seed (see the module docstring)."""

    seed: int
    check: str = ""
    lesson: bool = field(init=False)
    t0: int = field(init=False)
    lease_ms: int = field(init=False)
    far: int = field(init=False)  # a deadline no step of the check reaches
    roles: dict[str, str] = field(init=False)
    db_name: str = field(init=False)

    def __post_init__(self):
        self.lesson = self.seed == LESSON_SEED
        rng = _random(f"{self.seed}:{self.check}")
        if self.lesson:
            self.t0, self.lease_ms = 0, 1000
            self.far = self.t0 + 1_000_000
            self.roles = {role: role for role in ROLES}
            self._first_id, self._gaps = 1, (1,)
        else:
            self.t0 = rng.choice([rng.randrange(1, 10 ** 4), rng.randrange(10 ** 4, 10 ** 9)])
            self.lease_ms = rng.choice([rng.randrange(20, 1000), rng.randrange(1000, 60_000)])
            self.far = self.t0 + self.lease_ms * rng.randrange(200, 5000)
            self.roles = dict(zip(ROLES, _names(rng, len(ROLES))))
            # the first id a little below a power of ten (997 to 999, 99,999,998...): a check's
            # ids then change their number of digits by its fourth job, as the lesson's do at
            # its tenth (ids compared as text: "1000" < "999")
            self._first_id = 10 ** rng.randrange(1, 10) - rng.randrange(1, 4)
            self._gaps = tuple(rng.choice((1, 1, 2, 3, 7, rng.randrange(1, 10 ** 4)))
                               for _ in range(8))
        # job_id's sums: of gaps[k % len] for k = 2..r+1, r = 0..len-1; of every gap
        span = len(self._gaps)
        self._partial = tuple(sum(self._gaps[k % span] for k in range(2, 2 + rest))
                              for rest in range(span))
        self._cycle = sum(self._gaps)
        scale = self._draw("qty")
        self._qty_scale, self._qty_offset = scale.randrange(1, 1000), scale.randrange(0, 10 ** 5)
        self._ids = 0  # jobs enqueued so far
        self._used: set[str] = set()
        self.db_name = self.file("queue")

    # -- what the checks ask for ------------------------------------------------------------------
    def name(self, role: str) -> str:
        """The owner name this world gives role `role` ("A", "B", ...)."""
        self._used.add(role)
        return self.roles[role]

    def names_used(self) -> dict[str, str]:
        """The names of the roles the check asked for, as sentence parameters ({A}, {B}...);
        none in the lesson's world, where a role's name is its letter."""
        return {} if self.lesson else {role: self.roles[role] for role in sorted(self._used)}

    def qty(self, lesson_qty: int) -> int:
        """The quantity this world gives the lesson's quantity `lesson_qty`: `a * q + b` for a
        scale and offset of the world's, so quantities keep their order and stay distinct (a
        check whose story needs a smaller job, or a qty that tells a job at the receiver, means
        the same in every world)."""
        if self.lesson:
            return lesson_qty
        return self._qty_scale * lesson_qty + self._qty_offset

    def pick(self, label: str, lesson_value: int, low: int, high: int) -> int:
        """`lesson_value` in the lesson's world, else a whole number from `low` to `high`,
        drawn for `label` (the same label gives the same number, whatever was drawn before)."""
        if self.lesson:
            return lesson_value
        return self._draw(f"pick:{label}").randint(low, high)

    def next_id(self) -> int:
        """The id the next enqueued job gets: increasing, with gaps in a drawn world."""
        self._ids += 1
        return self.job_id(self._ids)

    def peek_id(self) -> int:
        """The id `next_id` will give (for a job that must have the same id in another file)."""
        return self.job_id(self._ids + 1)

    def job_id(self, n: int) -> int:
        """The id this world gives the n-th job enqueued on a fresh database (1-based; n, in
        the lesson's world): what a check that numbers jobs itself (the random timelines'
        model) must number them as. Strictly increasing in n."""
        # the sum of gaps[k % len] for k = 2..n, in closed form (n may be large: 2**40)
        cycles, rest = divmod(n - 1, len(self._gaps))
        return self._first_id + cycles * self._cycle + self._partial[rest]

    def send_returns(self):
        """What the check's sends return, one after another, where the check's own send returns
        nothing: what real callables return and work_once must ignore (the contract: finish is
        called whatever send returned). Every world starts with False (the first send of a
        check is often its only one: a work_once that takes False for a failed delivery meets
        it in every world), then an object (a client's response: no JSON, no number; second
        in every world too, for the checks that send twice), then 0, None, a value, in the
        lesson's order or drawn."""
        values = (0, None, "202 Accepted", True, 1)
        rng = None if self.lesson else self._draw("send-returns")
        while True:
            yield False
            yield wire.SEND_OBJECT
            yield from (values if rng is None else rng.sample(values, len(values)))

    def label(self, kind: str, lesson_value: str) -> str:
        """An SQL identifier or message of the grader's (`kind`: a trigger's name...):
        `lesson_value` in the lesson's world, letters that say nothing otherwise."""
        if self.lesson:
            return lesson_value
        rng = self._draw(f"label:{kind}")
        return rng.choice(string.ascii_lowercase) + "".join(
            rng.choices(string.ascii_lowercase + string.digits, k=11))

    def file(self, kind: str) -> str:
        """The name of a database file of the check's (`kind`: queue, rehearsal, crash-3...):
        `<kind>.db` in the lesson's world, a name that says nothing otherwise."""
        if self.lesson:
            return f"{kind}.db"
        rng = self._draw(f"file:{kind}")  # the same kind, the same name: drawn, not kept
        return "".join(rng.choices(string.ascii_lowercase + string.digits, k=10)) + ".db"

    def _draw(self, label: str) -> random.Random:
        """The random source of `label` in this world: the same label, the same numbers."""
        return _random(f"{self.seed}:{self.check}:{label}")


def _random(key: str) -> random.Random:
    """A random source seeded by `key` (a hash of it: any seed and check spread evenly)."""
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:16], "big"))


def _names(rng: random.Random, count: int) -> list[str]:
    """`count` distinct worker names drawn from `rng`."""
    names: list[str] = []
    while len(names) < count:
        word = rng.choice(_WORDS)
        name = rng.choice([f"{word}-{rng.randrange(1, 100)}", f"{word}{rng.randrange(1, 10)}",
                           f"{word}-{rng.choice(string.ascii_lowercase)}"
                           f"{rng.randrange(10, 1000)}"])
        if name not in names:
            names.append(name)
    return names
