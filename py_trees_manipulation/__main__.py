"""``python -m py_trees_manipulation`` is the ``ptm`` command."""

import sys

from .cli import main

sys.exit(main())
