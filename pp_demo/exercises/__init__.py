"""Exercise checkers: the workbook's one convention for exercises.

In a notebook an exercise is two cells. The first holds a stub the reader fills in::

    answer = ...                      # a value to predict
    def my_rule(input_ids, pad_token_id):
        return ...                    # an expression to write

The second calls ``check("01.1", my_rule)``, which prints exactly one status (``not attempted
yet``, ``correct``, or ``not yet: ...`` with a counterexample, wrapped at words in lines of at most
80 characters, so JupyterLab never cuts a word), returns
nothing (so the cell shows only that line) and never raises, so a notebook stored with
its stubs unfilled runs top to bottom and passes strict nbval. ``status`` returns the
same text without printing. Reference answers: ``pp_demo.exercises.solutions``.

The machinery is in ``core``; each notebook's exercises are in their own module
(``nb01`` ... ``nb13``), one record each, registered when this package is imported. An
exercise whose answer is a function refuses calls into the library that already implements
it (``refusals``): the point is to write it.
"""

from . import nb01, nb02, nb03, nb04, nb05, nb06, nb07, nb08, nb09, nb10, nb11, nb12, nb13  # noqa: F401  (they register)
from .core import EXERCISES, Exercise, NotAttempted, WrongAnswer, check, register, status
from .nb07 import mystery_07  # the expression notebook 07 asks its reader to classify

__all__ = ["Exercise", "WrongAnswer", "EXERCISES", "check", "status", "register", "NotAttempted", "mystery_07"]
