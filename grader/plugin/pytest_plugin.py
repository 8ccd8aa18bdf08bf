"""The lease lab's checks as pytest items (loaded by pytest through the `pytest11` entry point).

    python -m pytest --pyargs grader.checks --impl lab/queue.py [-k ID] [-x] [--lf] [-m race]
                     [--junitxml FILE] [--json-report --json-report-file FILE] [--pdb]

Every function declared with `@check` in a module of grader/checks is collected as a
`CheckItem` named by its check id (`grader/checks/test_boundaries.py::finish-at-expiry`;
`-k` matches the id and the function's name, `-m` the check's family and `processes` for the
checks that start processes of their own). The items of a session are graded as
`python -m grader` grades: the first item to run starts the grade of every check item pytest
selected (grader.runner.iter_checks: the preflight, then the lanes, forked and jailed, since
pytest's process is not; the code under grade in target processes), and each item takes its
check's result as it comes, in lesson order, while the lanes go on with the next ones. A
session's end (`-x`, `--maxfail`, Ctrl-C) ends the lanes. Under pytest-xdist (a worker does not
know which items it will be handed), with `--pdb`, and for an item run twice, an item grades
its own check alone (grader.runner.grade_check), after one preflight per session. Code that
cannot be loaded fails every item at once, as in a grade. A
check that does not pass fails its item with the text `python -m grader` shows under it
(grader.report.render.check_text, hints kept back as on a first local run). With `--pdb` the
judge of a check that starts no process of its own runs here, unjailed (for a student debugging
their own code), and a check's own failure is raised from the check's body, so the debugger
stops in the check, beside its `lab`.

Other pytest files are left alone: only functions the check registry declares become items.
pytest-json-report's file carries each item's whole result under `metadata.leaselab` (the
typed failure, its outcome, the world's seed, the target): `python -m grader report FILE`
writes every report from it.
"""

from __future__ import annotations

import inspect

import pytest

#: The marker of the checks that start processes of their own (`-m processes`).
PROCESS_MARKER = "processes"


def pytest_addoption(parser):
    group = parser.getgroup("leaselab", "lease lab checks (python -m pytest --pyargs grader.checks)")
    group.addoption("--impl", dest="leaselab_impl", default=None, metavar="MODULE_OR_FILE",
                    help="the code the lease lab's checks grade: a module name or the path of "
                         "a .py file (default: lab.queue)")
    group.addoption("--replay", dest="leaselab_seed", default=None, metavar="SEED",
                    help="draw every check's world from SEED, 'fresh' for a new one (default: "
                         "the lesson's values)")
    group.addoption("--lang", dest="leaselab_lang", default=None, choices=("en", "ja"),
                    help="language of the checks' failure texts (default: from the locale)")
    group.addoption("--timeout-scale", dest="leaselab_timeout_scale", default=1.0, type=float,
                    metavar="X", help="multiply every check's wall-clock safety timeout")
    group.addoption("--course-config", dest="leaselab_config", default=None, metavar="PATH",
                    help="the course's config file, as python -m grader --config reads it: a "
                         "check it hides is not collected, one it shows as a verdict fails with "
                         "its message only")
    group.addoption("--instructor", dest="leaselab_instructor", action="store_true",
                    help="the instructor's copy: every check in full, whatever the config shows")


def pytest_configure(config):
    from grader.checkdef import FAMILIES

    for f in FAMILIES:
        config.addinivalue_line("markers", f"{f.name}: lease lab checks of the {f.name} family")
    starting = ", ".join(f.name for f in FAMILIES if f.starts_processes)
    config.addinivalue_line("markers", f"{PROCESS_MARKER}: lease lab checks that start "
                                       f"processes of their own ({starting})")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    """A registered check's body becomes a CheckItem; anything else is pytest's business."""
    module = getattr(collector, "module", None) if isinstance(collector, pytest.Module) else None
    if module is None or not module.__name__.startswith("grader.checks.") or not callable(obj):
        return None
    from grader.checkdef import REGISTRY

    info = next((i for i in REGISTRY.values() if i.body is obj), None)
    return None if info is None else CheckItem.from_parent(collector, name=info.id, info=info)


def pytest_collection_modifyitems(session, config, items):
    """The checks in lesson order (pytest collects modules by name); an --impl path that cannot
    be graded is a usage error, as for `python -m grader` (exit status 4 here)."""
    from grader.checkdef import all_checks

    if any(isinstance(item, CheckItem) for item in items):
        problem = Grading.of(config).bad_impl()
        if problem:
            raise pytest.UsageError(problem)
    order = {check_id: i for i, check_id in enumerate(all_checks())}
    items.sort(key=lambda item: order.get(item.name, -1) if isinstance(item, CheckItem) else -1)
    checks = [item for item in items if isinstance(item, CheckItem)]
    if checks:  # what the course hides is not run here: neither its text nor its status shows
        grading = Grading.of(config)
        levels = grading.course_config().levels([item.name for item in checks])
        hidden = [item for item in checks if levels.get(item.name) == "hidden"]
        if hidden:
            grading.hidden = [item.info for item in hidden]
            items[:] = [item for item in items if item not in hidden]
            config.hook.pytest_deselected(items=hidden)


