"""The baseline every attack is measured against: a queue that does nothing at all (it scores 0)."""


def claim(conn, owner, now, lease_ms):
    return None


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
