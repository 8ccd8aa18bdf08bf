"""claim stores the owner cut to 64 characters (`owner[:64]`, "the column is VARCHAR(64)").

SQLite's TEXT has no width, and the contract stores owner=owner: a longer name is stored as
another name, the Claim says that one, and its holder's stamp no longer matches. Found by a
blind set written from the contract alone: the longest name drawn was exactly 64 characters;
it is now 100."""

from _kit import reference_claim, reference_finish as finish
from _kit import work_once_with

EXPECT_FAIL = {"random-timelines"}


def claim(conn, owner, now, lease_ms):
    return reference_claim(conn, owner[:64], now, lease_ms)


work_once = work_once_with(claim, finish)
