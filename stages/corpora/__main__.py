"""``python -m stages.corpora {attributes,topics,realtext}``: the corpora data stages."""
from __future__ import annotations

import sys

from stages.corpora.stage import main

if __name__ == "__main__":
    main(sys.argv[1:])
