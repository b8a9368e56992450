"""The main job takes the core's door: ``reproduce`` runs each pipeline through
``pp_demo.core.pipeline_logits``, whose plan checks each input once per run and looks the rule and
the family up once; its logits stay on their device until compared; the code it runs lies in at most
16 of the package's files; and no command but an instrument's own imports an instrument or a record.
"""

import json
import subprocess
import sys

import pytest
import torch

from pp_demo import core
from pp_demo.cli import main
from pp_demo.verify.compare import REPRO_FAMILIES, reproduce_runs

MOST_FILES = 16  # 31 files ran code in `reproduce` when it went through the ranks' runner

# The default `reproduce`: each family of the reproduction with the rule of its ColossalAI 0.5.0
# forward (count, for all three) and with the fix: 6 pipeline runs.
RUNS = 2 * len(REPRO_FAMILIES)

# A fresh interpreter runs `python -m pp_demo ARGS` for each ARGS in turn (one interpreter: torch
# is imported once), the first under a profiler: the package's files whose functions, class bodies or
# comprehensions ran (a module's top level alone is an import, not a call), and per command the
# instrument and record modules imported by then.
_PROFILED = """
import json, runpy, sys
ran, loaded = set(), {}

def profile(frame, event, arg):
    code = frame.f_code
    if event == "call" and "/pp_demo/" in code.co_filename and code.co_name != "<module>":
        ran.add(code.co_filename.rsplit("/pp_demo/", 1)[1])

for i, argv in enumerate(json.loads(sys.argv[1])):
    sys.argv = ["pp_demo", *argv]
    sys.setprofile(profile if i == 0 else None)
    try:
        runpy.run_module("pp_demo", run_name="__main__")
    except SystemExit:
        pass
    sys.setprofile(None)
    parts = (["pp_demo", "instruments"], ["pp_demo", "records"])
    loaded[argv[0]] = sorted(m for m in sys.modules if m.split(".")[:2] in parts)
print(json.dumps({"ran": sorted(ran), "loaded": loaded}))
"""


def _run(*commands: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _PROFILED, json.dumps(commands)], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_reproduce_runs_code_in_at_most_16_files_and_no_learners_command_imports_an_instrument():
    found = _run(
        ["reproduce"],
        ["families", "--family", "llama", "--cases", "left"],
        ["check", "pp_demo.ranks.in_process:fixed_pipeline", "--lengths", "5", "--batch-sizes", "2"],
        ["doctor"],
    )
    assert "core.py" in found["ran"] and "verify/compare.py" in found["ran"]  # the profiler saw the job at all
    assert len(found["ran"]) <= MOST_FILES, found["ran"]
    assert not [f for f in found["ran"] if f.startswith(("ranks/in_process", "ranks/jobs", "ranks/runner"))]
    # the modules each command had imported, the commands before it included
    assert found["loaded"] == {"reproduce": [], "families": [], "check": [], "doctor": []}


def test_importing_the_package_and_its_command_line_imports_no_instrument():
    code = "import json, sys, pp_demo, pp_demo.cli; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    modules = json.loads(done.stdout)
    assert [m for m in modules if m.startswith(("pp_demo.instruments", "pp_demo.records"))] == []


def _counting(real, name, counted):
    def counting(*args, **kwargs):
        counted[name] += 1
        return real(*args, **kwargs)

    return counting


@pytest.fixture
def calls(monkeypatch):
    """How often each of the core's checks and look-ups ran, counted where the core calls them."""
    counted = {}
    for name in ("get_rule", "family_of", "check_split_points", "check_batch", "micro_batches"):
        counted[name] = 0

        monkeypatch.setattr(core, name, _counting(getattr(core, name), name, counted))
    return counted


def test_each_check_and_look_up_runs_once_per_pipeline_run_of_reproduce(calls, capsys):
    assert main(["reproduce"]) == 0
    assert "row matches model.forward: [False, True]" in capsys.readouterr().out
    assert calls == dict.fromkeys(calls, RUNS)


def test_the_logits_stay_on_their_device_until_compared(monkeypatch):
    moved = []
    real = torch.Tensor.cpu
    monkeypatch.setattr(torch.Tensor, "cpu", lambda self, *a, **k: moved.append(self.shape) or real(self, *a, **k))
    compared = reproduce_runs([("llama", "count"), ("llama", "rightmost_non_pad")])
    assert [c.matches for c in compared] == [[False, True], [True, True]]  # the review table's rows
    assert moved == []  # no .cpu() between the stages and the comparison
