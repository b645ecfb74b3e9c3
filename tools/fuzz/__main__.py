"""``python -m tools.fuzz``."""

import sys

from tools.fuzz import main

sys.exit(main())
