"""``python -m nspca_core`` — see :mod:`nspca_core.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
