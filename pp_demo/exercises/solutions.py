"""Reference answers to the notebooks' exercises, keyed like ``pp_demo.exercises``.

Each is part of its exercise's record, beside its judge (``pp_demo.exercises``). They are not
in the notebooks, so the stored notebooks keep their stubs; every one is tested
(``tests/exercises/test_exercises.py``). Try the exercise first.
"""

from pp_demo.exercises import EXERCISES

__all__ = ["SOLUTIONS"]

SOLUTIONS = {key: exercise.solution for key, exercise in EXERCISES.items()}
