"""The lab's package: the job store (store.py, provided) and the lease queue you write (queue.py).

Not empty on purpose: SQLite writes a database into any empty file it is asked to open, so no
file the package ships is empty (tests/test_hostile_rounds.py holds it).
"""
