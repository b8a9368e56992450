"""``make lab``: JupyterLab starts as root and without a display, and answers on the URL it prints;
it serves the checkout and opens at notebooks/, so the notebooks' links to docs/ resolve."""

import json
import os
import pathlib
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from pp_demo.workshop.lab import OPEN_AT, lab_command

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_as_root_it_adds_allow_root_and_says_so():
    command, notes, _ = lab_command([], environ={"DISPLAY": ":0"}, uid=0)
    assert "--allow-root" in command
    assert notes == ["running as root (uid 0): starting JupyterLab with --allow-root"]


def test_without_a_display_it_opens_no_browser_and_says_so(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    command, notes, url = lab_command([], environ={}, uid=1000)
    assert "--no-browser" in command and "--allow-root" not in command
    assert notes == ["no display found: not opening a browser; open the URL below in yours"]
    token = next(a.split("=", 1)[1] for a in command if a.startswith("--IdentityProvider.token="))
    port = next(a.split("=", 1)[1] for a in command if a.startswith("--port="))
    assert url == f"http://127.0.0.1:{port}/lab/tree/workspace?token={token}"


def test_a_desktop_user_gets_neither_flag(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    command, notes, _ = lab_command(["--ServerApp.log_level=WARN"], environ={"DISPLAY": ":0"}, uid=1000)
    assert "--no-browser" not in command and "--allow-root" not in command and notes == []
    assert "--ServerApp.log_level=WARN" in command


def _status(url, deadline_s=90):
    """GET /api/status until the server answers (bounded); its JSON, or None."""
    base, token = url.split("/lab/tree/workspace?token=")
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=5) as answer:
                return json.load(answer)
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.5)
    return None


def notebook_links(root=ROOT):
    """Every file a notebook's markdown links to (``../docs/glossary.md#stage``), as a path from
    the checkout (``docs/glossary.md``), each once."""
    found = set()
    for path in sorted((root / "notebooks").glob("[0-9]*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            for target in re.findall(r"\]\(([^)\s]+)\)", "".join(cell["source"])):
                file = target.split("#")[0]
                if file and not re.match(r"[a-z]+:", file):
                    found.add(os.path.normpath(f"notebooks/{file}").replace(os.sep, "/"))
    return sorted(found)


def test_the_notebooks_link_the_glossary_from_outside_their_folder():
    links = notebook_links()
    assert "docs/glossary.md" in links and all((ROOT / link).is_file() for link in links), links


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code


def test_make_lab_starts_headless_and_answers_then_stops_by_its_own_pid(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR"):
        env[name] = str(tmp_path / name.lower())
    log = open(tmp_path / "lab.log", "w")  # noqa: SIM115  (open for the server's whole life; closed in finally)
    lab = subprocess.Popen(
        [sys.executable, "-m", "pp_demo.workshop.lab"],
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        env=env,
        cwd=ROOT,  # `make lab` runs in the checkout
    )
    try:
        lines = []
        while not (lines and lines[-1].startswith("JupyterLab: ")):
            lines.append(lab.stdout.readline().strip())
            assert lines[-1] or lab.poll() is None, (tmp_path / "lab.log").read_text()
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            assert "running as root (uid 0): starting JupyterLab with --allow-root" in lines
        assert "no display found: not opening a browser; open the URL below in yours" in lines
        url = lines[-1].removeprefix("JupyterLab: ")
        status = _status(url)
        assert status is not None and "started" in status, (tmp_path / "lab.log").read_text()
        # it opens at notebooks/, and every file a notebook links to is served, the glossary first
        base, token = url.split("/lab/tree/workspace?token=")
        assert _get(url) == 200
        answers = {link: _get(f"{base}/api/contents/{link}?content=0&token={token}") for link in notebook_links()}
        assert answers and set(answers.values()) == {200}, answers
        assert _get(f"{base}/files/docs/glossary.md?token={token}") == 200
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=30)
        except subprocess.TimeoutExpired:
            lab.kill()
            lab.wait()
        log.close()


def test_a_checkout_without_notebooks_is_refused_in_one_line(tmp_path, capsys):
    from pp_demo.workshop.lab import main

    assert main(["--checkout", str(tmp_path / "missing")]) == 2  # before anything is started
    assert main(["--checkout", str(tmp_path)]) == 2  # a folder, but no notebooks/ in it
    assert capsys.readouterr().err.count("\n") == 2


