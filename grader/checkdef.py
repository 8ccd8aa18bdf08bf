"""`@check`: how a graded check is declared.

    @check("finish-at-expiry", points=3)
    def test_finish_exactly_at_expiry(lab):
        ...

The body runs in a sandbox child with a fresh `Lab` (grader.runner runs it: no test framework
is involved, and the decorator returns the body unchanged). Titles, whys and hints live in the
message catalogue under `check.<id>.*`.

A check whose work divides into independent parts (`parts=N`) takes a second argument, its
`Part`: the runner runs the parts as separate units (at once, on several cores) and the check's
result is the first part's, in part order, that did not pass: the same as one body running every
part in turn and stopping at the first failure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

ID_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
DEFAULT_TIMEOUT = 3.0  # wall-clock seconds per check: only a safety net against hangs


@dataclass(frozen=True)
class CheckInfo:
    id: str
    points: int
    module: str
    timeout: float
    #: What the code's answers are compared with, when it is not the check's own expectations
    #: (results name it: an instructor knows what judged).
    oracle: str | None = None
    #: The function that does the check (`body(lab)`, or `body(lab, part)` when parts > 1).
    body: Callable | None = field(default=None, compare=False, repr=False)
    #: Independent parts the runner may run at once (see the module's docstring).
    parts: int = 1
    #: The longest one call of the code may run (wall-clock seconds, times --timeout-scale), for
    #: a check whose own `timeout` bounds many calls; None: the check's timeout and 5 s more.
    call_timeout: float | None = None

    @property
    def family(self) -> "Family":
        """The declared rule family of the check's module (checkdef.FAMILIES)."""
        return family_of(self.module)

    @property
    def name(self) -> str:
        """The function's name (`-k` matches it too)."""
        return getattr(self.body, "__name__", "")


