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
