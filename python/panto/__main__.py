"""``python -m panto`` is the ``panto`` command."""

import sys

from panto.cli import main

if __name__ == "__main__":
    sys.exit(main())
