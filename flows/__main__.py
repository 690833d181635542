"""``python -m flows [--profile P] [TARGET ...]``: the Prefect flow over the pipeline's dvc.yaml files
(the same as ``python -m flows.pipeline`` and ``claimbench flow``; see flows/pipeline.py)."""
import sys

from flows.pipeline import main

sys.argv[0] = "python -m flows"          # what --help shows
sys.exit(main())
