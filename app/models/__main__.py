"""`python -m app.models ...` runs the models CLI directly."""

import sys

from app.models.cli import main

sys.exit(main(sys.argv[1:]))
