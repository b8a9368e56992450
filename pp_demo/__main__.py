import sys

# This file parses on Python 2.7 and every 3.x: on one older than 3.11 it says which Python to
# use, in the doctor's own format, before importing anything written for 3.11.
if sys.version_info[:2] < (3, 11):
    # a Mac's python3 from Apple's command-line tools is 3.9: say where a newer one comes from
    where = " (on a Mac: `brew install python@3.12`, or python.org's installer)" if sys.platform == "darwin" else ""
    sys.stdout.write(
        "FAIL  python: %s is too old for pp_demo: install Python 3.11, 3.12 or 3.13%s and run with it, "
        "e.g. `make doctor PYTHON=python3.12` or `python3.12 -m pp_demo doctor`\n"
        % (".".join(str(part) for part in sys.version_info[:3]), where)
    )
    raise SystemExit(1)

if sys.argv[1:2] == ["doctor"]:  # before the CLI's imports: the doctor runs where torch is missing
    from pp_demo.workshop.doctor import main

    raise SystemExit(main(sys.argv[2:]))

# standard library only: Ctrl-C is handled from here on, during the seconds of torch's imports too
from pp_demo.ranks.torchrun_env import INTERRUPTED, stop_on_interrupt

try:
    with stop_on_interrupt():
        from pp_demo.cli import main

        code = main()
except KeyboardInterrupt:
    sys.stderr.write(INTERRUPTED + "\n")
    code = 130
raise SystemExit(code)