class CheckNotPassed(Exception):
    """A check did not pass; the item's report shows its failure text."""


class CheckItem(pytest.Item):
    def __init__(self, *, info, **kwargs):
        super().__init__(**kwargs)
        self.info = info
        self.result = None
        self.add_marker(info.family.name)
        if info.family.starts_processes:
            self.add_marker(PROCESS_MARKER)
        self.extra_keyword_matches.add(info.name)

    def runtest(self):
        grading = Grading.of(self.config)
        self.result = grading.grade(self.info, self.session.items)
        if self.result.passed:
            return
        raised = grading.check_exception()
        if raised is not None:  # --pdb: the check's own exception, raised in the check's body
            raise raised
        raise CheckNotPassed(self.info.id)

    def repr_failure(self, excinfo, style=None):
        if self.result is not None and not self.result.passed:
            return Grading.of(self.config).failure_text(self.result)
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        try:
            line = inspect.getsourcelines(self.info.body)[1] - 1
        except (OSError, TypeError):
            line = 0
        return self.path, line, f"{self.info.id} ({self.info.points} pt)"


@pytest.hookimpl(optionalhook=True)
def pytest_json_runtest_metadata(item, call):
    """pytest-json-report: the check's whole result, for `python -m grader report`."""
    if not isinstance(item, CheckItem) or call.when != "call" or item.result is None:
        return {}
    from grader.results import check_result_to_json

    from .report_file import METADATA_KEY  # kept under it in pytest-json-report's file

    grading = Grading.of(item.config)
    return {METADATA_KEY: {"check": check_result_to_json(item.result), "target": grading.impl,
                           "seed": grading.seed, "lang": grading.lang}}


def pytest_sessionfinish(session, exitstatus):
    """The grade's lanes end with the session, however it ends (`-x` stops it early)."""
    grading = session.config.stash.get(GRADING, None)
    if grading is not None:
        grading.close()


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    grading = config.stash.get(GRADING, None)
    if grading is not None and grading.results:
        for line in grading.causes_lines():
            terminalreporter.write_line(line)
        terminalreporter.write_line(grading.score_line())
        note = grading.unjailed_note()
        if note:
            terminalreporter.write_line(note)


GRADING = pytest.StashKey["Grading"]()


