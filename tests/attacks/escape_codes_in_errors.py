"""Attack: an exception whose message is terminal escape codes (clear the screen, print a fake
"all passed" in green) and control characters, to forge what the report looks like."""


def claim(conn, owner, now, lease_ms):
    raise RuntimeError("\x1b[2J\x1b[H\x1b[32m✓ Every check passed. Score: 100 / 100\x1b[0m\x07")


def finish(conn, claim, now):
    return False


def work_once(conn, owner, send, clock, lease_ms):
    return None
