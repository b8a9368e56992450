"""``python -m pp_demo gpu-check`` (``make gpu-check``): every GPU path, once, where a GPU is.

No CI machine has a GPU, so the CUDA and NCCL paths are run by a person on the first GPU box
they meet. Each step is a command of this tree run in a child process with its own timeout
(a hang fails one step, never the check); the reproduction and the family table are run a
second time on the CPU and must print the same verdicts. The check installs nothing: it runs
in whatever environment it is started in, and says which step cannot run there and why.

A box used only to run the notebooks under nbval is a fair GPU box: the doctor's missing
JupyterLab is reported in its note, not failed. A failed step's record keeps its first error
whole (nbval's first failing cell, or the first traceback), since the tail of a notebook run
shows only the NameErrors of the cells after the one that failed. The real-size reproduction
and the pipeline's speed against ``model.forward`` keep their printed lines in the record.
"""

import argparse
import contextlib
import io
import os
import platform
import re
import signal
import subprocess
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from pp_demo.deepspeed import missing as deepspeed_missing
from pp_demo.errors import BadInput
from pp_demo.output_paths import NOTEBOOKS, output_path, write_json
from pp_demo.silent_imports import installed
from pp_demo.workshop.platform_checks import FAIL, SKIP, env_with_path, package_version

__all__ = ["Step", "Outcome", "visible_gpus", "plan", "run_step", "results_record", "run_check"]

# Strict nbval, as the Makefile's NBVAL spells it (tests/workshop/test_gpu_check.py keeps the two equal).
_STRICT = "--nbval --nbval-current-env --nbval-sanitize-with notebooks/sanitize.cfg --nbval-cell-timeout 120"
NBVAL = tuple(_STRICT.split())
NOT_ON_CUDA = {"06_colossalai.ipynb": "its ColossalAI forwards run on the CPU"}
# A notebook whose stored outputs were made with an optional package installed: without it, its
# first cell prints another line and strict nbval would fail a notebook that is fine.
# Each row: the package, how to install it, and whether it is there (DeepSpeed's own door, which
# finds it beside the venv too, where `make deepspeed` puts it).
NEEDS_PACKAGE = {"11_deepspeed.ipynb": ("deepspeed", "make deepspeed", lambda: deepspeed_missing() is None)}
PASS, TIMEOUT = "pass", "timeout"  # with platform_checks' FAIL and SKIP, a step's status


@dataclass(frozen=True)
class Step:
    """One command of the check: ``argv`` after the Python interpreter, its own timeout, and,
    for a step whose verdicts must not depend on the device, the same job on the CPU."""

    name: str
    argv: tuple[str, ...]
    timeout_s: int
    cpu_twin: tuple[str, ...] | None = None
    skip: str | None = None  # why it does not run here; None: it runs
    needs_gpus: int = 1
    reported: tuple[str, ...] = ()  # a FAIL line naming one of these checks is reported in the note, not failed
    keep_lines: bool = False  # its printed lines are the record's figures: keep them, passed or not


@dataclass(frozen=True)
class Outcome:
    name: str
    command: str
    timeout_s: int
    verdict: str
    note: str = ""
    seconds: float | None = None
    output_tail: list[str] = field(default_factory=list)
    first_error: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def visible_gpus() -> list[str]:
    """The names of the CUDA GPUs this torch sees; none without torch or a working driver."""
    try:
        import torch
    except ImportError:
        return []
    with warnings.catch_warnings(action="ignore"):  # an old or broken driver warns, then answers False
        if not torch.cuda.is_available():
            return []
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def _job(*words: str) -> tuple[str, ...]:
    return ("-m", "pp_demo", *words)


def _pp_demo_steps() -> list[Step]:
    reproduce_on_cpu, families_on_cpu = _job("reproduce", "--device", "cpu"), _job("families", "--device", "cpu")
    # fmt: off
    return [
        Step("doctor", _job("doctor"), 180, reported=("jupyterlab",)),
        Step("reproduce, in process, cuda", _job("reproduce", "--device", "cuda"), 120, reproduce_on_cpu),
        Step("reproduce --distributed, 2 ranks", _job("reproduce", "--distributed", "--device", "cuda"), 180,
             reproduce_on_cpu, needs_gpus=2),
        Step("families, cuda", _job("families", "--device", "cuda"), 240, families_on_cpu),
        *(Step(f"ColossalAI engine, NCCL, {dtype}", _job("colossalai-engine", "--backend", "nccl", "--dtype", dtype),
               300, needs_gpus=2) for dtype in ("bf16", "fp16")),
        Step("real size, cuda, bf16", _job("real-size", "--device", "cuda", "--size", "real", "--dtype", "bf16"), 600,
             keep_lines=True),
        Step("pipeline speed, cuda, bf16", _job("pipeline-speed", "--device", "cuda", "--dtype", "bf16"), 600,
             keep_lines=True),
    ]
    # fmt: on


