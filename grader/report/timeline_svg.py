"""A check's timeline drawn as a small sequence diagram (inline SVG) for the HTML report.

Time runs left to right on the logical clock (ms). There is one lane for the queue and one per
worker (the `actor` of the calls, in order of appearance). A claim is an arrow from the queue to
the worker, followed by the lease as a bar from the claim time to `lease_until`, labelled with its
token; a finish is an arrow back to the queue ending in ✓ (accepted) or ✗ (rejected). The step a
failure is about (`view.failing_step`) is drawn in the failure colour with a "this step" label.

The axis is ordinal: every distinct time (event times, lease ends, a deadline in range) gets a
column of its own, labelled in ms, so that 999 / 1000 / 1001 stay apart and "exactly at
lease_until" shows as a mark sitting on the end of the bar. Spacing is by order, not to scale.

Every string that reaches the SVG is escaped: owners, results and errors come from student code.
Words come from the message catalogue (`html.svg.*`); each mark's tooltip is the full sentence
of the text timeline (`view.event_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from markupsafe import Markup, escape

from .messages import text
from .view import event_text, failing_step

LEFT = 86        # width of the lane labels
COL_W = 150      # width of one time column
SUB_W = 40       # extra room when one lane has several marks at the same time
TOP = 34         # height of the time axis
LANE_H = 62      # height of one lane (one lease level)
LEVEL_H = 16     # extra height per extra level of overlapping leases in one lane
RIGHT = 110      # room for the labels right of the last column
FIRST = 34       # from the lane labels to the first column
ZOOM = 1.3       # drawn this much larger than its coordinates where there is room
LABEL_MAX = 14   # characters of a lane label before it is cut

CALLS = ("claim", "finish", "work_once")
QUEUE = object()  # the lane of the queue itself (enqueue, requeue, set-row, note)


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


def build(events: list[dict], lang: str, *, raised: bool = False) -> Markup:
    """The SVG for `events` (a check's timeline); empty markup when there is nothing to draw.

    `raised`: the check ended because the failing step raised (result kind 'raised'), so that
    step is labelled as such rather than "did not return"."""
    if not any(e.get("op") in CALLS for e in events):
        return Markup("")
    return _Diagram(events, lang, raised).svg()


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _cut(s: str, n: int = LABEL_MAX) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


class _Diagram:
    def __init__(self, events: list[dict], lang: str, raised: bool = False):
        self.events = events
        self.lang = lang
        self.failing = failing_step(events)
        self.raised = raised
        self.times = self._event_times()
        self.columns = self._columns()
        self.lanes = self._lanes()
        self.x_of_event = self._place()
        self.parts: list[str] = []

    # -- layout ------------------------------------------------------------------------------
    def _event_times(self) -> list[int | None]:
        """Each event's time; an event without one (enqueue, set-row, note) takes the time of
        the event before it, or of the first timed event when it comes first."""
        own = [_int(e.get("t")) for e in self.events]
        first = next((t for t in own if t is not None), 0)
        times, last = [], first
        for t in own:
            last = t if t is not None else last
            times.append(last)
        return times

    def _lease(self, event: dict) -> tuple[int, int] | None:
        result = event.get("result")
        if event.get("op") != "claim" or not isinstance(result, dict) or "raised" in event:
            return None
        start, until = _int(event.get("t")), _int(result.get("lease_until"))
        return None if start is None or until is None else (start, until)

    def _columns(self) -> dict[int, float]:
        """Time -> x of its column; a column is wider when one lane has several marks in it."""
        keys = set(self.times)
        for e in self.events:
            lease = self._lease(e)
            if lease:
                keys.add(lease[1])
        latest = max(keys)
        self.deadlines = sorted({d for e in self.events if e.get("op") == "enqueue"
                                 for d in [_int(e.get("deadline"))] if d is not None and d <= latest})
        keys.update(self.deadlines)
        crowd: dict[tuple, int] = {}
        for i, e in enumerate(self.events):
            lane = self._lane_key(e)
            crowd[(self.times[i], lane)] = crowd.get((self.times[i], lane), 0) + 1
        columns, x = {}, LEFT + FIRST
        for t in sorted(keys):
            columns[t] = x
            extra = max([n for (ct, _), n in crowd.items() if ct == t], default=1) - 1
            last = x + extra * SUB_W
            x = last + COL_W
        self.width = last + RIGHT
        return columns

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
        # Lease levels decide each worker lane's height, so pack them before stacking lanes.
        self.bar_level = {}
        for i, e in enumerate(self.events):
            lease = self._lease(e)
            if lease:
                a, b = self.columns[lease[0]], self.columns[lease[1]]
                self.bar_level[i] = lanes[self._lane_key(e)].level_for(min(a, b), max(a, b))
        y = TOP
        for lane in lanes.values():
            lane.y = y
            lane.height = LANE_H + max(len(lane.levels) - 1, 0) * LEVEL_H
            y += lane.height
        self.height = y + 8
        return lanes

    def _place(self) -> list[float]:
        """x of every event: its time's column, moved right for each earlier mark of its lane there."""
        seen: dict[tuple, int] = {}
        xs = []
        for i, e in enumerate(self.events):
            key = (self.times[i], self._lane_key(e))
            n = seen.get(key, 0)
            seen[key] = n + 1
            xs.append(self.columns[self.times[i]] + n * SUB_W)
        return xs

    # -- drawing -----------------------------------------------------------------------------
    def add(self, template: str, **values) -> None:
        """Append one SVG element; every value is escaped."""
        self.parts.append(template.format(**{k: escape(v) for k, v in values.items()}))

    def svg(self) -> Markup:
        self._axis()
        for i, e in enumerate(self.events):
            self._event(i, e)
        label = text("html.svg.label", self.lang)
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="seq" role="img" '
                f'viewBox="0 0 {self.width:.0f} {self.height:.0f}" width="{self.width * ZOOM:.0f}" '
                f'height="{self.height * ZOOM:.0f}" style="max-width:100%;height:auto;'
                f'min-width:min({self.width:.0f}px,17rem)" aria-label="{escape(label)}">')
        return Markup(head + f"<title>{escape(label)}</title>" + "".join(self.parts) + "</svg>")

    def _axis(self) -> None:
        bottom = self.height - 8
        for lane in self.lanes.values():
            self.add('<text class="lane" x="6" y="{y}">{label}</text>',
                     y=f"{lane.y + 22:.0f}", label=lane.label)
            self.add('<line class="lifeline" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}"/>',
                     x1=LEFT - 4, x2=f"{self.width - 8:.0f}", y=f"{lane.y + 30:.0f}")
        for t, x in self.columns.items():
            self.add('<line class="grid" x1="{x}" y1="{y1}" x2="{x}" y2="{y2}"/>',
                     x=f"{x:.0f}", y1=TOP - 6, y2=f"{bottom:.0f}")
            self.add('<text class="tick" x="{x}" y="16">{t}</text>',
                     x=f"{x:.0f}", t=text("html.svg.ms", self.lang, t=t))
        for d in self.deadlines:
            x = self.columns[d]
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
        self.parts.append(f'<g class="ev {escape(op)}{cls}">')
        self.add("<title>{tip}</title>", tip=event_text(e, self.lang))
        if op in CALLS:
            getattr(self, f"_{op}")(i, e, x, lane, mid)
        else:
            label = {"enqueue": text("html.svg.enqueue", self.lang, job=e.get("job")),
                     "requeue": text("html.svg.requeue", self.lang, job=e.get("job")),
                     "set-row": text("html.svg.set-row", self.lang, job=e.get("job"))}.get(op, "")
            shape = "✎" if op == "note" else "◆"
            self.add('<text class="qmark" x="{x}" y="{y}">{shape}</text>',
                     x=f"{x:.0f}", y=f"{mid + 5:.0f}", shape=shape)
            if label:
                self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                         x=f"{x:.0f}", y=f"{mid - 10:.0f}", label=_cut(label, 18))
        if failing:
            self.add('<circle class="halo" cx="{x}" cy="{y}" r="11"/>', x=f"{x:.0f}", y=f"{mid:.0f}")
            self.add('<text class="this-step" x="{x}" y="{y}">▲ {label}</text>',
                     x=f"{x:.0f}", y=f"{lane.y + lane.height - 2:.0f}",
                     label=text("html.svg.this-step", self.lang))
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
        result = e.get("result")
        word = self._outcome(e)
        if word is None and isinstance(result, dict):
            token = result.get("token")
            if i in self.bar_level:
                start, until = self._lease(e)
                a, b = sorted((self.columns[start], self.columns[until]))
                y = mid - 5 + self.bar_level[i] * LEVEL_H
                self.add('<rect class="lease" x="{x}" y="{y}" width="{w}" height="10" rx="3"/>',
                         x=f"{a:.0f}", y=f"{y:.0f}", w=f"{max(b - a, 4):.0f}")
                self.add('<text class="small lease-label" x="{x}" y="{y}">{label}</text>',
                         x=f"{a + 8:.0f}", y=f"{y + 20:.0f}",
                         label=_cut(text("html.svg.lease", self.lang, token=token), 22))
            self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                     x=f"{x + 6:.0f}", y=f"{mid - 10:.0f}", label=text("html.svg.claim", self.lang))
            self.add('<circle class="dot" cx="{x}" cy="{y}" r="4"/>', x=f"{x:.0f}", y=f"{mid:.0f}")
            return
        if word is None:
            word = (text("html.svg.claim-none", self.lang) if result is None
                    else _cut(str(result), 18))
        self.add('<circle class="dot open" cx="{x}" cy="{y}" r="4"/>', x=f"{x:.0f}", y=f"{mid:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{mid - 10:.0f}", label=_cut(word, 18))

    def _finish(self, i: int, e: dict, x: float, lane: _Lane, mid: float) -> None:
        queue_mid = self.lanes[QUEUE].y + 30
        result = e.get("result")
        word = self._outcome(e)
        if word is None:
            word = {True: "✓ " + text("html.svg.accepted", self.lang),
                    False: "✗ " + text("html.svg.rejected", self.lang)}.get(result) \
                if isinstance(result, bool) else _cut(str(result), 16)
        self._arrow(x, mid - 7, queue_mid + 8, dashed=result is not True)
        token = (e.get("stamp") or {}).get("token")
        self.add('<rect class="finish-mark" x="{x}" y="{y}" width="8" height="8"/>',
                 x=f"{x - 4:.0f}", y=f"{mid - 4:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{queue_mid + 18:.0f}",
                 label=_cut(text("html.svg.finish", self.lang, token=token), 20))
        self.add('<text class="small verdict" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 6:.0f}", y=f"{mid - 10:.0f}", label=_cut(word, 18))

    def _work_once(self, i: int, e: dict, x: float, lane: _Lane, mid: float) -> None:
        result = e.get("result")
        word = self._outcome(e) or (
            text("html.svg.nothing", self.lang) if result is None else _cut(str(result), 12))
        self.add('<rect class="work" x="{x}" y="{y}" width="16" height="16" rx="3"/>',
                 x=f"{x - 8:.0f}", y=f"{mid - 8:.0f}")
        self.add('<text class="small" x="{x}" y="{y}">{label}</text>',
                 x=f"{x + 10:.0f}", y=f"{mid - 10:.0f}",
                 label=_cut(text("html.svg.work-once", self.lang, result=word), 24))
