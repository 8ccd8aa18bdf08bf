"""What goes wrong with a target process, as the judge tells it: the proxy closed after a
protocol error, the process's end, a timeout, a load error, a hung function's refused call, a
refused request; and `SendFailed`, which a judge-side send or clock raises. Split from
target_client (issue 40), which re-exports every name here.

May import: the standard library.
"""

from __future__ import annotations

import signal


class TargetProcessError(Exception):
    """The target process cannot be believed or used any more (the proxy is closed)."""


class ProtocolError(TargetProcessError):
    """The target process sent something the protocol does not allow."""


class TargetEnded(TargetProcessError):
    """The target process ended (exited or was killed) while the judge waited for it."""

    def __init__(self, returncode: int | None, during: str | None):
        self.returncode = returncode
        self.during = during
        self.signal = (signal_name(-returncode)
                       if returncode is not None and returncode < 0 else None)
        self.code = returncode if returncode is not None and returncode >= 0 else None
        how = f"signal {self.signal}" if self.signal else f"exit code {self.code}"
        super().__init__(f"the target process ended ({how}) during {during or 'start-up'}")


class TargetTimeout(TargetProcessError):
    """The target did not answer within the safety-net timeout; it has been killed."""

    def __init__(self, timeout: float, during: str | None):
        self.timeout = timeout
        self.during = during
        super().__init__(f"no answer within {timeout:g} s during {during or 'start-up'}")


class TargetLoadError(TargetProcessError):
    """The target could not be loaded (what grader.harness.target.loader.TargetError says)."""

    def __init__(self, kind: str, params: dict):
        super().__init__(kind, params)
        self.kind = kind
        self.params = params


class TargetClosed(TargetProcessError):
    """The proxy was closed (explicitly, or after an error above)."""


class FunctionHung(TargetProcessError):
    """A call of a function this grade already saw hang (`TargetProcess(hung=...)`): it is not
    made; the proxy stays open. The check stops there, not graded (grader.runner's probe)."""

    def __init__(self, function: str):
        super().__init__(f"{function} hung when the grader first called it: not called again")
        self.function = function


class RequestRefused(TargetProcessError):
    """The target server refused a request of the judge's (an unknown connection name)."""


class SendFailed(Exception):
    """Raise this from a judge-side send/clock: the target raises its own SendFailed(message).
    A subclass that is also a ConnectionError or TimeoutError makes the target's one also that
    builtin (what the network would raise: code that catches only those catches it)."""


def signal_name(number: int) -> str:
    """SIGKILL for 9, and so on; on a platform whose `signal` lacks it (Windows has no SIGKILL,
    yet a target the judge killed is told as killed by it: portable.SpawnedTarget), its POSIX
    name, or "signal N"."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return {9: "SIGKILL"}.get(number, f"signal {number}")


def restated(exc: BaseException, timeout: float, op: str) -> BaseException:
    """An error met in a call nested inside the code's `op` (a function of the code's, called by
    SQLite), as that call meets it: the call it was made in timed out, or the target ended
    during it; anything else as it is."""
    if isinstance(exc, TargetTimeout):
        return TargetTimeout(timeout, op)
    if isinstance(exc, TargetEnded):
        return TargetEnded(exc.returncode, op)
    return exc
