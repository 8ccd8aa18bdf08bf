"""finish checks the lease but not the job's deadline: it drops `now < deadline`.

After a correct claim the lease never outlives the deadline, so this looks harmless; but when an
operator moves a deadline earlier while the lease runs on, a finish past the deadline lands."""

from _finish_parts import finish_without
from _kit import reference_claim as claim
from _kit import work_once_with

EXPECT_FAIL = {"finish-at-moved-deadline", "late-finish-past-deadline", "random-timelines"}
EXPECT_TEXT = {"finish-at-moved-deadline": "now < deadline"}

finish = finish_without(":now < deadline")
work_once = work_once_with(claim, finish)
