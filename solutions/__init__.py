"""The reference implementation of the lab (queue.py): read it after you have tried the lab.

Not empty on purpose: SQLite writes a database into any empty file it is asked to open, so no
file the package ships is empty (tests/test_hostile_rounds.py holds it).
"""
