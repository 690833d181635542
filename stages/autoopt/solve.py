"""``claimbench run autoopt solve IMAGE``: runs this module (``python -m stages.autoopt.solve``).

A thin entry point kept at this path for the user command; the tool itself (image -> M1 -> M2 ->
M3, its options and exit statuses) is :mod:`stages.autoopt.chain.solve`.
"""
from __future__ import annotations

import sys

from .chain.solve import main, read_image  # noqa: F401 - the tool's API, re-exported at its old path

if __name__ == "__main__":
    sys.exit(main())
