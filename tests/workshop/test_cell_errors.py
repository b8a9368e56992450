"""In a real notebook kernel, the errors a learner meets are one line that says what to do.

Expected, by the issue's rules: the package's ``BadInput`` shows its own line and nothing else; a
name a cell above defines, used first, says to run the cells above; a ``MissingPackage`` says
how to install, and a later name the failed cell would have defined says the same; a
``NameError`` inside a function and every other exception keep their full traceback. Under
``make lab`` the kernel starts with this loaded, so the first cell after a restart says it too.
"""

import os
import re
from pathlib import Path

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
    "model2 = 1\nprint(modle2)",
    "pritn('hello')",
    "raise NameError('my own message')",
    "def outer():\n    return inner()\n\n\ndef inner():\n    return as_batch(['no_such_case'])\n\n\nouter()",
    "from pp_demo.errors import BadInput\nraise BadInput('')",
    "raise BadInput('the first line\\nthe second line')",
]


def _errors(monkeypatch, jupyter_path=None, cells=CELLS, whole=False):
    """Each cell's error output: (how many traceback lines, the last one without colours); with
    ``whole``, every line of it, without colours."""
    if jupyter_path is not None:
        monkeypatch.setenv("JUPYTER_PATH", os.pathsep.join([str(jupyter_path), os.environ.get("JUPYTER_PATH", "")]))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in cells])
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True).execute()
    found = []
    for cell in nb.cells:
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if whole:
            found.append([ANSI.sub("", line) for line in errors[0].traceback] if errors else None)
        else:
            found.append((len(errors[0].traceback), ANSI.sub("", errors[0].traceback[-1])) if errors else None)
    return found


@pytest.fixture(scope="module")
def plain_kernel():
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _errors(monkeypatch, whole=True)


@pytest.fixture(scope="module")
def plain_kernel_last(plain_kernel):
    """(how many traceback lines, the last one) per cell."""
    return [(len(lines), lines[-1]) if lines else None for lines in plain_kernel]


def test_bad_input_shows_its_one_line(plain_kernel_last):
    assert plain_kernel_last[2] == (1, 'BadInput: model must be a model (build_model("llama"), say), got NoneType')


def test_a_name_used_before_its_cell_says_to_run_the_cells_above(plain_kernel_last):
    assert plain_kernel_last[3] == (
        1,
        "NameError: name 'SEED' is not defined: run the cells above this one first (after a kernel restart: from "
        "the top)",
    )


def test_a_missing_package_is_one_line_and_later_cells_say_it_again(plain_kernel_last):
    said = "ColossalAI is not installed: `make colossalai`"
    assert plain_kernel_last[5] == (1, f"MissingPackage: {said}")
    assert plain_kernel_last[6] == (1, f"NameError: name 'FORWARDS' is not defined: an earlier cell stopped: {said}")


def test_other_errors_keep_their_traceback(plain_kernel_last):
    inside, division = plain_kernel_last[4], plain_kernel_last[7]
    assert inside[0] > 1 and inside[1] == "NameError: name 'undefined_inside' is not defined"
    assert division[0] > 1 and division[1] == "ZeroDivisionError: division by zero"


def test_before_pp_demo_is_imported_a_plain_kernel_last_shows_pythons_own_error(plain_kernel_last):
    # nothing is loaded yet: what `make lab`'s kernel spec is for (next test)
    assert plain_kernel_last[0][1] == "NameError: name 'SEED' is not defined"


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


def test_a_typo_shows_the_failing_line_and_the_name_it_is_close_to(plain_kernel):
    typo, builtin = plain_kernel[8], plain_kernel[9]
    assert typo[-1] == (
        "NameError: name 'modle2' is not defined: a typo? did you mean 'model2'? "
        "(no cell of this notebook defines 'modle2')"
    )
    assert any("print(modle2)" in line for line in typo[:-1])  # the line that failed
    assert builtin[-1].startswith("NameError: name 'pritn' is not defined: a typo? did you mean 'print'?")
    assert any("pritn('hello')" in line for line in builtin[:-1])
    assert "run the cells above" not in "".join(typo + builtin)


def test_a_name_error_the_learner_raises_gets_no_hint(plain_kernel):
    own = plain_kernel[10]
    assert own[-1] == "NameError: my own message" and len(own) > 1


def test_a_bad_input_deep_in_the_learners_functions_keeps_their_frames(plain_kernel):
    lines = plain_kernel[11]
    assert lines[-1] == (
        "BadInput: unknown padding case 'no_such_case'; known cases: left, right, left_pad_in_content, "
        "right_pad_in_content, unpadded, all_pad, trailing_eos"
    )
    text = "\n".join(lines[:-1])
    assert "return inner()" in text and "return as_batch(['no_such_case'])" in text  # theirs
    assert "pp_demo/" not in text and "site-packages" not in text  # not the library's


def test_an_empty_or_two_line_bad_input_is_shown_whole(plain_kernel_last):
    assert plain_kernel_last[12] == (1, "BadInput: (raised with an empty message: no reason was given)")
    assert plain_kernel_last[13] == (1, "BadInput: the first line\nthe second line")


NOTEBOOK_06 = Path(__file__).resolve().parents[2] / "notebooks" / "06_colossalai.ipynb"


def test_notebook_06_without_colossalai_says_so_in_one_line_in_its_cells_7_and_8(monkeypatch, tmp_path):
    """ColossalAI made unimportable for the kernel: a package of that name that fails as a missing one."""
    (tmp_path / "colossalai").mkdir()
    (tmp_path / "colossalai" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'colossalai'\", name='colossalai')\n"
    )
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    code = [cell.source for cell in nbformat.read(NOTEBOOK_06, as_version=4).cells if cell.cell_type == "code"]
    assert "FORWARDS[family]" in code[6] and "compare_family(family)" in code[7]  # the cells the issue names
    found = _errors(monkeypatch, cells=code[:8])
    assert found[0][0] == 1 and found[0][1].startswith("MissingPackage: ColossalAI is not installed")
    for seventh_or_eighth in found[6:8]:
        assert seventh_or_eighth[0] == 1
        assert seventh_or_eighth[1].startswith(
            "NameError: name 'FORWARDS' is not defined: an earlier cell stopped: ColossalAI is not installed"
        )
