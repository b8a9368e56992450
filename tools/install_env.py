"""`make setup`'s installer: a venv holding exactly a lock, torch first and on its own.

    python -m tools.install_env --venv .venv --lock constraints/pinned.lock.txt

1. The Python that runs this must be one the lock is resolved for (3.11-3.13).
2. The venv is made with it (``python -m venv``), if it is not there yet. A venv that holds
   torch of another build than ``--torch`` asks for (cpu, cu128, ...) is refused, never reused
   as it is: ``make setup TORCH=cu128`` over a CPU venv would otherwise keep the CPU build.
3. Where torch comes from is decided (tools/torch_source.py) before anything is downloaded, so a
   laptop with no source of the right build stops within seconds, in one line.
4. The installer: uv, several times faster than pip, itself installed from pip's sources into a
   tools venv; pip if uv cannot be had (``--installer pip`` asks for pip). uv reads no pip
   configuration, so it is given the index and folder options pip would have used.
5. torch, then the lock (whose ``torch==2.13.0`` the installed build satisfies), then pp_demo
   itself without dependencies.

``--keep-torch``: the environment already has the torch it is to use (a GPU box's or a hosted
notebook's CUDA build, any version of the tested range; docs/gpu.md). Nothing replaces it: the
lock goes in without its ``torch`` line, without the packages that torch itself requires (the
installed torch chose them; torch 2.11 wants an older setuptools than the lock's) and without
dependencies, so no resolver can swap torch for another build.

Standard library only, and no make: on Windows ``py -3.12 -m tools.install_env ...`` (from the checkout) is the setup.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from tools import torch_source

SUPPORTED_PYTHONS = ((3, 11), (3, 12), (3, 13))
UV_VERSION = "0.13.9"


def venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def say(line: str) -> None:
    print(f"setup: {line}", flush=True)


def run(command: list[str], env: dict[str, str] | None = None) -> None:
    """Run one install step; on failure stop with its exit status (its own message is above)."""
    done = subprocess.run(command, env=env)
    if done.returncode != 0:
        raise SystemExit(done.returncode)


def check_python(version: tuple[int, ...] = tuple(sys.version_info[:3])) -> str | None:
    """A line saying why this Python cannot make the venv, or None if it can."""
    if tuple(version[:2]) in SUPPORTED_PYTHONS:
        return None
    shown = ".".join(map(str, version))
    return (
        f"Python {shown} is not one the lock is resolved for (3.11, 3.12 or 3.13): "
        f"run `make setup PYTHON=python3.12` (any of them) or install one"
    )


class Installer:
    """pip (the venv's own) or uv. ``sources``: the folders or wheelhouse named on the command
    line, for both; ``pip_config``: the indexes and folders pip is configured with, for uv only
    (pip reads them itself)."""

    def __init__(self, python: Path, uv: Path | None, sources: list[str], pip_config: list[str]) -> None:
        self.python, self.uv, self.sources, self.pip_config = python, uv, sources, pip_config

    @property
    def name(self) -> str:
        return "uv" if self.uv else "pip"

    def command(self, arguments: list[str]) -> list[str]:
        """The install command for ``arguments``. An option the sources give already is left
        out of ``arguments`` (a wheelhouse's ``--no-index`` is in both for the torch step), since
        uv refuses a flag given twice: ``the argument '--no-index' cannot be used multiple times``."""
        arguments = without_repeats(self.sources, arguments)
        if self.uv is None:
            return [str(self.python), "-m", "pip", "install", "-q", *self.sources, *arguments]
        # pip merges all its indexes and takes the best version anywhere: unsafe-best-match is that.
        options = [*self.pip_config, *self.sources, "--index-strategy", "unsafe-best-match"]
        # pip writes the bytecode at install; uv only when asked. Without it, where
        # PYTHONDONTWRITEBYTECODE is set (as on CI machines) no import ever writes it either, and
        # every process, each rank of every test, compiles torch and transformers again.
        options.append("--compile-bytecode")
        return [str(self.uv), "pip", "install", "-q", "--python", str(self.python), *options, *arguments]

    def install(self, arguments: list[str], env: dict[str, str] | None = None) -> None:
        """Install ``arguments``; ``env``: variables set for this install alone."""
        env = {**os.environ, **(env or {})}
        if self.uv is not None:
            settings = torch_source.pip_configuration(str(self.python))
            if settings.get("cert") and "SSL_CERT_FILE" not in env:
                env["SSL_CERT_FILE"] = settings["cert"]  # pip's certificate bundle, for uv too
        run(self.command(arguments), env=env)


# The source options, by whether they take a value: the ones a repeat of is left out.
SOURCE_FLAGS = {"--no-index"}
SOURCE_OPTIONS = {"--index-url", "--extra-index-url", "--find-links"}


def without_repeats(given: list[str], arguments: list[str]) -> list[str]:
    """``arguments`` less the source options ``given`` holds already (``--no-index``, or one with
    the same value, ``--find-links DIR``); everything else is kept, in order."""

    def options(words: list[str]) -> list[tuple[str, ...]]:
        grouped, position = [], 0
        while position < len(words):
            width = 2 if words[position] in SOURCE_OPTIONS else 1
            grouped.append(tuple(words[position : position + width]))
            position += width
        return grouped

    seen = {group for group in options(given) if group[0] in SOURCE_FLAGS | SOURCE_OPTIONS}
    return [word for group in options(arguments) if group not in seen for word in group]


def normalized(name: str) -> str:
    """A distribution's name as a wheel's file name starts with it (PEP 427, PEP 503)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def applies(marker: str) -> bool:
    """Whether a lock line's environment marker holds for this Python and platform (the venv is
    made with this Python). Read with ``packaging`` where it can be imported (pip carries it);
    without it a marked line counts as not needed, and the installer says the rest."""
    if not marker.strip():
        return True
    try:
        from packaging.markers import Marker
    except ImportError:
        try:
            from pip._vendor.packaging.markers import Marker  # type: ignore[assignment]
        except ImportError:
            return False
    return bool(Marker(marker).evaluate())


def locked(lock: Path) -> list[tuple[str, str]]:
    """The ``(name, version)`` pins of ``lock`` that apply here."""
    pins = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        requirement, _, marker = line.split("#")[0].partition(";")
        name, equals, version = requirement.partition("==")
        if equals and applies(marker):
            pins.append((name.strip(), version.strip()))
    return pins


def wheelhouse_problem(wheelhouse: str, locks: list[Path], skip: frozenset[str] = frozenset()) -> str | None:
    """Why ``wheelhouse`` cannot install ``locks``, in one line, or None when it holds a wheel of
    each pin that applies here (names ``skip`` aside). Checked before anything is installed: an
    installer told ``--no-index`` would otherwise stop at the first missing one, in words
    (``No matching distribution found for filelock``) that never say how to make a wheelhouse."""
    fix = "make one with `make wheelhouse` (on a machine with a network, same platform and Python) and give it"
    folder = Path(wheelhouse)
    if not folder.is_dir():
        return f"WHEELHOUSE={wheelhouse} is not a folder: {fix} as WHEELHOUSE=wheelhouse"
    wheels = {path.name.lower() for path in folder.glob("*.whl")}
    for lock in locks:
        missing = []
        for name, version in locked(lock):
            if normalized(name) in skip:
                continue
            # name-version-..., or name-version+label-... (torch's CPU build: 2.13.0+cpu)
            prefix = f"{normalized(name)}-{version.lower()}"
            if not any(wheel.startswith((f"{prefix}-", f"{prefix}+")) for wheel in wheels):
                missing.append(f"{name}=={version}")
        if missing:
            shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
            return f"the wheelhouse {wheelhouse} lacks {shown} of {lock.as_posix()}: {fix} as WHEELHOUSE=dir"
    return None


def get_uv(tools: Path, wanted: str, sources: Sequence[str] = ()) -> Path | None:
    """uv from pip's sources (and ``sources``: a wheelhouse, where `make wheelhouse` puts uv's
    wheel, so the room installs with uv offline) into the tools venv; None (with a line saying
    so) if that fails."""
    uv = tools / ("Scripts/uv.exe" if os.name == "nt" else "bin/uv")
    if uv.exists():
        return uv
    say(f"installing uv {UV_VERSION} into {tools.as_posix()} (once)")
    made = subprocess.run([sys.executable, "-m", "venv", str(tools)]).returncode == 0
    pip = [str(venv_python(tools)), "-m", "pip", "install", "-q", *sources, f"uv=={UV_VERSION}"]
    if made and subprocess.run(pip).returncode == 0 and uv.exists():
        return uv
    message = f"uv {UV_VERSION} could not be installed"
    if wanted == "uv":
        raise SystemExit(f"setup: {message}; `make setup INSTALLER=pip` installs with pip")
    say(f"{message}: installing with pip instead (slower)")
    return None


def installed_torch_build(venv: Path) -> str | None:
    """The build label of the torch in ``venv`` (``cpu``, ``cu128``; ``pypi`` for PyPI's
    unlabelled build), read from its metadata; None when it holds no torch."""
    patterns = ("lib/python*/site-packages/torch-*.dist-info/METADATA", "Lib/site-packages/torch-*.dist-info/METADATA")
    for pattern in patterns:
        for metadata in sorted(venv.glob(pattern)):
            for line in metadata.read_text(errors="replace").splitlines():
                if line.startswith("Version:"):
                    _, _, label = line.partition("+")
                    return label.strip() or "pypi"
    return None


def build_mismatch(venv: Path, wanted: str, platform: str = sys.platform) -> str | None:
    """Why the venv cannot be reused for ``TORCH=wanted``, or None when it can."""
    built = installed_torch_build(venv)
    if built is None:
        return None
    same = built == wanted or (built == "pypi" and wanted == "cpu" and platform != "linux")
    if same:
        return None
    shown = "PyPI's build" if built == "pypi" else f"TORCH={built}"
    return (
        f"{venv.as_posix()} holds torch built for {shown}, and TORCH={wanted} asks for another: remove it "
        f"(`make clean`, or delete {venv.as_posix()}) and run `make setup TORCH={wanted}` again"
    )


def unseen_torch(venv: Path) -> str | None:
    """Why a venv made with ``--system-site-packages`` sees no torch, or None: it was made by a
    Python that is itself a venv, and such a venv sees the site-packages of the Python under
    that one (``home`` in its ``pyvenv.cfg``), never the venv's own, where the torch is."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    cfg = {key.strip(): value.strip() for key, _, value in (line.partition("=") for line in lines)}
    maker = cfg.get("command", "").split(" -m ")[0].strip()
    if cfg.get("include-system-site-packages", "").lower() != "true" or not maker:
        return None
    made_by = Path(maker).parent.parent
    if not (made_by / "pyvenv.cfg").is_file():
        return None
    return (
        f"{venv.as_posix()} was made with --system-site-packages by {maker}, which is itself a venv "
        f"({made_by.as_posix()}), so it sees the packages of the Python under that venv, not the venv's "
        f"own torch: give --venv {made_by.as_posix()} itself, or use docs/gpu.md's no-index way"
    )


def keep_torch_lock(python: Path, lock: Path, out: Path) -> str:
    """Write ``lock`` to ``out`` less torch and what the installed torch requires; return
    that torch's version. Stops in one line when ``python`` has no torch. Only torch's own
    requirements are skipped, not those of its extras (``pyyaml`` is one, and transformers needs it)."""
    probe = (
        "import importlib.metadata as m, re; print(m.version('torch')); "
        "print(*(re.split('[ ;<>=!~\\[]', r)[0] for r in m.requires('torch') or [] if 'extra ==' not in r))"
    )
    done = subprocess.run([str(python), "-c", probe], capture_output=True, text=True)
    if done.returncode != 0:
        why = unseen_torch(python.parent.parent)
        raise SystemExit(
            f"setup: --keep-torch, but {python.as_posix()} has no torch: {why or 'install the one to keep first'}"
        )
    version, _, required = done.stdout.partition("\n")
    skipped = {"torch", *(name.lower().replace("_", "-") for name in required.split())}
    kept = []
    for line in lock.read_text().splitlines():
        name = line.split("==")[0].strip().lower().replace("_", "-")
        if "==" in line and not line.startswith("#") and name in skipped:
            continue
        kept.append(line)
    out.write_text("\n".join(kept) + "\n")
    return version.strip()


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Make a venv holding exactly the lock (see the module doc).")
    parser.add_argument("--venv", type=Path, default=Path(".venv"))
    parser.add_argument("--lock", type=Path, action="append", help="a lock to install (repeatable)")
    parser.add_argument(
        "--check-build", action="store_true", help="only say whether the venv's torch is the --torch build (make setup)"
    )
    parser.add_argument("--installer", choices=("auto", "uv", "pip"), default="auto")
    parser.add_argument("--tools", type=Path, default=Path(".venv-tools"), help="the venv uv is installed into")
    parser.add_argument("--torch", default="cpu", help="cpu (the default) or a CUDA build such as cu128")
    parser.add_argument("--torch-index", default="")
    parser.add_argument("--torch-find-links", default="")
    parser.add_argument("--wheelhouse", default="")
    parser.add_argument("--pytorch-wheels", default=torch_source.PYTORCH_WHEELS, help="where PyTorch's indexes are")
    parser.add_argument("--no-torch", action="store_true", help="torch is in the venv already (a second lock)")
    parser.add_argument("--no-project", action="store_true", help="do not install pp_demo itself")
    parser.add_argument(
        "--keep-torch",
        action="store_true",
        help="keep the torch the venv (or Python) has; the lock around it (docs/gpu.md)",
    )
    parser.add_argument(
        "--pypi-torch",
        default="",
        metavar="VERSION",
        help="with --keep-torch: first put PyPI's torch==VERSION in the venv, as a GPU box holds it (make test-torch)",
    )
    return parser.parse_args(argv)


def torch_plan(args: argparse.Namespace, python: Path) -> torch_source.TorchPlan:
    version = torch_source.locked_torch(args.lock[0])
    return torch_source.plan(
        sys.platform,
        version,
        flavour=args.torch,
        torch_index=args.torch_index,
        find_links=args.torch_find_links,
        wheelhouse=args.wheelhouse,
        pip_offers=lambda requirement: torch_source.pip_offers(str(python), requirement),
        index_offers=torch_source.index_offers,
        pytorch_wheels=args.pytorch_wheels.rstrip("/"),
    )


def _kept_locks(args: argparse.Namespace, python: Path) -> list[Path]:
    """Each lock less the kept torch and what it requires, each said with its package count."""
    kept_locks = []
    for number, lock in enumerate(args.lock):
        kept = args.venv / f"keep-torch-{number}.lock.txt"
        version = keep_torch_lock(python, lock, kept)
        count = len(locked(kept))
        say(f"{lock.as_posix()} around the torch {version} there: {count} packages into {args.venv.as_posix()}")
        kept_locks.append(kept)
    return kept_locks


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.keep_torch:
        args.no_torch = True
    problem = check_python()
    if problem is None and args.torch not in torch_source.TORCH_BUILDS and not args.torch_index:
        # said before the venv's own build is compared: deleting it would not make this a build
        case = f" (lower case: TORCH={args.torch.lower()})" if args.torch.lower() in torch_source.TORCH_BUILDS else ""
        problem = (
            f"TORCH={args.torch} is not a build PyTorch publishes{case}: use one of "
            f"{', '.join(torch_source.TORCH_BUILDS)}"
        )
    problem = problem or (None if args.no_torch else build_mismatch(args.venv, args.torch))
    if problem:
        print(f"setup: {problem}", file=sys.stderr)
        return 1
    if args.check_build:
        return 0
    if not args.lock:
        print("setup: give --lock FILE (a lock to install)", file=sys.stderr)
        return 2
    for lock in args.lock:  # before the venv is made: a mistyped lock leaves nothing behind
        if not lock.is_file():
            what = "a folder, not a lock file" if lock.is_dir() else "no such file"
            print(
                f"setup: --lock {lock.as_posix()}: {what} (a lock such as constraints/pinned.lock.txt)", file=sys.stderr
            )
            return 2
    if args.wheelhouse:
        problem = wheelhouse_problem(args.wheelhouse, args.lock, frozenset({"torch"} if args.no_torch else ()))
        if problem:
            print(f"setup: {problem}", file=sys.stderr)
            return 1
    python = venv_python(args.venv)
    if not python.exists():
        run([sys.executable, "-m", "venv", str(args.venv)])
    # a user's kept torch: said before anything is installed, how many packages go in around it
    kept_locks = _kept_locks(args, python) if args.keep_torch and not args.pypi_torch else []
    plan = None
    if not args.no_torch:
        try:
            plan = torch_plan(args, python)
        except torch_source.NoTorchSource as error:
            print(f"setup: {error}", file=sys.stderr)
            return 1
    sources = torch_source.named_sources("", args.torch_find_links, args.wheelhouse)
    uv = None if args.installer == "pip" else get_uv(args.tools, args.installer, sources)
    pip_config = [] if args.wheelhouse else torch_source.uv_sources(torch_source.pip_configuration(str(python)))
    installer = Installer(python, uv, sources, pip_config)
    if installer.name == "pip" and not args.wheelhouse:
        installer.install(["--upgrade", "pip"])
    if plan is not None:
        say(f"{plan.requirement} from {plan.source}, with {installer.name}")
        installer.install([*plan.options, plan.requirement])
    if args.keep_torch and args.pypi_torch:
        say(f"torch=={args.pypi_torch} from PyPI, as a GPU box holds it, with {installer.name}")
        # no cap a pip configuration puts on torch: the version asked for is the one to test
        installer.install([f"torch=={args.pypi_torch}"], env={"PIP_CONSTRAINT": os.devnull})
    if args.keep_torch and args.pypi_torch:  # CI's range leg: the torch to keep goes in just above
        kept_locks = _kept_locks(args, python)
    for kept in kept_locks:
        installer.install(["--no-deps", "-r", str(kept)])
    for lock in [] if args.keep_torch else args.lock:
        say(f"{lock.as_posix()}, with {installer.name}")
        installer.install(["-r", str(lock)])
    if not args.no_project:
        # the lock's setuptools builds pp_demo in the venv itself; around a kept torch the venv
        # holds the setuptools that torch chose (2.11's may be older than pyproject's license
        # field), so pp_demo is built in an isolated environment of its own
        isolation = [] if args.keep_torch else ["--no-build-isolation"]
        installer.install(["--no-deps", *isolation, "-e", "."])
    return 0


if __name__ == "__main__":
    sys.exit(main())
