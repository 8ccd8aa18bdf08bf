"""A check's timeline drawn as a small sequence diagram (inline SVG) for the HTML report.

Time runs left to right. There is one lane for the queue and one per worker (the `actor` of the
calls, in order of appearance). A claim is an arrow from the queue to the worker, followed by the
lease as a bar from the claim to `lease_until`, labelled with its token; a finish is an arrow back
to the queue ending in ✓ (accepted) or ✗ (rejected). The step a failure is about
(`view.failing_step`) is drawn in the failure colour with a "this step" label; a finish there
whose verdict is the opposite of the expected one says so in words ("accepted, should be
rejected"), never with a ✓ in the failure colour.

The axis is made of moments, not of a time scale: the events are drawn in the order of the
timeline, left to right (x never goes back), and a run of events at the same logical time is one
moment, a shaded band labelled with that time (in ms); a lease end or a deadline at a time no
event has is a moment of its own, a dashed line. The gaps between moments are all alike, whatever
the time between them: 999 / 1000 / 1001 stay apart, "exactly at lease_until" shows as a mark
sitting on the end of the bar, and twenty steps at 0 ms stay inside the "0 ms" band. Every mark
keeps clear of the labels before it in the lanes it crosses, so labels never overlap.

Every string that reaches the SVG is escaped: owners, results and errors come from student code.
Words come from the message catalogue (`html.svg.*`); each mark's tooltip is the full sentence
of the text timeline (`view.event_text`).

Its size on a page is report.css's (`--seq-w` is its width in its own units): ZOOM times larger
where there is room, never smaller than 1.2 times (its smallest label, 10 units, at 12 px); a
narrower screen scrolls it sideways in its frame rather than shrink its labels.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

from markupsafe import Markup, escape

from .messages import text
from .sentences import event_text, failing_step

LEFT = 86        # width of the lane labels
FIRST = 30       # from the lane labels to the first moment
GAP = 44         # between two moments (not to scale)
STEP = 24        # least room between two marks of one moment
NOTE_STEP = 12   # between two notes (✎) in a row
NOTE_RUN = 3     # a run of this many notes in a row is labelled with its count
PAD = 10         # least room between a label and the next mark in its lane
BAND = 12        # a moment's band reaches this far left and right of its marks
TOP = 34         # height of the time axis
LANE_H = 62      # height of one lane (one lease level)
LEVEL_H = 16     # extra height per extra level of overlapping leases in one lane
RIGHT = 16       # room right of the last label
ZOOM = 1.3       # drawn this much larger than its coordinates where there is room
LABEL_MAX = 14   # characters of a lane label before it is cut
SMALL = 10.5     # font size of the labels (report.css: svg.seq .small), for their widths
TICK = 11        # font size of the time labels (svg.seq)

CALLS = ("claim", "finish", "work_once")
QUEUE = object()  # the lane of the queue itself (enqueue, requeue, set-row, note)


def text_width(s: str, size: float = SMALL) -> float:
    """About how wide `s` is drawn at `size` px, erring wide: East Asian wide characters take
    a full em, others 0.62 em (wider than the average Latin letter of a sans-serif)."""
    return sum(size if unicodedata.east_asian_width(ch) in "WF" else 0.62 * size for ch in s)


@dataclass
class _Lane:
    label: str
    y: float = 0.0
    height: float = LANE_H
    levels: list[list[tuple[float, float]]] = field(default_factory=list)

    def level_for(self, start: float, end: float) -> int:
        """The first lease level in this lane free over [start, end] (greedy interval packing)."""
        for n, taken in enumerate(self.levels):
            if all(end < a or start > b for a, b in taken):
                taken.append((start, end))
                return n
        self.levels.append([(start, end)])
        return len(self.levels) - 1


@dataclass
class _Moment:
    """A run of events at one logical time (`events`, indexes into the timeline), or a lease end
    or deadline at a time of its own (no events): drawn from x0 (its first mark) to x1."""
    t: int | None  # None: before any time (what the check prepared)
    events: list[int] = field(default_factory=list)
    x0: float = 0.0
    x1: float = 0.0


def build(events: list[dict], lang: str, *, raised: bool = False,
          expected: str | None = None, check: str | None = None) -> Markup:
    """The SVG for `events` (a check's timeline); empty markup when there is nothing to draw.

    `raised`: the check ended because the failing step raised (result kind 'raised'), so that
    step is labelled as such rather than "did not return". `expected`: what the failing step
    should have returned, as the report shows it ("False"), when the report shows it. `check`:
    the check's title, which the diagram's accessible name carries (a page shows several)."""
    if not any(e.get("op") in CALLS for e in events):
        return Markup("")
    return _Diagram(events, lang, raised, expected, check).svg()


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _cut(s: str, n: int = LABEL_MAX) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


class _Diagram:
    def __init__(self, events: list[dict], lang: str, raised: bool = False,
                 expected: str | None = None, check: str | None = None):
        self.events = events
        self.check = check
        self.lang = lang
        self.failing = failing_step(events)
        self.raised = raised
        self.expected = expected
        self.times = self._event_times()
        self.lanes = self._lanes()
        self.labels = [self._labels(i, e) for i, e in enumerate(events)]
        self.moments = self._moments()
        self.x_of_event = self._place()
        self.bar_end = self._bar_ends()
        self._stack()
        self.parts: list[str] = []

    # -- layout ------------------------------------------------------------------------------
    def _event_times(self) -> list[int | None]:
        """Each event's time; an event without one (enqueue, set-row, note) takes the time of
        the event before it. Those before the first timed event (the check's preparation) keep
        None: a moment of their own, before any time."""
        times, last = [], None
        for e in self.events:
            t = _int(e.get("t"))
            last = t if t is not None else last
            times.append(last)
        return times

    def _lease(self, event: dict) -> tuple[int, int] | None:
        result = event.get("result")
        if event.get("op") != "claim" or not isinstance(result, dict) or "raised" in event:
            return None
        start, until = _int(event.get("t")), _int(result.get("lease_until"))
        return None if start is None or until is None else (start, until)

    @staticmethod
    def _lane_key(event: dict):
        # str(): an owner taken from a student's Claim may be any JSON value, even a list.
        return str(event.get("actor")) if event.get("op") in CALLS else QUEUE

    def _lanes(self) -> dict:
        lanes = {QUEUE: _Lane(text("html.svg.queue", self.lang))}
        for e in self.events:
            key = self._lane_key(e)
            if key not in lanes:
                lanes[key] = _Lane(_cut(key))
        return lanes

    def _moments(self) -> list[_Moment]:
        """The events in order, a new moment whenever the time changes; then a moment of its
        own for each lease end and deadline (up to the latest time) that no event has, before
        the first moment later than it."""
        moments: list[_Moment] = []
        for i, t in enumerate(self.times):
            if not moments or moments[-1].t != t:
                moments.append(_Moment(t))
            moments[-1].events.append(i)
        ends = {lease[1] for e in self.events for lease in [self._lease(e)] if lease}
        latest = max([t for t in self.times if t is not None] + list(ends), default=None)
        self.deadlines = sorted({d for e in self.events if e.get("op") == "enqueue"
                                 for d in [_int(e.get("deadline"))]
                                 if d is not None and latest is not None and d <= latest})
        for t in sorted(ends | set(self.deadlines)):
            if any(m.t == t for m in moments):
                continue
            at = next((k for k, m in enumerate(moments) if m.t is not None and m.t > t),
                      len(moments))
            moments.insert(at, _Moment(t))
        return moments

    def _note_runs(self) -> dict[int, tuple[int, str]]:
        """First event of each run of at least NOTE_RUN notes in one moment -> (its last event,
        the run's label: how many steps, to be read in the list below the diagram)."""
        runs, i = {}, 0
        while i < len(self.events):
            j = i
            while (j + 1 < len(self.events) and self.events[i].get("op") == "note"
                   and self.events[j + 1].get("op") == "note" and self.times[j + 1] == self.times[i]):
                j += 1
            if j - i + 1 >= NOTE_RUN:
                runs[i] = (j, text("html.svg.notes", self.lang, count=j - i + 1))
            i = j + 1
        return runs

    def _crossed(self, i: int) -> list:
        """The lanes event i's mark and arrow cross: from the queue to its own lane for a claim
        or finish, its own lane otherwise."""
        e = self.events[i]
        own = self._lane_key(e)
        if e.get("op") not in ("claim", "finish"):
            return [own]
        keys = list(self.lanes)
        return keys[: keys.index(own) + 1]

    def _labels(self, i: int, e: dict) -> dict:
        """How far right of its mark event i's labels reach, per lane (its own words, measured)."""
        op, own = e.get("op"), self._lane_key(e)
        reach = {key: 5.0 for key in self._crossed(i)}
        if op == "claim":
            words = [(6, self._claim_word(e))]
            if self._lease(e):
                words.append((8, self._lease_word(e)))
            reach[own] = max(dx + text_width(w) for dx, w in words)
        elif op == "finish":
            reach[QUEUE] = 6 + text_width(self._finish_label(e))
            reach[own] = 6 + text_width(self._verdict(i, e))
        elif op == "work_once":
            reach[own] = 10 + text_width(self._work_once_word(e))
        elif op == "note":
            reach[QUEUE] = 7.0
        else:
            reach[QUEUE] = text_width(self._queue_word(e))
        if i == self.failing:
            reach[own] = max(reach[own], text_width(self._this_step(), 10) / 2)
        return reach

    def _place(self) -> list[float]:
        """x of every event, in timeline order: at least STEP (NOTE_STEP between two notes)
        right of the mark before it, GAP right of the moment before, and PAD clear of every
        label already drawn in the lanes its mark and arrow cross."""
        xs = [0.0] * len(self.events)
        free = {key: 0.0 for key in self.lanes}
        tick_free, last = 0.0, None
        self.runs, run_end = self._note_runs(), None
        for m in self.moments:
            start = LEFT + FIRST if last is None else last.x1 + GAP
            x = max(start, tick_free + PAD + BAND)
            for n, i in enumerate(m.events):
                if n and self.events[i].get("op") == self.events[i - 1].get("op") == "note":
                    x = xs[i - 1] + NOTE_STEP  # a row of ✎: the one before it is all there is
                else:
                    if n:
                        x = xs[i - 1] + STEP
                    x = max([x] + [free[key] + PAD + 6 for key in self.labels[i]])
                xs[i] = x
                for key, reach in self.labels[i].items():
                    free[key] = max(free[key], x + reach)
                if i in self.runs:  # the run's label: the mark after the run keeps clear of it
                    run_end = (self.runs[i][0], x + text_width(self.runs[i][1]))
                if run_end and run_end[0] == i:
                    free[QUEUE], run_end = max(free[QUEUE], run_end[1]), None
            m.x0 = xs[m.events[0]] if m.events else x
            m.x1 = xs[m.events[-1]] if m.events else x
            tick_free = self._band_left(m) + text_width(self._tick(m), TICK)
            last = m
        self.width = max([last.x1 + BAND, tick_free, *free.values()]) + RIGHT
        return xs

    def _band_left(self, m: _Moment) -> float:
        return m.x0 - BAND if m.events else m.x0 - 2

    def _tick(self, m: _Moment) -> str:
        return "" if m.t is None else text("html.svg.ms", self.lang, t=m.t)

    def _moment_x(self, t: int, after: int = 0) -> float:
        """x of the moment at time t: the first one from index `after` on, else any."""
        for k in [*range(after, len(self.moments)), *range(after)]:
            if self.moments[k].t == t:
                return self.moments[k].x0
        raise KeyError(t)

    def _bar_ends(self) -> dict[int, float]:
        """x where each claim's lease bar ends (its lease_until moment)."""
        moment_of = {i: k for k, m in enumerate(self.moments) for i in m.events}
        return {i: self._moment_x(lease[1], moment_of[i])
                for i, e in enumerate(self.events) for lease in [self._lease(e)] if lease}

    def _stack(self) -> None:
        """Pack the lease bars into levels (a lane with overlapping leases is taller), then
        stack the lanes."""
        self.bar_level = {}
        for i, end in self.bar_end.items():
            a, b = sorted((self.x_of_event[i], end))
            self.bar_level[i] = self.lanes[self._lane_key(self.events[i])].level_for(a, b)
        y = TOP
        for lane in self.lanes.values():
            lane.y = y
            lane.height = LANE_H + max(len(lane.levels) - 1, 0) * LEVEL_H
            y += lane.height
        self.height = y + 8

    # -- words -------------------------------------------------------------------------------
    def _queue_word(self, e: dict) -> str:
        op, job = e.get("op"), e.get("job")
        if op == "enqueue":
            return _cut(text("html.svg.enqueue", self.lang, job=job), 18)
        if op == "requeue":
            return _cut(text("html.svg.requeue", self.lang, job=job), 18)
        if op == "set-row":
            return _cut(text("html.svg.set-row", self.lang, job=job), 18)
        return ""

    def _claim_word(self, e: dict) -> str:
        word, result = self._outcome(e), e.get("result")
        if word is None and isinstance(result, dict):
            return text("html.svg.claim", self.lang)
        if word is None:
            word = (text("html.svg.claim-none", self.lang) if result is None
                    else _cut(str(result), 18))
        return _cut(word, 18)

    def _lease_word(self, e: dict) -> str:
        return _cut(text("html.svg.lease", self.lang, token=e["result"].get("token")), 22)

    def _finish_label(self, e: dict) -> str:
        token = (e.get("stamp") or {}).get("token")
        return _cut(text("html.svg.finish", self.lang, token=token), 20)

    def _verdict(self, i: int, e: dict) -> str:
        """The finish's verdict: ✓ accepted / ✗ rejected; at the failing step without the mark
        (it is drawn in the failure colour), and in words when it is the opposite of the
        expected verdict."""
        word = self._outcome(e)
        if word is not None:
            return _cut(word, 18)
        result = e.get("result")
        if not isinstance(result, bool):
            return _cut(str(result), 16)
        if i != self.failing:
            return ("✓ " + text("html.svg.accepted", self.lang) if result
                    else "✗ " + text("html.svg.rejected", self.lang))
        if self.expected == str(not result):
            return text("html.svg.accepted-wrongly" if result else "html.svg.rejected-wrongly",
                        self.lang)
        return text("html.svg.accepted" if result else "html.svg.rejected", self.lang)

    def _work_once_word(self, e: dict) -> str:
        result = e.get("result")
        word = self._outcome(e) or (
            text("html.svg.nothing", self.lang) if result is None else _cut(str(result), 12))
        return _cut(text("html.svg.work-once", self.lang, result=word), 24)

    def _this_step(self) -> str:
        return "▲ " + text("html.svg.this-step", self.lang)

    # -- drawing -----------------------------------------------------------------------------
    def add(self, template: str, **values) -> None:
        """Append one SVG element; every value is escaped."""
        self.parts.append(template.format(**{k: escape(v) for k, v in values.items()}))

    def svg(self) -> Markup:
        self._axis()
        for i, e in enumerate(self.events):
            self._event(i, e)
        label = (text("html.svg.label-of", self.lang, check=self.check) if self.check
                 else text("html.svg.label", self.lang))
        # --seq-w, its width in its own units: report.css keeps it from shrinking below 1.2
        # times that (its smallest label, 10 units, at 12 px) and lets a narrower screen scroll it
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="seq" role="img" '
                f'viewBox="0 0 {self.width:.0f} {self.height:.0f}" width="{self.width * ZOOM:.0f}" '
                f'height="{self.height * ZOOM:.0f}" style="--seq-w:{self.width:.0f}px" '
                f'aria-label="{escape(label)}">')
        # One image to a screen reader, named by `label`: the marks inside are hidden from it
        # (each mark's <title> is the sentence of a step, which the list below the diagram
        # reads out already), and are still a pointer's tooltips.
        return Markup(head + f"<title>{escape(label)}</title>" + '<g aria-hidden="true">'
                      + "".join(self.parts) + "</g></svg>")

    def _axis(self) -> None:
        bottom = self.height - 8
        for m in self.moments:  # behind everything: the bands, then the lanes on top
            if m.t is None:
                continue  # before any time: no band, no time
            if m.events:
                left = self._band_left(m)
                self.add('<rect class="moment" x="{x}" y="{y}" width="{w}" height="{h}" rx="4"/>',
                         x=f"{left:.0f}", y=TOP - 6, w=f"{m.x1 + BAND - left:.0f}",
                         h=f"{bottom - TOP + 6:.0f}")
            else:
                self.add('<line class="grid" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}"/>',
                         x=f"{m.x0:.0f}", y1=TOP - 6, y2=f"{bottom:.0f}")
            self.add('<text class="tick" x="{x}" y="16">{t}</text>',
                     x=f"{self._band_left(m) + 2:.0f}", t=self._tick(m))
        for lane in self.lanes.values():
            self.add('<text class="lane" x="6" y="{y}">{label}</text>',
                     y=f"{lane.y + 22:.0f}", label=lane.label)
            self.add('<line class="lifeline" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>',
                     x1=LEFT - 4, x2=f"{self.width - 8:.0f}", y=f"{lane.y + 30:.0f}")
        for d in self.deadlines:
            x = self._moment_x(d)
            self.add('<line class="deadline" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}"/>',
                     x=f"{x:.0f}", y1=TOP - 6, y2=f"{bottom:.0f}")
            self.add('<text class="deadline-label" x="{x}" y="30">{label}</text>',
                     x=f"{x + 3:.0f}", label=text("html.svg.deadline", self.lang))

    def _event(self, i: int, e: dict) -> None:
        op = e.get("op")
        x = self.x_of_event[i]
        lane = self.lanes[self._lane_key(e)]
        mid = lane.y + 30
        failing = i == self.failing
        cls = " failing" if failing else ""
        self.parts.append(f'<g class="ev {escape(op)}{cls}" data-x="{x:.0f}">')
        self.add("<title>{tip}</title>", tip=event_text(e, self.lang))
        if op in CALLS:
            getattr(self, f"_{op}")(i, e, x, lane, mid)
        else:
            shape = "✎" if op == "note" else "◆"
            self.add('<text class="qmark" x="{x}" y="{y}">{shape}</text>',
                     x=f"{x:.0f}", y=f"{mid + 5:.0f}", shape=shape)
            label = self._queue_word(e)
            if label:
                self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                         x=f"{x:.0f}", y=f"{mid - 10:.0f}", label=label)
            if i in self.runs:
                self.add('<text class="small notes" x="{x}" y="{y}">{label}</text>',
                         x=f"{x - 4:.0f}", y=f"{mid + 18:.0f}", label=self.runs[i][1])
        if failing:
            self.add('<circle class="halo" cx="{x}" cy="{y}" r="11"/>', x=f"{x:.0f}", y=f"{mid:.0f}")
            self.add('<text class="this-step" x="{x}" y="{y}">{label}</text>',
                     x=f"{x:.0f}", y=f"{lane.y + lane.height - 2:.0f}", label=self._this_step())
        self.parts.append("</g>")

    def _outcome(self, e: dict) -> str | None:
        """A short word for a call that raised or did not return; None when it returned."""
        failed_here = self.raised and self.failing is not None and e is self.events[self.failing]
        if "raised" in e or (failed_here and "result" not in e):
            return text("html.svg.raised", self.lang)
        if "result" not in e:
            return text("timeline.pending", self.lang)
        return None

    def _arrow(self, x: float, y1: float, y2: float, dashed: bool = False) -> None:
        head = 6 if y2 > y1 else -6
        self.add('<line class="msg{dash}" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}"/>',
                 dash=" dashed" if dashed else "", x=f"{x:.0f}", y1=f"{y1:.0f}",
                 y2=f"{y2 - head:.0f}")
        self.add('<path class="head" d="M{xl} {yb} L{x} {y2} L{xr} {yb} Z"/>',
                 xl=f"{x - 4:.0f}", xr=f"{x + 4:.0f}", x=f"{x:.0f}", y2=f"{y2:.0f}",
                 yb=f"{y2 - head:.0f}")

    def _claim(self, i: int, e: dict, x: float, lane: _Lane, mid: float) -> None:
        queue_mid = self.lanes[QUEUE].y + 30
        self._arrow(x, queue_mid + 6, mid - 7)
        got_one = self._outcome(e) is None and isinstance(e.get("result"), dict)
        if got_one and i in self.bar_level:
            a, b = sorted((x, self.bar_end[i]))
            y = mid - 5 + self.bar_level[i] * LEVEL_H
            self.add('<rect class="lease" x="{x}" y="{y}" width="{w}" height="10" rx="3"/>',
                     x=f"{a:.0f}", y=f"{y:.0f}", w=f"{max(b - a, 4):.0f}")
            self.add('<text class="small lease-label" x="{x}" y="{y}">{label}</text>',
                     x=f"{x + 8:.0f}", y=f"{y + 20:.0f}", label=self._lease_word(e))
        self.add('<circle class="dot{open}" cx="{x}" cy="{y}" r="4"/>',
                 open="" if got_one else " open", x=f"{x:.0f}", y=f"{mid:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{mid - 10:.0f}", label=self._claim_word(e))

    def _finish(self, i: int, e: dict, x: float, lane: _Lane, mid: float) -> None:
        queue_mid = self.lanes[QUEUE].y + 30
        self._arrow(x, mid - 7, queue_mid + 8, dashed=e.get("result") is not True)
        self.add('<rect class="finish-mark" x="{x}" y="{y}" width="8" height="8"/>',
                 x=f"{x - 4:.0f}", y=f"{mid - 4:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{queue_mid + 18:.0f}", label=self._finish_label(e))
        self.add('<text class="small verdict" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{mid - 10:.0f}", label=self._verdict(i, e))

    def _work_once(self, i: int, e: dict, x: float, lane: _Lane, mid: float) -> None:
        self.add('<rect class="work" x="{x}" y="{y}" width="16" height="16" rx="3"/>',
                 x=f"{x - 8:.0f}", y=f"{mid - 8:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 10:.0f}", y=f"{mid - 10:.0f}", label=self._work_once_word(e))
