"""work_once finishes with an UPDATE of its own that checks the whole stamp, the lease and the
deadline, but not the status.

claim and finish are the reference's; after send, work_once marks the job done itself when the
row still holds its stamp and both the lease and the deadline remain. If the operator quarantined
the job while the send waited (the lease still running, the stamp unchanged), the late finish
marks a quarantined job done: only `status = 'leased'` tells it apart. No hand-picked check takes
a job back during send without another claim after it (finish-on-quarantined-rejected calls
finish, not work_once): the random timelines' late ones do."""

from _kit import finished_by
from _kit import reference_claim as claim  # noqa: F401  (claim and finish are the reference's)
from _kit import reference_finish as finish  # noqa: F401  (never called here)

EXPECT_FAIL = {"random-timelines"}
EXPECT_TEXT = {"random-timelines": "the grader sets job {id:1}: status=quarantined"}


work_once = finished_by("UPDATE jobs SET status = 'done', finished_at = :now"
                        " WHERE id = :id AND owner = :owner AND token = :token"
                        " AND attempts = :attempt AND lease_until = :lease_until"
                        " AND :now < lease_until AND :now < deadline")
