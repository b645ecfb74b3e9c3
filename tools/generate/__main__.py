"""``python -m tools.generate``."""

import sys

from . import main

sys.exit(main())
