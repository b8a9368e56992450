"""Where a command writes: checked before it works, and never over what the notebooks read.

The writing commands run for minutes and then write, so ``output_path`` checks the path first:
a folder given as ``--out`` means "write inside it", and the file's folder must take a file.
The files in ``results/`` are committed and read by the notebooks: a run without ``--out``
writes under ``results/tmp/`` (ignored by git) instead. A record of more seeds or runs is never
replaced by one of fewer without ``--force`` (``check_not_fewer``): minutes or hours of runs are
not lost to a quick try with the same ``--out`` (``docs/cli.md``, "Where the writing commands write").
"""

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pp_demo.errors import BadInput

__all__ = [
    "RESULTS",
    "SCRATCH",
    "NOTEBOOKS",
    "in_checkout",
    "output_path",
    "check_folder_writable",
    "is_committed_result",
    "check_not_fewer",
    "study_folder",
    "study_seeds",
    "write_json",
]

RESULTS = Path("results")  # relative to the checkout, like every default path of the CLI
SCRATCH = RESULTS / "tmp"  # where a run without --out writes (git ignores it)
NOTEBOOKS = Path("notebooks")  # the workbook, relative to the checkout too; an installed pp_demo has none


def in_checkout(path: Path) -> Path:
    """``path`` of the checkout from the working directory: its root, or a folder of it (notebooks/)."""
    return next((base / path for base in (Path("."), Path("..")) if (base / path).exists()), path)


def _can_write_in(folder: Path) -> bool:
    """True when a file can be created in ``folder`` (tried for real: root ignores modes)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


def check_folder_writable(folder: Path, flag: str, given: str | Path | None = None) -> None:
    """``folder`` exists and takes files, or can be created: its nearest existing parent is a
    folder that takes files. The refusal names ``flag`` and the value ``given`` to it."""
    label = f"{flag} {folder if given is None else given}"
    chain = [folder, *folder.parents]
    existing = next((path for path in chain if path.exists()), chain[-1])
    if not existing.is_dir():
        raise BadInput(f"{label}: {existing} is a file, not a folder")
    if not _can_write_in(existing):
        raise BadInput(f"{label}: cannot write in {existing} (read-only?)")


def output_path(out: str | Path, name: str) -> Path:
    """The file a command will write for ``--out out``: ``out/name`` when ``out`` is a folder
    (one that exists, or one written with a trailing slash), else ``out`` itself; checked."""
    path = Path(out)
    if path.is_dir() or str(out).endswith(("/", os.sep)):
        path = path / name
    if path.is_dir():
        raise BadInput(f"--out {out}: {path} is a folder, not a file")
    check_folder_writable(path.parent, "--out", out)
    return path


def is_committed_result(path: Path) -> bool:
    """``path`` is one of the files in ``results/`` that the notebooks read: the ``results/`` of
    the folder the command runs in, or of the checkout it runs in a folder of (``in_checkout``)."""
    folders = {RESULTS.resolve(), in_checkout(RESULTS).resolve()}
    return path.is_file() and path.resolve().parent in folders


def check_not_fewer(path: Path, what: str, count: int, count_of: Callable[[Any], int], force: bool) -> None:
    """Refuse, unless ``force``, to replace the record at ``path`` of more ``what`` (seeds, runs:
    ``count_of(record)``) than ``count``; a file of no JSON or of another shape is the writer's."""
    if force or not path.is_file():
        return
    try:
        held = int(count_of(json.loads(path.read_text())))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return
    if count < held:
        raise BadInput(
            f"--out {path} holds {held} {what}, this run would write {count}: replacing it with fewer takes "
            f"--force; or give {held} or more, or another --out"
        )


def study_seeds(record: dict[str, Any]) -> int:
    """How many seeds a train-study record holds."""
    return len(record["settings"]["seeds"] if "settings" in record else record["seeds"])


def study_folder(out: str | Path | None, name: str, seeds: int, force: bool) -> Path:
    """The folder ``train-study --out out`` writes ``name`` into (default ``results/tmp``), checked.
    A committed study of more seeds is kept without ``force``: the run writes to ``results/tmp``, and says so."""
    folder = Path(out or SCRATCH)
    if folder.exists() and not folder.is_dir():
        raise BadInput(f"--out {folder} is a file: train-study writes {name} into a folder")
    check_folder_writable(folder, "--out")
    if (folder / name).is_dir():
        raise BadInput(f"--out {folder}: {folder / name} is a folder, not a file")
    if is_committed_result(folder / name) and not force:
        committed = study_seeds(json.loads((folder / name).read_text()))
        if seeds < committed:
            print(f"the committed {folder / name} has {committed} seeds, this run {seeds}: writing to {SCRATCH}")
            check_folder_writable(SCRATCH, "--out")
            folder = SCRATCH
    check_not_fewer(folder / name, "seeds", seeds, study_seeds, force)
    return folder


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder`` alone while a record there is checked and replaced (``flock`` on the folder
    itself, so no lock file is left in ``results/``). Where there is no ``fcntl`` (Windows) the
    check and the replace are still one step apart by microseconds, not by the minutes of a run."""
    try:
        import fcntl
    except ImportError:
        yield
        return
    handle = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)  # closing releases the lock


def write_json(
    path: Path, record: Any, what: str = "", count_of: Callable[[Any], int] | None = None, force: bool = False
) -> None:
    """``record`` as indented JSON at ``path``, its folder created, replaced whole (no reader sees
    half a file). With ``count_of``, ``check_not_fewer`` is asked again at the write, under a lock
    on the folder: two runs started together into one ``--out`` both passed the first check,
    before either wrote, and the one of fewer ``what`` must not then replace the other's record
    without ``force``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1) + "\n"
    with _folder_lock(path.parent):
        if count_of is not None:
            check_not_fewer(path, what, count_of(record), count_of, force)
        with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}.", delete=False) as temporary:
            temporary.write(text)
        os.replace(temporary.name, path)
