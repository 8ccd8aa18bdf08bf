import os
import sys

#: The oldest Python pyproject.toml's requires-python allows. An older one, running the grader
#: from a checkout (pip refuses to install it there), is refused here with one line, before any
#: of the grader is read: it could not grade right (3.9 scored the reference 0, blaming the code).
OLDEST_PYTHON = (3, 10)

if sys.version_info < OLDEST_PYTHON:
    print("grader: the lease lab needs Python %d.%d or newer; this is Python %s (%s)"
          % (OLDEST_PYTHON + (sys.version.split()[0], sys.executable)), file=sys.stderr)
    sys.exit(2)


def _start_zygote_early(argv: list[str]) -> None:
    """A grade (no command: the first argument is an option, or there is none) starts the
    zygote before the grader is imported, so that its interpreter starts meanwhile, on another
    core (grader.runner.prepare would start it a tenth of a second later); on the portable path
    (no zygote there: grader.harness.processes.portable) it starts the two spare target servers
    the preflight's target process and the lesson's first check's take (both judged in this
    process: grader.runner.spawned), for the same reason. Nothing else does (a command starts
    what it needs; --help needs none)."""
    if (argv and not argv[0].startswith("-")) or "-h" in argv or "--help" in argv:
        return
    from grader.harness.processes import launch, portable, zygote

    if portable.forkless():
        portable.start_spare(env=launch.scrubbed(os.environ), count=2)
    else:
        zygote.start()


if __name__ == "__main__":
    from .report import console

    for _stream in (sys.stdout, sys.stderr):  # any console: ASCII stand-ins, never an error
        console.adapt(_stream)
    _start_zygote_early(sys.argv[1:])

from .cli import main  # noqa: E402  (after the zygote's start, on purpose)

if __name__ == "__main__":
    try:
        code = main()
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m grader ... | head`: the reader has gone, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    sys.exit(code)
