"""A listing is the source at most 88 columns wide, and the same code: it parses to the same tree,
its docstrings word for word."""

import ast
import inspect
import textwrap

import pytest

from pp_demo import core
from pp_demo.figures.listing import WIDTH, listing

# what the notebooks print (01, 02, 03, 07)
PRINTED = [
    core.count_minus_one,
    core.first_pad_minus_one,
    core.first_pad_minus_one_wrapped,
    core.rightmost_non_pad,
    core.known_lengths,
    core.FirstStage.forward,
    core.MiddleStage.forward,
    core.LastStage.forward,
]
EVERY = [v for v in vars(core).values() if inspect.isfunction(v) and v.__module__ == core.__name__]


def _tree(source: str) -> str:
    """The code's tree, each docstring's words joined by single spaces."""
    tree = ast.parse(textwrap.dedent(source))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            node.value = " ".join(node.value.split())
    return ast.dump(tree)


@pytest.mark.parametrize("function", PRINTED, ids=lambda f: f.__qualname__)
def test_what_the_notebooks_print_fits_and_is_the_same_code(function):
    shown = listing(function)
    assert max(len(line) for line in shown.splitlines()) <= WIDTH
    assert _tree(shown) == _tree(inspect.getsource(function))


@pytest.mark.parametrize("function", EVERY, ids=lambda f: f.__name__)
def test_every_function_of_the_core_lists_as_the_same_code(function):
    assert _tree(listing(function)) == _tree(inspect.getsource(function))


def test_a_source_already_narrow_is_shown_as_it_is():
    assert listing(core.get_case, width=200) == textwrap.dedent(inspect.getsource(core.get_case)).rstrip("\n")


def test_a_long_call_breaks_inside_its_bracket_then_at_its_commas():
    def wide(model):
        return model.forward(input_ids=model.ids, attention_mask=model.mask, output_hidden_states=True)

    shown = listing(wide, width=60).splitlines()
    assert shown[1:] == [
        "    return model.forward(",
        "        input_ids=model.ids,",
        "        attention_mask=model.mask,",
        "        output_hidden_states=True,",
        "    )",
    ]
