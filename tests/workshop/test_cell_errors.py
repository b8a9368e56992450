"""In a real notebook kernel, the errors a learner meets are one line that says what to do.

Expected, by the issue's rules: the package's ``BadInput`` shows its own line and nothing else; a
name a cell above defines, used first, says to run the cells above; a ``MissingPackage`` says
how to install, and a later name the failed cell would have defined says the same; a
``NameError`` inside a function and every other exception keep their full traceback. Under
``make lab`` the kernel starts with this loaded, so the first cell after a restart says it too.
"""

import os
import re

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

from pp_demo.workshop.lab import kernel_spec  # noqa: E402  (after the skips: needs no Jupyter itself)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
CELLS = [
    "SEED + 1",
    "import pp_demo\nfrom pp_demo import as_batch\nfrom pp_demo.verify.compare import forward_logits\n"
    "ids, mask = as_batch(['left'])",
    "model = None\nforward_logits(model, ids, mask)",
    "print(SEED)",
    "def helper():\n    return undefined_inside\nhelper()",
    "from pp_demo.colossalai import MissingPackage\n"
    "raise MissingPackage('ColossalAI is not installed: `make colossalai`')",
    "FORWARDS",
    "1 / 0",
]


def _errors(monkeypatch, jupyter_path=None):
    """Each cell's error output: (how many traceback lines, the last one without colours)."""
    if jupyter_path is not None:
        monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(jupyter_path), os.environ.get("JUPYTER_PATH", "")]))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in CELLS])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    found = []
    for cell in nb.cells:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        found.append((len(errors[0].traceback), ANSI.sub("", errors[0].traceback[-1])) if errors else None)
    return found


@pytest.fixture(scope="module")
def plain_kernel():
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _errors(monkeypatch)


def test_bad_input_shows_its_one_line(plain_kernel):
    assert plain_kernel[2] == (1, 'BadInput: model must be a model (build_model("llama"), say), got NoneType')


def test_a_name_used_before_its_cell_says_to_run_the_cells_above(plain_kernel):
    assert plain_kernel[3] == (
        1,
        "NameError: name 'SEED' is not defined: run the cells above this one first (after a kernel restart: from "
        "the top)",
    )


def test_a_missing_package_is_one_line_and_later_cells_say_it_again(plain_kernel):
    said = "ColossalAI is not installed: `make colossalai`"
    assert plain_kernel[5] == (1, f"MissingPackage: {said}")
    assert plain_kernel[6] == (1, f"NameError: name 'FORWARDS' is not defined: an earlier cell stopped: {said}")


def test_other_errors_keep_their_traceback(plain_kernel):
    inside, division = plain_kernel[4], plain_kernel[7]
    assert inside[0] > 1 and inside[1] == "NameError: name 'undefined_inside' is not defined"
    assert division[0] > 1 and division[1] == "ZeroDivisionError: division by zero"


def test_before_pp_demo_is_imported_a_plain_kernel_shows_pythons_own_error(plain_kernel):
    # nothing is loaded yet: what `make lab`'s kernel spec is for (next test)
    assert plain_kernel[0][1] == "NameError: name 'SEED' is not defined"


def test_make_labs_kernel_says_it_from_the_first_cell(monkeypatch, tmp_path):
    spec = kernel_spec(tmp_path)
    assert spec.is_file()
    errors = _errors(monkeypatch, tmp_path)
    assert errors[0] == (
        1,
        "NameError: name 'SEED' is not defined: run the cells above this one first (after a kernel restart: from "
        "the top)",
    )


def test_colossalais_absence_is_a_missing_package_of_one_line_without_its_import_chain(monkeypatch):
    from pp_demo.colossalai import MissingPackage, forwards

    def absent(name):
        raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")

    monkeypatch.setattr(forwards, "import_quietly", absent)
    with pytest.raises(MissingPackage) as raised:
        forwards._import_quietly("colossalai.shardformer.modeling.llama")
    assert len(str(raised.value).splitlines()) == 1 and "`make colossalai`" in str(raised.value)
    assert raised.value.__suppress_context__  # no chained traceback of ColossalAI's import
    assert isinstance(raised.value, ImportError)  # callers that catch ImportError still do