def test_lab_serves_the_checkout_and_opens_at_its_notebooks(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    command, _, url = lab_command([], environ={}, uid=1000, root=tmp_path)
    assert command[-1] == str(tmp_path) and OPEN_AT == "--LabApp.default_url=/lab/tree/workspace"
    assert OPEN_AT in command and "/lab/tree/workspace?token=" in url


def test_the_lab_is_this_interpreters_jupyterlab_not_a_script_on_path():
    command, _, _ = lab_command([], environ={"DISPLAY": ":0"}, uid=1000)
    assert command[:3] == [sys.executable, "-m", "jupyterlab"]


def test_the_users_port_ip_and_token_replace_the_picked_ones_and_the_url_is_theirs(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    given = ["--port=9999", "--ip=0.0.0.0", "--IdentityProvider.token=x", "--ServerApp.log_level=WARN"]
    command, _, url = lab_command(given, environ={"DISPLAY": ":0"}, uid=1000)
    flags = [a.split("=", 1)[0] for a in command]
    assert [flags.count(f) for f in ("--port", "--ip", "--IdentityProvider.token")] == [1, 1, 1]
    assert {"--port=9999", "--ip=0.0.0.0", "--IdentityProvider.token=x", "--ServerApp.log_level=WARN"} <= set(command)
    # a taken port stops Jupyter instead of moving it off the printed URL; every interface holds 127.0.0.1
    assert "--ServerApp.port_retries=0" in command
    assert url == "http://127.0.0.1:9999/lab/tree/workspace?token=x"
    command, _, url = lab_command(["--port", "8123", "--ip", "::1"], environ={"DISPLAY": ":0"}, uid=1000)
    assert "--port=8123" in command and "8123" not in command[command.index("--port=8123") + 1 :]
    assert url.startswith("http://[::1]:8123/lab/tree/workspace?token=")
    # no port given: a free one, picked here, and Jupyter's retries left alone
    assert "--ServerApp.port_retries=0" not in lab_command([], environ={"DISPLAY": ":0"}, uid=1000)[0]


def test_a_port_that_is_not_one_is_refused_in_one_line_before_any_url(tmp_path, capsys):
    from pp_demo.workshop.lab import main

    for args in (["--port=abc"], ["--port=0"], ["--port=70000"], ["--port"]):
        assert main(["--checkout", str(ROOT), *args]) == 2, args
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "--port" in err and "JupyterLab:" not in err, args


def test_lab_leaves_no_temporary_folder_even_when_jupyter_refuses_to_start(tmp_path):
    """The process becomes Jupyter, so nothing could remove a temporary folder after it: the
    kernel spec lives in the environment's own folder instead, and Jupyter's refusal leaves nothing."""
    env = {**os.environ, "TMPDIR": str(tmp_path), "TEMP": str(tmp_path), "TMP": str(tmp_path)}
    env.pop("MPLCONFIGDIR", None)
    done = subprocess.run(
        [sys.executable, "-m", "pp_demo.workshop.lab", "--no-such-flag"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "--no-such-flag" in done.stderr
    assert list(tmp_path.iterdir()) == []
    spec = pathlib.Path(sys.prefix) / "share" / "pp_demo" / "jupyter" / "kernels" / "python3" / "kernel.json"
    assert "pp_demo.workshop.cell_errors" in spec.read_text(encoding="utf-8")


def _broken_font_cache(home: pathlib.Path) -> dict[str, str]:
    """A per-user matplotlib cache under ``home`` whose font list lacks matplotlib's own STIX fonts,
    as other work on a shared machine left it; the environment that points matplotlib at it."""
    from matplotlib import font_manager

    cache = home / ".cache" / "matplotlib"
    cache.mkdir(parents=True)
    broken = font_manager.FontManager.__new__(font_manager.FontManager)
    broken.__dict__.update(font_manager.fontManager.__dict__)
    broken.ttflist = [f for f in font_manager.fontManager.ttflist if not f.name.startswith("STIX")]
    font_manager.json_dump(broken, cache / f"fontlist-v{font_manager.FontManager.__version__}.json")
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home)}
    env.pop("MPLCONFIGDIR", None)
    return env


FINDFONT = "import matplotlib.font_manager as fm; fm.findfont('STIXGeneral')"


def test_lab_and_the_tests_read_their_own_font_cache_not_a_broken_per_user_one(tmp_path, monkeypatch):
    from pp_demo.workshop import lab, platform_checks

    env = _broken_font_cache(tmp_path / "home")
    plain = subprocess.run([sys.executable, "-c", FINDFONT], env=env, capture_output=True, text=True, timeout=120)
    assert "findfont: Font family ['STIXGeneral'] not found" in plain.stderr  # the broken cache bites

    started = {}

    def execv(path, argv):  # what Jupyter, and so every kernel, would inherit
        started["MPLCONFIGDIR"] = os.environ.get("MPLCONFIGDIR")
        raise SystemExit(0)

    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    monkeypatch.delenv("JUPYTER_PATH", raising=False)  # main sets both: put back after the test
    monkeypatch.setattr(os, "execv", execv)
    with pytest.raises(SystemExit):
        lab.main(["--checkout", str(ROOT)])
    assert (
        started["MPLCONFIGDIR"]
        == platform_checks.private_mplconfig()
        == os.path.join(sys.prefix, "share", "pp_demo", "matplotlib")
    )
    env["MPLCONFIGDIR"] = started["MPLCONFIGDIR"]
    kernel = subprocess.run([sys.executable, "-c", FINDFONT], env=env, capture_output=True, text=True, timeout=120)
    assert kernel.returncode == 0 and kernel.stderr == ""
    # the tests' own processes (tests/conftest.py), and so nbval's kernels, never read the per-user cache
    import matplotlib

    assert pathlib.Path(matplotlib.get_cachedir()) != pathlib.Path.home() / ".cache" / "matplotlib"
