"""``python -m replify.cli``: the command line, as the ``replify`` script runs it."""

import sys

from replify.cli import main

sys.exit(main())