def _notebook_steps(root: Path) -> list[Step]:
    folder = root / NOTEBOOKS
    notebooks = sorted(folder.glob("[0-9]*.ipynb")) if folder.is_dir() else []
    if not notebooks:
        return [Step("notebooks", (), 0, skip=f"no notebooks/ folder in {root} (--checkout)")]
    nbval = None if installed("nbval") else "nbval is not installed in this environment"
    argv = ("-m", "pytest", "-q", *NBVAL)
    return [
        Step(
            f"nbval {n.stem}",
            (*argv, f"notebooks/{n.name}"),
            240,
            None,
            NOT_ON_CUDA.get(n.name, nbval or _missing(n.name)),
        )
        for n in notebooks
    ]


def _missing(notebook: str) -> str | None:
    """Why ``notebook`` cannot run here: the optional package its stored outputs need is absent."""
    if notebook not in NEEDS_PACKAGE:
        return None
    package, how, present = NEEDS_PACKAGE[notebook]
    return None if present() else f"{package} is not installed in this environment ({how})"


def _why_not(step: Step, n_gpus: int, parser: argparse.ArgumentParser) -> str | None:
    if step.skip or step.argv[:2] != ("-m", "pp_demo"):
        return step.skip
    # Does this tree's parser know the job and its options? Parsed only, nothing runs: a job another
    # branch adds is "not available" until merged. ``cuda`` is read as ``cpu``: the parser refuses
    # cuda where there is none, and whether the device works is the step's own question.
    known = [("cpu" if word == "cuda" else word) for word in step.argv[2:]]  # after "-m pp_demo"
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            parser.parse_args(known)
        except SystemExit:
            return "not available in this tree"
    if "colossalai-engine" in step.argv and not installed("colossalai"):
        return "ColossalAI is not installed in this environment (make colossalai)"
    return f"needs {step.needs_gpus} GPUs" if step.needs_gpus > n_gpus else None


def plan(n_gpus: int, parser: argparse.ArgumentParser, root: Path = Path(".")) -> list[Step]:
    """Every step, each with why it is skipped on a machine with ``n_gpus`` GPUs;
    ``parser``, ``python -m pp_demo``'s, says which jobs this tree has; ``root`` is the
    checkout whose notebooks are run."""
    return [replace(s, skip=_why_not(s, n_gpus, parser)) for s in (*_pp_demo_steps(), *_notebook_steps(root))]


def command_text(argv: tuple[str, ...]) -> str:
    return " ".join(("python", *argv)) if argv else "-"


def _clean(text: str, root: Path) -> str:
    """No machine paths or terminal colours in the record."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    return text.replace(str(root.resolve()), ".").replace(sys.prefix, "<env>").replace(str(Path.home()), "~")


def _run(argv: tuple[str, ...], timeout_s: int, root: Path) -> tuple[int | None, str]:
    """``(exit code, stdout and stderr)``; code None when it ran past ``timeout_s``. The child
    gets a session of its own, so a timeout stops the ranks it spawned too."""
    child = subprocess.Popen(
        [sys.executable, *argv],
        cwd=root,
        env=env_with_path(root.resolve()),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = child.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        output, _ = child.communicate()
        return None, output
    return child.returncode, output


def _verdict_lines(output: str) -> list[str]:
    """The lines that carry verdicts: the reproduction's and the family table's."""
    from pp_demo.pooling.padding_table import RIGHT, WRONG

    return [line for line in output.splitlines() if "row matches" in line or RIGHT in line or WRONG in line]


def _compare_with_cpu(step: Step, output: str, root: Path) -> tuple[str, str]:
    assert step.cpu_twin is not None
    code, cpu_output = _run(step.cpu_twin, step.timeout_s, root)
    if code != 0:
        return FAIL, "its CPU twin failed: " + command_text(step.cpu_twin)
    on_gpu, on_cpu = _verdict_lines(output), _verdict_lines(cpu_output)
    if on_gpu != on_cpu:
        first = next((g for g, c in zip(on_gpu, on_cpu, strict=False) if g != c), "a line is missing")
        return FAIL, f"verdicts differ from the CPU run, first: {first.strip()}"
    return PASS, f"the CPU run's {len(on_gpu)} verdict lines"


FIRST_ERROR_LINES = 120  # a long traceback is cut here: the exception's line is kept
_FAILURE_HEADER = re.compile(r"^_{3,} .+ _{3,}$")  # pytest's (nbval's) header above each failure


def first_error(output: str) -> list[str]:
    """The first error of ``output`` whole: pytest's first failure block (under nbval the failing
    cell, its traceback and exception), else the first traceback to its exception line; [] when none."""
    lines = output.splitlines()
    starts = [i for i, line in enumerate(lines) if _FAILURE_HEADER.match(line)]
    if starts:
        end = next((i for i in range(starts[0] + 1, len(lines)) if lines[i].startswith(("____", "====="))), len(lines))
        block = lines[starts[0] : end]
    elif "Traceback (most recent call last):" in lines:
        start = lines.index("Traceback (most recent call last):")
        # the exception's line: the first after the traceback's frames that is not indented
        end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()), len(lines) - 1)
        block = lines[start : end + 1]
    else:
        return []
    if len(block) > FIRST_ERROR_LINES:  # keep its start and its end: where it was, and what was raised
        half = FIRST_ERROR_LINES // 2
        block = [*block[:half], f"... {len(block) - 2 * half} lines left out ...", *block[-half:]]
    return block


def _judge_exit(step: Step, code: int, output: str) -> tuple[str, str]:
    """A failed exit, unless every FAIL line names a check the step only reports (the note says which)."""
    failed = [line[len(FAIL) :].strip() for line in output.splitlines() if line.startswith(f"{FAIL} ")]
    reported = [line for line in failed if line.split(":", 1)[0] in step.reported]
    if not failed or reported != failed:
        return FAIL, f"exit {code}"
    # "jupyterlab: not installed in this environment (<env>): run ..." -> its check and what it found
    said = "; ".join(line.split(" (", 1)[0].split(": run", 1)[0] for line in reported)
    return PASS, f"reported, not failed: {said}"


def run_step(step: Step, root: Path = Path(".")) -> Outcome:
    """Run one step (and its CPU twin); its verdict, and the output's tail when it did not pass."""
    if step.skip:
        return Outcome(step.name, command_text(step.argv), step.timeout_s, SKIP, step.skip)
    started = time.monotonic()
    code, output = _run(step.argv, step.timeout_s, root)
    if code is None:
        verdict, note = TIMEOUT, f"stopped after {step.timeout_s} s"
    elif code != 0:
        verdict, note = _judge_exit(step, code, output)
    elif step.cpu_twin is not None:
        verdict, note = _compare_with_cpu(step, output, root)
    else:
        verdict, note = PASS, ""
    if "--distributed" in step.argv:  # what its two ranks use here, by the pipeline's own rule: "nccl on cuda"
        from pp_demo.ranks.on_rank import backend_and_device

        backend, device, _ = backend_and_device(0, 2)
        note = f"ranks: {backend} on {device.type}; {note}"
    cleaned = _clean(output, root)
    tail = [] if verdict == PASS else cleaned.splitlines()[-15:]
    error = [] if verdict == PASS else first_error(cleaned)
    lines = cleaned.splitlines()[:200] if step.keep_lines else []
    seconds = round(time.monotonic() - started, 1)
    return Outcome(step.name, command_text(step.argv), step.timeout_s, verdict, note, seconds, tail, error, lines)


