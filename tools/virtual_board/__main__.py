"""`python -m tools.virtual_board`: serve a virtual board on a pty (see the package docstring)."""

import sys

from . import main

sys.exit(main())
