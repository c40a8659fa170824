"""``python -m queuesim``: the ``queuesim`` command, for an environment whose scripts are
not on ``PATH`` (and for profilers that run a module)."""

import sys

from queuesim.cli import main

if __name__ == "__main__":
    sys.exit(main())
