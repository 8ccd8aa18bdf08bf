"""finish accepts now <= lease_until: at exactly lease_until the old holder still wins.

The boundary is read the other way from the lesson: the lease is valid only while
now < lease_until, so at now == lease_until both A (finishing) and B (re-claiming) would
believe they hold the job."""

from _kit import reference_claim as claim
from _finish_parts import CONDITIONS, finish_where
from _kit import work_once_with

EXPECT_FAIL = {"finish-at-expiry"}
MAY_FAIL = {"random-timelines"}  # the same bug, met again on a random timeline


finish = finish_where(*(c.replace(":now < lease_until", ":now <= lease_until")
                        for c in CONDITIONS))


work_once = work_once_with(claim, finish)
