"""A Claim's fields have exact types: id, qty, token, attempt and lease_until are `int` (a bool
is not an int, 1000.0 is not 1000), owner is `str`. Checked wherever a Claim comes back from the
code under grade: in the Lab, in the race and crash children, in the integration workers."""

from __future__ import annotations

from lab.store import Claim

from grader.harness.wire import CLAIM_FIELDS

MAX_SHOWN = 200  # characters of a field's repr kept in a report


def wrong_field(claim: Claim) -> dict | None:
    """The first field whose type is not exactly the contract's, as plain data ({"field",
    "value", "type", "wanted"}); None when every field is right."""
    for name, wanted in CLAIM_FIELDS:
        value = getattr(claim, name, None)
        if type(value) is not wanted:
            return {"field": name, "value": shown(value), "type": type(value).__name__,
                    "wanted": wanted.__name__}
    return None


def shown(value) -> str:
    """repr(value), bounded, never raising (a value from the code under grade)."""
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"
