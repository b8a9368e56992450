"""``python -m pp_demo doctor`` (``make doctor``): the preflight an attendee runs before a workshop.

One line per check: ``ok``, ``WARN`` (it works, with the consequence stated), ``FAIL`` (with the
exact fix) or ``skip`` (it needs something that failed above); exit 1 on any FAIL. Standard library
only, so it runs, and says what is missing, on a laptop without torch. Whatever needs torch runs in
a child process with a time bound: a broken or hanging install is reported, never inherited or
waited on.
"""

from __future__ import annotations  # the doctor runs on an old Python too, to say which to install

import argparse
import importlib.metadata
import json
import re
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pp_demo.output_paths import NOTEBOOKS
from pp_demo.silent_imports import installed
from pp_demo.workshop import platform_checks
from pp_demo.workshop.platform_checks import FAIL, OK, SKIP, WARN

__all__ = ["Check", "read_pins", "run_checks", "add_doctor_options", "run_doctor", "main"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # pp_demo/, in a checkout or in site-packages
# In the checkout (``--checkout``, default: .), never beside the package: an installed one has none
# around it.
PINS = Path("constraints") / "pinned.txt"
SETUP = "run `make setup` (conda: `conda env create -f environment.yml`, see the README)"
REQUIRED = ("torch", "transformers", "jupyterlab", "nbval")
RANKS_TIMEOUT_S = 60
TORCH_CHECKS = ("two ranks (gloo, 127.0.0.1)", "quiet imports", "reproduction")  # skipped without torch
PROBE_TIMEOUT_S = 120
# The reproduction the probe runs (llama, the count rule, 2 stages in one process) and the line it
# must print. The doctor says only whether it printed it: a set-up step tells no verdict.
EXPECTED_REPRODUCTION = "row matches model.forward: [False, True]"
_REPRODUCTION_RAN = "a two-stage pipeline and model.forward ran on a padded batch"
# What the notebooks import from pp_demo; notebook 06 also imports ColossalAI (quietly).
NOTEBOOK_MODULES = (
    "pp_demo.cli",
    "pp_demo.verify.checker.judge",
    "pp_demo.exercises",
    "pp_demo.figures.pooling",
    "pp_demo.verify.family_matrix",
    "pp_demo.verify.onnx_export",
    "pp_demo.pooling.packed",
    "pp_demo.pooling.survey",
    "pp_demo.workshop.tokenizer",
    "pp_demo.training.loop",
    "pp_demo.colossalai.forwards",
)


@dataclass(frozen=True)
class Check:
    status: str
    name: str
    detail: str

    def line(self) -> str:
        return f"{self.status:<5} {self.name}: {self.detail}"


def read_pins(path: Path = PINS) -> dict[str, str]:
    """``{name: version}`` of the ``name==version`` lines; comments, markers, hashes ignored."""
    pin = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?\s*==\s*([^\s;#\\]+)")
    found = (pin.match(line) for line in path.read_text().splitlines())
    return {_normal(match[1]): match[3] for match in found if match}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# Where a newer Python comes from where `python3` is usually too old (Apple's command-line tools: 3.9)
NEWER_PYTHON = {
    "darwin": " (macOS: `brew install python@3.12`, then `make setup PYTHON=python3.12`; or python.org's installer)"
}


def check_python(version_info: tuple[Any, ...] = sys.version_info, platform: str = sys.platform) -> Check:
    version = ".".join(map(str, version_info[:3]))
    if tuple(version_info[:2]) < (3, 11):
        fix = "install Python 3.11, 3.12 or 3.13 and run `make setup` with it" + NEWER_PYTHON.get(platform, "")
        return Check(FAIL, "python", f"{version} is too old: {fix}")
    if tuple(version_info[:2]) > (3, 13):
        return Check(WARN, "python", f"{version}: the lock is resolved and tested for 3.11-3.13 only")
    return Check(OK, "python", f"{version} ({sys.executable})")


def check_checkout(checkout: Path) -> Check:
    """``--checkout`` names the workbook's folder: its pins and notebooks are read from there."""
    fix = "run from the workbook's folder (the one with notebooks/), or give --checkout PATH to it"
    if not checkout.exists():
        return Check(FAIL, "checkout", f"{checkout} does not exist: {fix}")
    if not checkout.is_dir():
        return Check(FAIL, "checkout", f"{checkout} is a file, not a folder: {fix}")
    if not (checkout / PINS).is_file() and not (checkout / NOTEBOOKS).is_dir():
        empty = f"{checkout} holds no {PINS.as_posix()} nor {NOTEBOOKS}/"
        return Check(WARN, "checkout", f"{empty}: not checked against the pins; {fix}")
    return Check(OK, "checkout", str(checkout))


def check_torch_build() -> Check:
    """CPU, CUDA or MPS build, against a visible GPU; asked only where torch is installed."""
    version, requires = importlib.metadata.version("torch"), importlib.metadata.requires("torch") or []
    kept = platform_checks.torch_kept(Path(str(importlib.metadata.distribution("torch").locate_file(""))))
    return Check(*platform_checks.torch_build_check(version, requires, platform_checks.visible_gpu(), kept=kept))


def check_package(name: str, pins: dict[str, str]) -> Check:
    found = platform_checks.package_version(name)
    if found is None:
        return Check(FAIL, name, f"not installed in this environment ({sys.prefix}): {SETUP}")
    pinned = pins.get(_normal(name))
    if pinned is None or found.split("+")[0] == pinned:
        return Check(OK, name, found)
    if name == "torch":  # a GPU box's own torch is fine anywhere in the range CI tests
        tested = platform_checks.tested_torch_range()
        if platform_checks.torch_in_tested_range(found):
            return Check(OK, name, f"{found}, pinned {pinned}, within the tested range {tested}")
        why = f"outside the tested range {tested} (below 2.11 two-rank training fails)"
        return Check(WARN, name, f"{found}, pinned {pinned}: {why}; `make setup` installs the pin")
    why = {"transformers": "the reproduction's stored outputs assume it"}.get(name, "other versions are untested here")
    return Check(WARN, name, f"{found}, pinned {pinned}: {why}; `make setup` installs the pins")


def check_colossalai() -> Check:
    if not installed("colossalai"):
        # ColossalAI 0.5.0's sdist refuses to build on win32 (docs/install.md): no fix to offer there
        fix = "`make colossalai` installs it"
        if sys.platform == "win32":
            fix = "it cannot install on native Windows (WSL2 can)"
        return Check(WARN, "colossalai", f"not installed: only notebook 06 needs it, and no homework does; {fix}")
    # no version: a source tree on PYTHONPATH
    return Check(OK, "colossalai", platform_checks.package_version("colossalai") or "importable (no package metadata)")


def check_deepspeed() -> Check:
    from pp_demo.deepspeed import installed_version, missing

    if missing() is not None:  # DeepSpeed's sdist does not build on native Windows
        fix = (
            "it cannot install on native Windows (WSL2 can)"
            if sys.platform == "win32"
            else "`make deepspeed` installs it"
        )
        return Check(WARN, "deepspeed", f"not installed: only notebook 11 needs it, and no homework does; {fix}")
    return Check(OK, "deepspeed", installed_version() or "importable (no package metadata)")


def check_temp_dir() -> Check:
    try:
        with tempfile.NamedTemporaryFile(prefix="pp_demo_doctor_") as handle:
            handle.write(b"ok")
            handle.flush()
    except OSError as error:
        fix = "set TMPDIR to a writable folder"
        return Check(FAIL, "temp dir", f"cannot write in {tempfile.gettempdir()} ({error}): {fix}")
    return Check(OK, "temp dir", f"{tempfile.gettempdir()} is writable")


def kernel_python() -> list[str]:
    """The command of the ``python3`` Jupyter kernel, the one `make lab` opens notebooks with."""
    from jupyter_client.kernelspec import KernelSpecManager

    command = KernelSpecManager().get_kernel_spec("python3").argv[0]
    # jupyter_client runs a spec's bare "python" with the server's own interpreter
    return [sys.executable if command in ("python", "python3", f"python3.{sys.version_info[1]}") else command]


def _kernel_fix(error: Exception) -> str:
    """What fixes a kernel that cannot be found: a home folder that takes no files and a broken
    spec on ``JUPYTER_PATH`` are not fixed by `make setup`, so they are named."""
    if isinstance(error, OSError) and platform_checks.home_check()[0] == FAIL:
        return platform_checks.HOME_FIX
    if isinstance(error, ValueError):  # a kernel.json that is not JSON (json's error is a ValueError)
        try:
            from jupyter_client.kernelspec import KernelSpecManager

            folder = KernelSpecManager().find_kernel_specs().get("python3")
        except Exception:
            folder = None
        if folder:
            return f"its spec, {folder}/kernel.json, is broken: fix or remove that folder (JUPYTER_PATH may name it)"
    return SETUP


def check_kernel(notebooks: Path | None = None) -> Check:
    """The kernel `make lab` opens, started from ``notebooks`` (the temp folder where there is none)."""
    try:
        command = kernel_python()
    except Exception as error:  # no jupyter_client, or no python3 kernel spec, or a broken one
        return Check(
            FAIL, "jupyter kernel", f"no python3 kernel here ({type(error).__name__}: {error}): {_kernel_fix(error)}"
        )
    code = "import pp_demo, os; print(os.path.dirname(os.path.realpath(pp_demo.__file__)))"
    try:
        # from where `make lab` starts its kernels, so this folder's pp_demo is not found by accident
        where = notebooks or tempfile.gettempdir()
        done = subprocess.run([*command, "-c", code], capture_output=True, text=True, timeout=30, cwd=where)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Check(FAIL, "jupyter kernel", f"{command[0]} did not run ({error}): {SETUP}")
    if done.returncode != 0:
        fix = "run `make lab`, or install pp_demo in that environment"
        return Check(FAIL, "jupyter kernel", f"its python ({command[0]}) cannot import pp_demo: {fix}")
    if Path(done.stdout.strip()) != PACKAGE_DIR:
        other = f"its python ({command[0]}) imports another pp_demo, from {done.stdout.strip()}"
        return Check(WARN, "jupyter kernel", f"{other}: notebooks will not see changes made here")
    return Check(OK, "jupyter kernel", f"python3 ({command[0]}) imports this pp_demo")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


RANK = """
import datetime, sys, torch, torch.distributed as dist
rank, port = int(sys.argv[1]), sys.argv[2]
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                        timeout=datetime.timedelta(seconds=30))
tensor = torch.arange(4.0) if rank == 0 else torch.zeros(4)
dist.broadcast(tensor, src=0)
print(tensor.tolist())
dist.destroy_process_group()
"""


def start_ranks() -> list[subprocess.Popen[str]]:
    port = str(free_port())
    return [
        subprocess.Popen(
            [sys.executable, "-c", RANK, str(rank), port], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for rank in (0, 1)
    ]


def check_ranks(ranks: list[subprocess.Popen[str]]) -> Check:
    name = TORCH_CHECKS[0]
    try:
        outs = [rank.communicate(timeout=RANKS_TIMEOUT_S) for rank in ranks]
    except subprocess.TimeoutExpired:
        for rank in ranks:
            rank.kill()
            rank.communicate()
        why = "a firewall or VPN may block connections to 127.0.0.1; the --distributed runs will hang the same way"
        return Check(FAIL, name, f"no exchange within {RANKS_TIMEOUT_S} s: {why}")
    # the tensor's line among others: gloo on some torch releases (2.10) prints "Rank 1 is connected ..."
    if any(r.returncode for r in ranks) or "[0.0, 1.0, 2.0, 3.0]" not in outs[1][0].splitlines():
        errors = [line for _, err in outs for line in err.strip().splitlines()]
        said = errors[-1] if errors else "no message"
        return Check(FAIL, name, f"the exchange failed ({said}): see docs/troubleshooting.md")
    return Check(OK, name, "a tensor went from rank 0 to rank 1")


PROBE = """
import importlib, json, os, sys, tempfile
modules, colossalai = json.loads(sys.argv[1]), sys.argv[2] == "1"
report = {"error": None, "line": None}
with tempfile.TemporaryFile() as caught:
    saved = os.dup(2)
    os.dup2(caught.fileno(), 2)
    try:
        for name in modules:
            importlib.import_module(name)
        if colossalai:
            importlib.import_module("pp_demo.colossalai.forwards").colossalai_forwards()
    except Exception as error:
        report["error"] = f"{type(error).__name__}: {error}"
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
    caught.seek(0)
    report["stderr"] = caught.read().decode(errors="replace")
if report["error"] is None:
    from pp_demo.verify.compare import reproduce, reproduction_line
    report["line"] = reproduction_line(reproduce("llama", "count", device="cpu"))
print(json.dumps(report))
"""


def run_probe(colossalai: bool) -> dict[str, Any]:
    """Import what the notebooks import, stderr caught; then the reproduction's first line."""
    argv = [sys.executable, "-c", PROBE, json.dumps(NOTEBOOK_MODULES), "1" if colossalai else "0"]
    env = platform_checks.env_with_path(PACKAGE_DIR.parent)
    mplconfig = platform_checks.private_mplconfig()  # as `make lab`'s kernels and the tests have it
    if mplconfig and "MPLCONFIGDIR" not in env:
        env["MPLCONFIGDIR"] = mplconfig
    done = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, env=env)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else f"exit status {done.returncode}", "stderr": "", "line": None}
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def probe_checks(colossalai: bool) -> list[Check]:
    try:
        report = run_probe(colossalai)
    except subprocess.TimeoutExpired:
        report = {"error": f"no answer within {PROBE_TIMEOUT_S} s", "stderr": "", "line": None}
    imports, repro = TORCH_CHECKS[1:]
    if report["error"]:
        return [
            Check(FAIL, imports, f"importing the notebooks' modules failed: {report['error']}; {SETUP}"),
            Check(SKIP, repro, "needs the imports above"),
        ]
    talk = report["stderr"].strip().splitlines()
    quiet = Check(OK, imports, "the notebooks' imports print nothing on stderr")
    if talk:
        said = f"something printed on stderr at import, which strict nbval fails: {talk[0]!r}"
        quiet = Check(FAIL, imports, f"{said}; see docs/troubleshooting.md")
    # The line is compared, never printed: which row goes wrong is notebook 01's to show.
    if report["line"] == EXPECTED_REPRODUCTION:
        return [quiet, Check(OK, repro, f"{_REPRODUCTION_RAN}, and compared as the notebooks' stored outputs do")]
    said = f"{_REPRODUCTION_RAN}, but did not compare as the notebooks' stored outputs do"
    return [quiet, Check(FAIL, repro, f"{said}: check the versions above against the pins")]


def run_checks(checkout: Path = Path(".")) -> list[Check]:
    """The checks in order, torch's skipped without it; pins and notebooks from ``checkout``."""
    pins = read_pins(checkout / PINS) if (checkout / PINS).is_file() else {}
    notebooks = checkout / NOTEBOOKS if (checkout / NOTEBOOKS).is_dir() else None
    checks = [check_python(), Check(*platform_checks.platform_support()), check_checkout(checkout)]
    checks += [check_package(name, pins) for name in REQUIRED]
    torch_ok = next(c for c in checks if c.name == "torch").status != FAIL
    checks += [check_torch_build()] if torch_ok else []
    ranks = start_ranks() if torch_ok else None  # they start while the kernel check runs
    colossalai = check_colossalai()
    checks += [check_kernel(notebooks), colossalai, check_deepspeed(), check_temp_dir()]
    room = (
        platform_checks.home_check(),
        platform_checks.writable_check(notebooks),
        platform_checks.torchrun_env_check(),
    )
    checks += [Check(*check) for check in room]
    if ranks is None:  # no torch: nothing started
        return checks + [Check(SKIP, name, "needs torch") for name in TORCH_CHECKS]
    return checks + [check_ranks(ranks), *probe_checks(colossalai=colossalai.status == OK)]


def add_doctor_options(parser: argparse.ArgumentParser) -> None:
    """The doctor's description and flag, on its own parser (``main``) or the command line's."""
    parser.description = "One line per check (ok, WARN, FAIL with the fix, or skip); exit 1 on a FAIL."
    where = "the workbook's checkout: its pins and notebooks (default: .)"
    parser.add_argument("--checkout", type=Path, default=Path("."), help=where)
    parser.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    """Every check, a line each as it comes; exit status 1 on a FAIL, 130 on Ctrl-C (its child checks end with it)."""
    failed = warned = 0
    try:
        for check in run_checks(args.checkout):
            print(check.line(), flush=True)
            failed += check.status == FAIL
            warned += check.status == WARN
    except KeyboardInterrupt:
        sys.stderr.write("interrupted (Ctrl-C): the doctor stopped before its last check\n")
        return 130
    print(f"{failed} check(s) failed: fix them from the top" if failed else "all set for the workshop")
    if warned and not failed:  # "all set" is true, but a WARN above may still stop a run
        print(f"(read the {warned} WARN line(s) above: each says what it affects)")
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pp_demo doctor")
    add_doctor_options(parser)
    return run_doctor(parser.parse_args(argv))
