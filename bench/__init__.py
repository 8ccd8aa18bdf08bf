"""Measuring the grader, not part of it: students and Gradescope never run these.

    python -m bench.grade       # full grades: time, naive vs forced race
    python -m bench.stability   # every target with --repeat N: any verdict that changed
    python bench/batch.py       # batch grading speed-up
    python -m bench.perf        # this checkout against a baseline revision, A/B, as ratios

Run from the repository root (they read solutions/ and tests/mutants/).
"""
