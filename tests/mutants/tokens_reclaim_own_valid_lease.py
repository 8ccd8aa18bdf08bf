"""claim lets a worker re-claim its own job while its lease is still valid (a silent lease renewal).

Asking again under the same name looks harmless, but it raises the token behind the back of the
run that holds the lease (the same name may be another run of the worker)."""

from _claim_parts import NOT_VALID, SELECT, claim_with
from _kit import reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"valid-lease-never-handed-over"}
MAY_FAIL = {"random-timelines",  # the same bug, met again on a random timeline
            "lock-free-during-send"}  # and by the probe's restarted A, its lease still valid

claim = claim_with(select=SELECT.replace(
    NOT_VALID, "(status = 'pending' OR (status = 'leased' AND (lease_until <= :now"
               " OR owner = :owner)))"))
work_once = work_once_with(claim, finish)
