"""JUnit XML (`python -m grader --junit PATH`): what GitLab, Jenkins and the GitHub test-report
actions read.

`<testsuites>` holding one `<testsuite name="lease-lab">` (tests, failures, errors, skipped,
time) and, in its `<properties>`, the `seed` the grade's worlds were drawn from (`--replay SEED`
grades it again), one `<testcase>` per check: `name` the check id, `classname` "lease-lab.<rule family>"
(the check module, e.g. lease-lab.boundaries), `time` in seconds, and `<properties>` title,
points ("3/4 pt" as the terminal shows it), score (points earned), max_score and outcome. A
failed check has `<failure type="failed" message="its first line">` holding its whole text as
the terminal shows it, without colours; one that errored, timed out or is not implemented has
`<error type="errored|timed_out|not_implemented">` instead. A check a shared cause explains
says so in one line ("See: <the mistake>"); the suite's `<system-out>` leads with the causes,
as the terminal does (grader.report.render.causes_text).

Student text (errors, values, owners) can hold anything: ElementTree escapes markup (`]]>`
included), and the characters XML 1.0 forbids (most control characters, lone surrogates) are
removed first, with ANSI escapes.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from grader.checkdef import all_checks, family
from grader.results import Outcome
from .render import causes_text, check_text, first_line
from .sentences import plain
from .view import CheckView, ReportView

SUITE = "lease-lab"
#: Characters XML 1.0 does not allow, whatever the escaping.
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def clean(s: str) -> str:
    """`s` as XML 1.0 can hold it: no ANSI escapes, no forbidden characters."""
    return NOT_XML.sub("", plain(s))


def from_view(report: ReportView) -> str:
    """The XML document (UTF-8 declared, final newline)."""
    families = {cid: family(info.module) for cid, info in all_checks().items()}
    failures = sum(c.outcome == Outcome.FAILED for c in report.checks)
    counts = {"tests": str(len(report.checks)), "failures": str(failures),
              "errors": str(report.failed - failures), "time": _seconds(report.duration)}
    suites = ET.Element("testsuites", name=SUITE, **counts)
    suite = ET.SubElement(suites, "testsuite", name=SUITE, skipped="0", **counts)
    if report.seed is not None:  # the seed whose worlds the grade ran in: --replay SEED replays it
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="seed",
                      value=str(report.seed))
    for c in report.checks:
        suite.append(testcase(c, report.lang, families.get(c.id)))
    if report.failed:
        ET.SubElement(suite, "system-out").text = clean(causes_text(report, report.lang))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, "unicode") + "\n"


def testcase(c: CheckView, lang: str, rule_family: str | None) -> ET.Element:
    """One check as a `<testcase>`."""
    classname = f"{SUITE}.{rule_family}" if rule_family else SUITE
    case = ET.Element("testcase", name=c.id, classname=classname, time=_seconds(c.duration))
    properties = ET.SubElement(case, "properties")
    for name, value in (("title", c.title), ("points", c.points), ("score", c.score),
                        ("max_score", c.max_score), ("outcome", c.outcome)):
        ET.SubElement(properties, "property", name=name, value=clean(str(value)))
    if not c.passed:
        tag = "failure" if c.outcome == Outcome.FAILED else "error"
        verdict = ET.SubElement(case, tag, message=clean(first_line(c, lang)), type=c.outcome)
        verdict.text = clean(check_text(c, lang))
    return case


def _seconds(duration: float) -> str:
    return f"{duration:.3f}"
