"""Reference answers to the notebooks' exercises, keyed like ``pp_demo.exercises``.

Each answer is part of its exercise's record, filed beside its judge in the notebook's module
(``nb01`` ... ``nb10``), with why it is right and the common wrong answers; here they are by key.
They are not in the notebooks, so the stored notebooks keep their stubs, and every one is
tested (``tests/exercises/test_exercises.py``). Try the exercise before you look.
"""

from pp_demo.exercises import EXERCISES

__all__ = ["SOLUTIONS"]

SOLUTIONS = {key: exercise.solution for key, exercise in EXERCISES.items()}
