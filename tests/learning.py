"""What a dishonest student learns from the grader's own reports, and the submissions built
from it (tests/attacks/learned_answers.py): shared by the attack tests of every mode."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import ROOT, run_grader

ATTACKS = ROOT / "tests" / "attacks"
#: What is learned: every hand-written check. The random timelines show only their shrunk
#: failing timeline, never the others' answers.
LEARNED_CHECKS = "not random-timelines"
KEYS = ("call", "check")


def learn(folder: Path) -> list[dict]:
    """Grade tests/attacks/_recorder.py (the reference, writing down every call: arguments,
    jobs table before and after, result, and whatever could name the check) at the lesson's
    seed, as a local run does: the calls, one dict each."""
    log = folder / "log"
    log.mkdir(parents=True)
    proc = run_grader("--impl", str(ATTACKS / "_recorder.py"), "-k", LEARNED_CHECKS,
                      env={"LEASELAB_ATTACK_DIR": str(log), "LEASELAB_EXTRA_WRITABLE": str(log)})
    assert proc.returncode in (0, 1), proc.stderr
    calls = [json.loads(line) for line in
             (log / "calls.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(calls) > 100, "the recorder did not run"
    return calls


def table(calls: list[dict], key: str) -> dict[str, dict]:
    """The learned table as learned_answers.py looks it up (KEY = `key`)."""
    learned = {}
    for c in calls:
        s = c["signals"]
        k = [c["fn"], c["args"], c["before"]] if key == "call" else \
            [c["fn"], s["env"], s["argv"], s["db"], s["n"]]
        learned[json.dumps(k)] = {"result": c["result"], "after": c["after"]}
    return learned


def learned_submission(calls: list[dict], key: str) -> dict[str, str]:
    """The submission's files: queue.py (learned_answers.py keyed by `key`) and its table."""
    source = (ATTACKS / "learned_answers.py").read_text(encoding="utf-8")
    keyed = source.replace('\nKEY = "call"', f'\nKEY = "{key}"')
    assert keyed != source or key == "call"
    return {"queue.py": keyed, "learned_answers.json": json.dumps(table(calls, key))}


def trick_off(attack: str, flag: str) -> str:
    """The source of tests/attacks/<attack>.py with its trick (the module constant `flag`)
    switched off: its honest counterpart, the same queue without the trick."""
    source = (ATTACKS / f"{attack}.py").read_text(encoding="utf-8")
    honest = source.replace(f"\n{flag} = True", f"\n{flag} = False")
    assert honest != source, f"{attack}.py sets no {flag} = True"
    return honest


def honest_second_claimer() -> str:
    """second_claimer.py without its trick."""
    return trick_off("second_claimer", "ROLE_TRICK")


def write(folder: Path, files: dict[str, str]) -> Path:
    """The submission's files in `folder`; its queue.py."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder / "queue.py"