@dataclass(frozen=True)
class Part:
    """Part `index` (0-based) of `count` of a check's work."""
    index: int
    count: int

    def of(self, total: int) -> range:
        """This part's share of `total` items numbered 0..total-1: consecutive, in order, every
        item in exactly one part."""
        return range(self.index * total // self.count, (self.index + 1) * total // self.count)


#: Every declared check, in declaration order (module import order, then source order).
REGISTRY: dict[str, CheckInfo] = {}

@dataclass(frozen=True)
class Family:
    """A rule family of the lesson (its checks live in `grader/checks/test_<name>.py`) and how
    its checks are run: declared once, in FAMILIES, and read by the runner, watch and the pytest
    plugin."""
    name: str
    #: Its checks start processes of their own besides the one target process every check has
    #: (race and crash claimers, integration workers: grader.harness.judge.children, .workers). Their
    #: judge runs in a forked child of the lane, swept after (grader.runner); pytest marks them
    #: `processes`.
    starts_processes: bool = False
    #: 0: short. Else long: its checks are handed to the lanes before the short ones, the larger
    #: `long` first (grader.runner.schedule; a check in parts is long whatever its family).
    long: int = 0
    #: The pass of `python -m grader watch` its checks run in: 1 is the first screen, 2 after it.
    watch_pass: int = 1
    #: Modules of the grader's own that its checks' judges import only when they run (not
    #: with the check module: `python -m grader -k ...` without them does not pay for them).
    #: A process that runs its checks' judges in forked children (a lane) imports them once,
    #: before it forks the first: every judge of a sweep or a repeat then has them already.
    preload: tuple[str, ...] = ()


#: Every rule family, in the order its checks are run and reported in: the order the lesson tells
#: its rules. A check module outside it is an error (`module_rank`).
FAMILIES = (
    Family("boundaries"),
    Family("tokens"),
    Family("stamps"),
    Family("selection"),
    Family("deadlines"),
    Family("quarantine"),
    Family("transactions"),
    Family("work_once"),
    # work_once while another worker acts inside its send (the lesson's late courier)
    Family("late_finish"),
    Family("lock_probe"),
    # long: the reference on 2 cores, integration about 120 ms, crash and race about 40 ms each
    Family("race", starts_processes=True, long=1, watch_pass=2),
    Family("crash", starts_processes=True, long=2, watch_pass=2),
    Family("integration", starts_processes=True, long=3, watch_pass=2,
           preload=("grader.harness.judge.receiver",)),  # http.server, email, ssl: ~20 ms
    # the random timelines: about 2 s of a first pass of 5.7 s when they were in it
    Family("differential", watch_pass=2),
)
BY_NAME = {f.name: f for f in FAMILIES}

#: The families' names in lesson order (derived from FAMILIES).
MODULE_ORDER = tuple(f.name for f in FAMILIES)
#: The families whose checks start processes of their own (derived from FAMILIES).
PROCESS_FAMILIES = tuple(f.name for f in FAMILIES if f.starts_processes)


def family(module_name: str) -> str:
    """The rule family a check module grades: `grader.checks.test_tokens` -> `tokens`."""
    return module_name.rsplit(".", 1)[-1].removeprefix("test_")


def family_of(module_name: str) -> Family:
    """The declared Family of a check module (see `module_rank` for one that is not declared)."""
    return FAMILIES[module_rank(module_name)]


def module_rank(module_name: str) -> int:
    """Position of a check module (`grader.checks.test_tokens` or `test_tokens`) in FAMILIES.

    A module that is not there is an error, not a silent last place: where a rule family is
    told (and graded) is decided by whoever adds it."""
    topic = family(module_name)
    if topic not in MODULE_ORDER:
        raise ValueError(f"check module {module_name!r} is not in grader.checkdef.FAMILIES "
                         f"{MODULE_ORDER}: add Family({topic!r}) where the lesson tells its rule")
    return MODULE_ORDER.index(topic)


def check(check_id: str, points: int, timeout: float = DEFAULT_TIMEOUT,
          oracle: str | None = None, parts: int = 1, call_timeout: float | None = None):
    """Declare a check (`timeout`: wall-clock seconds per run, or per part: a safety net;
    `call_timeout`: per call of the code, where one run makes hundreds of calls)."""
    if not ID_PATTERN.match(check_id):
        raise ValueError(f"check id must be kebab-case: {check_id!r}")
    if type(parts) is not int or parts < 1:
        raise ValueError(f"parts must be a positive int: {parts!r}")

    def decorate(body: Callable) -> Callable:
        module_rank(body.__module__)  # a check module's family must be in FAMILIES
        if check_id in REGISTRY and REGISTRY[check_id].module != body.__module__:
            raise ValueError(f"duplicate check id {check_id!r}")
        REGISTRY[check_id] = CheckInfo(check_id, points, body.__module__, timeout, oracle,
                                       body, parts, call_timeout)
        return body

    return decorate


def all_checks() -> dict[str, CheckInfo]:
    """Import every check module under grader/checks and return the registry."""
    import importlib
    from pathlib import Path

    paths = Path(__file__).with_name("checks").glob("test_*.py")
    for path in sorted(paths, key=lambda p: (module_rank(p.stem), p.stem)):
        importlib.import_module(f"grader.checks.{path.stem}")
    return dict(sorted(REGISTRY.items(), key=lambda kv: module_rank(kv[1].module)))


def check_families() -> dict[str, str]:
    """Every check's rule family (check id -> family name), in lesson order: what the
    instructor's config file may name in [families.NAME] (grader.config.load)."""
    return {cid: family(info.module) for cid, info in all_checks().items()}


#: A student copy exported without the contract's model lists here the checks it left out.
WITHHELD_FILE = "grader/checks/withheld.json"


def withheld() -> list[dict]:
    """The checks this copy of the grader does not hold ({"id", "points"} each): they run only
    where grades are recorded. Empty in a full copy."""
    import json
    from pathlib import Path

    path = Path(__file__).with_name("checks") / "withheld.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
