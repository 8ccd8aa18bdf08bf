"""A Claim's fields are checked for their exact types wherever a Claim comes back."""

from __future__ import annotations

import dataclasses

import pytest

from lab.store import Claim

from grader.harness.judge import children
from grader.harness.judge.claimtypes import shown, wrong_field
from grader.harness.wire.values import decode_value, encode_value


def over_the_wire(value):
    """What the judge gets for `value` returned in the target process."""
    return decode_value(encode_value(value))


RIGHT = Claim(id=1, qty=5, owner="A", token=1, attempt=1, lease_until=1000)


@pytest.mark.parametrize("field, value, type_name, wanted", [
    ("lease_until", 1000.0, "float", "int"), ("attempt", True, "bool", "int"),
    ("id", "1", "str", "int"), ("owner", b"A", "bytes", "str"), ("token", None, "NoneType", "int"),
])
def test_each_wrong_field_is_named(field, value, type_name, wanted):
    claim = dataclasses.replace(RIGHT, **{field: value})
    assert wrong_field(claim) == {"field": field, "value": repr(value), "type": type_name,
                                  "wanted": wanted}
    outcome = children.claim_outcome(over_the_wire(claim))  # as a claimer's claim comes back
    assert outcome["kind"] == "wrong-field-type" and outcome["field"] == field


def test_right_claim_passes():
    assert wrong_field(RIGHT) is None
    assert children.claim_outcome(over_the_wire(RIGHT))["kind"] == "claim"


def test_shown_is_bounded_and_never_raises():
    class Nasty:
        def __repr__(self):
            raise RuntimeError("no")

    assert shown(Nasty()) == "<Nasty>"
    assert len(shown("x" * 10_000)) <= 201
