"""claim treats a quarantined job as claimable: its selection takes 'quarantined' for 'pending'.

A job an operator quarantined by hand, with attempts to spare and a far deadline, is handed out
again. The report must tell the quarantined job the claim took, not the quarantine of another
job that happened at the same claim."""

from _claim_parts import NOT_VALID, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

LIGHT = True  # a variant of selection_any_status_once_lease_ran_out: the other status

EXPECT_FAIL = {"skips-done-and-quarantined"}
MAY_FAIL = {"random-timelines", "finish-on-quarantined-rejected"}
EXPECT_TEXT = {"skips-done-and-quarantined": "the claim took job {id:3}, which was quarantined"}
EXPECT_NO_TEXT = {"skips-done-and-quarantined": "has used its only attempt"}

claim = claim_with(select=SELECT.replace(
    NOT_VALID, "(status IN ('pending', 'quarantined') OR (status = 'leased' AND lease_until <= :now))"))
work_once = work_once_with(claim, finish)
