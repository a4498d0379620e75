"""``python -m simt``: see simt.cli."""

import sys

from simt.cli import main

sys.exit(main())
