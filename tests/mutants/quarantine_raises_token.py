"""claim's quarantine also raises the token (status = 'quarantined', token = token + 1): "a new
generation begins".

Quarantine changes only the status: the token counts claims, and a generation nobody ever held
makes the row say a claim happened that did not."""

from _claim_parts import QUARANTINE, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant: graded here and in drawn worlds, not by the parity and the sweep
EXPECT_FAIL = {"quarantine-before-new-token", "quarantine-past-deadline",
               "requeue-token-increases", "skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"quarantine-before-new-token": "≠ token"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}

claim = claim_with(quarantine=QUARANTINE.replace(
    "SET status = 'quarantined'", "SET status = 'quarantined', token = token + 1"))
work_once = work_once_with(claim, finish)
