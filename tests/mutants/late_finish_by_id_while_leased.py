"""work_once finishes with an UPDATE of its own by id, as long as the job is still leased.

claim and finish are the reference's, but work_once does not call finish: after send it runs
`UPDATE jobs SET status='done' ... WHERE id = ? AND status = 'leased'`. Whoever holds the job
now (another worker that re-claimed it during the send, the same name restarted), the late
finish lands on that lease; and a job past its deadline is marked done too."""

from _kit import finished_by
from _kit import reference_claim as claim  # noqa: F401  (claim and finish are the reference's)
from _kit import reference_finish as finish  # noqa: F401  (never called here)

EXPECT_FAIL = {"late-finish-lease-taken", "late-finish-same-name", "late-finish-past-deadline",
               "work-once-fresh-clock", "random-timelines"}
EXPECT_TEXT = {"late-finish-lease-taken": "they differ in owner '{A}' / '{B}'"}


work_once = finished_by("UPDATE jobs SET status = 'done', finished_at = :now"
                        " WHERE id = :id AND status = 'leased'")
