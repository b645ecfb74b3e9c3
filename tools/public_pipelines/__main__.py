"""``python -m tools.public_pipelines``."""

import sys

from tools.public_pipelines import main

sys.exit(main())
