import sys

if sys.argv[1:2] == ["doctor"]:  # before the CLI's imports: the doctor runs where torch is missing
    from .doctor import main

    raise SystemExit(main(sys.argv[2:]))

from .cli import main

raise SystemExit(main())