def results_record(gpus: list[str], outcomes: list[Outcome]) -> dict[str, Any]:
    """What ``results/gpu_check.json`` holds: the GPUs, the versions, each step's verdict."""
    import torch

    nccl = torch.cuda.nccl.version() if torch.cuda.is_available() else None
    versions = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "nccl": ".".join(map(str, nccl)) if isinstance(nccl, tuple) else nccl,
        **{name: package_version(name) for name in ("transformers", "colossalai", "nbval", "pp_demo")},
    }
    return {
        "gpus": gpus,
        "versions": versions,
        "passed": all(o.verdict in (PASS, SKIP) for o in outcomes),
        "steps": [asdict(o) for o in outcomes],
    }


def format_table(outcomes: list[Outcome]) -> str:
    width = max(len(o.name) for o in outcomes)
    lines = [f"{'step':<{width}}  {'verdict':<7}  note"]
    lines += [f"{o.name:<{width}}  {o.verdict:<7}  {o.note}".rstrip() for o in outcomes]
    return "\n".join(lines)


def run_check(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """The check: 0 when every step passed or was skipped (or there is no GPU), else 1;
    ``parser`` as in ``plan``."""
    checkout = Path(args.checkout)
    if not checkout.is_dir():  # every step runs in it: refused before any is listed or started
        raise BadInput(f"--checkout {checkout}: no such folder (the workbook's checkout, where every step runs)")
    gpus = visible_gpus()
    if args.dry_run:
        here = f"on this machine ({len(gpus)} GPU{'s' if len(gpus) > 1 else ''})"
        print(f"{here if gpus else 'this machine sees no CUDA GPU; on a box with 2 GPUs'} the check would run:")
        for step in plan(len(gpus) or 2, parser, Path(args.checkout)):
            what = f"skip: {step.skip}" if step.skip else f"timeout {step.timeout_s} s"
            print(f"  {step.name} ({what})\n      {command_text(step.argv)}")
        return 0
    if not gpus:
        print("gpu-check: this torch sees no CUDA GPU, so there is nothing to check here (nothing written)")
        return 0
    out = output_path(args.out or "results/gpu_check.json", "gpu_check.json")  # before minutes of steps, not after
    steps = plan(len(gpus), parser, Path(args.checkout))
    print(f"gpu-check on {len(gpus)} x {gpus[0]}: {len(steps)} steps, each with its own timeout", flush=True)
    outcomes = []
    for number, step in enumerate(steps, 1):
        if not step.skip:
            print(f"[{number}/{len(steps)}] {step.name}", flush=True)
        outcomes.append(run_step(step, Path(args.checkout)))
    print(format_table(outcomes))
    record = results_record(gpus, outcomes)
    write_json(out, record)
    print(f"wrote {out}")
    return 0 if record["passed"] else 1
