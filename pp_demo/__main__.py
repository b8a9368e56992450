import sys

if sys.argv[1:2] == ["doctor"]:  # before the CLI's imports: the doctor runs where torch is missing
    from pp_demo.workshop.doctor import main

    raise SystemExit(main(sys.argv[2:]))

# standard library only: Ctrl-C is handled from here on, during the seconds of torch's imports too
from pp_demo.pipeline.torchrun_env import INTERRUPTED, stop_on_interrupt

try:
    with stop_on_interrupt():
        from pp_demo.cli import main

        code = main()
except KeyboardInterrupt:
    print(INTERRUPTED, file=sys.stderr)
    code = 130
raise SystemExit(code)