class Grading:
    """What the items of one pytest session share: the target, the world, the preflight."""

    def __init__(self, config):
        from grader.arguments import FRESH, seed as seed_type
        from grader.harness.judge.world import LESSON_SEED, fresh_seed
        from grader.report.messages import default_lang

        self.config = config
        self.impl = config.getoption("leaselab_impl") or "lab.queue"
        given = config.getoption("leaselab_seed")
        try:
            seed = LESSON_SEED if given is None else seed_type(given)
        except ValueError:
            raise pytest.UsageError(f"--replay {given}: not a seed (a whole number, or fresh)")
        self.seed = fresh_seed() if seed == FRESH else seed
        self.lang = config.getoption("leaselab_lang") or default_lang()
        self.timeout_scale = config.getoption("leaselab_timeout_scale")
        self.debug = bool(config.getoption("usepdb", False))
        self.results = []
        self._refused = None
        self._brief = {"hung": []}
        self._preflown = False
        self.told: dict = {}  # a blocking cause -> the check whose failure told it in full
        self.hidden: list = []  # the checks the course's config hides (not collected)
        self._course = None
        self._stream = None  # the session's grade (runner.iter_checks), once an item starts it
        self._came: dict = {}  # check id -> its result, come from the grade, not yet taken

    @classmethod
    def of(cls, config) -> "Grading":
        grading = config.stash.get(GRADING, None)
        if grading is None:
            grading = config.stash[GRADING] = cls(config)
        return grading

    def course_config(self):
        """The course's config (--course-config; the defaults without it), --instructor applied;
        a file that cannot be read or names unknown checks is a usage error."""
        if self._course is None:
            from grader import config as configs
            from grader.checkdef import all_checks, check_families

            try:
                self._course = configs.load(self.config.getoption("leaselab_config"),
                                            set(all_checks()), check_families())
            except configs.ConfigError as exc:
                raise pytest.UsageError(f"--course-config: {exc}") from None
            self._course.instructor = bool(self.config.getoption("leaselab_instructor"))
        return self._course

    def bad_impl(self) -> str | None:
        """Why --impl cannot be graded (one line), or None."""
        from grader.arguments import ungradable_file
        from grader.harness.target.loader import is_path

        problem = ungradable_file(self.impl) if is_path(self.impl) else None
        return f"--impl {self.impl}: {problem}" if problem else None

    def grade(self, info, items=()):
        """The result of `info`'s check: taken from the session's grade (`_stream`), or graded
        alone (`_grade_alone`; see the module's docstring for when)."""
        result = None
        if not self.debug and not hasattr(self.config, "workerinput"):  # not an xdist worker
            result = self._streamed(info, items)
        if result is None:
            result = self._grade_alone(info)
        self.results.append(result)
        return result

    def _streamed(self, info, items):
        """`info`'s result from the grade of every check item selected, started by the first
        item that asks (None: the grade has none for it, e.g. an item run twice)."""
        from grader import runner

        if self._stream is None:
            infos = [item.info for item in items if isinstance(item, CheckItem)]
            if info.id not in {i.id for i in infos}:
                return None
            self._stream = runner.iter_checks(self.impl, timeout_scale=self.timeout_scale,
                                              seed=self.seed, checks=infos)
        while info.id not in self._came:
            with runner.cwd_on_path():  # the first step forks the lanes: they resolve lab.queue
                result = next(self._stream, None)  # from the folder pytest runs in
            if result is None:
                break
            self._came[result.id] = result
        return self._came.pop(info.id, None)

    def close(self) -> None:
        """End the session's grade (its lanes, its zygote) if it is still running."""
        if self._stream is not None:
            self._stream.close()

    def _grade_alone(self, info):
        from grader import runner
        from grader.harness.judge import checkrun

        with runner.cwd_on_path():
            if not self._preflown:  # once: code that cannot load fails every check at once,
                runner.prepare()    # a function that hangs stops every check that calls it
                self._refused, self._brief = runner.briefing(self.impl, self.timeout_scale)
                self._preflown = True
            settings = runner.settings_for(self.impl, timeout_scale=self.timeout_scale,
                                           seed=self.seed).briefed(self._brief)
            if self._refused is not None:
                result = runner.refused_result(info, self._refused, settings)
            else:
                checkrun.keep_check_exception(self.debug)
                result = runner.grade_check(info, settings, here=self.debug)
        return result

    def check_exception(self):
        from grader.harness.judge import checkrun

        return checkrun.kept_check_exception() if self.debug else None

    def failure_text(self, result) -> str:
        from grader.harness.target.loader import display_name
        from grader.harness.judge.world import LESSON_SEED
        from grader.report import pipeline
        from grader.report.messages import text
        from grader.report.render import check_text, first_line

        report = pipeline.report_of([result], lang=self.lang, target=display_name(self.impl),
                                    impl=self.impl, config=self.course_config(),
                                    seed=self.seed, drawn=self.seed != LESSON_SEED,
                                    use_history=False)
        check = report.checks[0]
        key = self.blocking_key(result)
        if key is not None:  # code that never reached a rule: told in full once, then a line
            first = self.told.setdefault(key, result.id)
            if first != result.id:
                return (f"{check.title}  [{check.outcome_label}]  "
                        + text("ui.same-cause-as", self.lang, check=first,
                               cause=first_line(check, self.lang)))
        return f"{check.title}  [{check.outcome_label}]\n{check_text(check, self.lang)}"

    def blocking_key(self, result):
        """What makes `result` the same mistake as others when it is one that stops the code
        before any rule (a function not implemented, a file that does not load: view.BLOCKING),
        else None: its own text is told in full."""
        from grader.report.causes import BLOCKING, cause_key

        if result.passed or result.result is None:
            return None
        key = cause_key(result.result)
        return key if key is not None and key[0] in (*BLOCKING, "load-error") else None

    def causes_lines(self) -> list[str]:
        """The shared causes of this session's failures ("Fix this first"), as the grader's
        report leads with them: told once at the end, as a summary a test run ends with."""
        from grader.harness.target.loader import display_name
        from grader.harness.judge.world import LESSON_SEED
        from grader.report import pipeline
        from grader.report.render import cause_text

        report = pipeline.report_of(self.results, lang=self.lang,
                                    target=display_name(self.impl), impl=self.impl,
                                    config=self.course_config(), seed=self.seed,
                                    drawn=self.seed != LESSON_SEED, use_history=False)
        lines = []
        for cause in report.causes:
            lines += cause_text(cause, self.lang).splitlines() + [""]
        return lines

    def unjailed_note(self) -> str | None:
        """Where the kernel has no Landlock, what `python -m grader` says once about it
        (grader.cli.unjailed_note); else None."""
        from grader.harness.processes import jail
        from grader.report.messages import text

        return text("ui.unjailed", self.lang) if jail.available() <= 0 else None

    def score_line(self) -> str:
        from grader.report.messages import text

        score = sum(r.score for r in self.results)
        total = sum(r.points for r in self.results)
        passed = sum(r.passed for r in self.results)
        line = (text("ui.score", self.lang, score=score, max_score=total) + "   "
                + text("ui.summary", self.lang, passed=passed,
                       failed=len(self.results) - passed))
        if self.hidden:
            line += "\n" + text("ui.hidden-checks", self.lang, count=len(self.hidden),
                                points=sum(info.points for info in self.hidden))
        return f"lease lab ({self.impl}, --replay {self.seed}): {line}"
