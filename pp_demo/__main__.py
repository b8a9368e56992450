import sys

if sys.argv[1:2] == ["doctor"]:  # before the CLI's imports: the doctor runs where torch is missing
    from pp_demo.workshop.doctor import main

    raise SystemExit(main(sys.argv[2:]))

from pp_demo.cli import main

raise SystemExit(main())
