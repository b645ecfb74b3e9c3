import sys

from mtokspec.cli import main

sys.exit(main())
