"""claim has no quarantine step at all: a spent or overdue job is never moved to 'quarantined'.

It is simply never selected again (the selection still skips jobs without attempts left or past
their deadline), so it stays 'leased' or 'pending' forever and no operator ever hears of it. The
checks that meet the quarantine rule on their way (a requeue needs a quarantined job first, the
done/quarantined check quarantines a spent job) get the quarantine rule's hint, not their own."""

from _claim_parts import claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"quarantine-before-new-token", "quarantine-past-deadline",
               "skips-done-and-quarantined",
               # stops at its setup: the requeue needs the job quarantined first
               "requeue-token-increases"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline
EXPECT_TEXT = {"requeue-token-increases": "This step is the quarantine rule, met on the way",
               "skips-done-and-quarantined": "Before choosing, claim quarantines a job"}
EXPECT_NO_TEXT = {"requeue-token-increases": "Raise the token stored in the row by 1",
                  "skips-done-and-quarantined": "Claimable means status 'pending'"}
# issue 38: every call is also held to the contract's rules after it (no transaction or
# statement left open, every row as the model makes it), at the domain's sizes
MAY_FAIL |= {'claim-rolls-back-on-error'}

claim = claim_with(quarantine=None)
work_once = work_once_with(claim, finish)
