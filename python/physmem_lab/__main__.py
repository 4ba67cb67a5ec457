"""``python -m physmem_lab`` is the ``physmem`` command."""
import sys

from .cli import main

sys.exit(main())
