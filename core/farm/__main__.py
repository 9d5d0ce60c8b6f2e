"""``python -m core.farm bundle …`` / ``python -m core.farm summary …`` (see :mod:`.cli`)."""
import sys

from .cli import main

sys.exit(main())
