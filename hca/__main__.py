"""``python -m hca``: see :mod:`hca.cli`."""

import sys

from hca.cli import main

if __name__ == "__main__":
    sys.exit(main())
