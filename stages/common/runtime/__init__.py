"""The runtime every stage runs inside: never a DVC dep, because nothing here shapes a stage's outputs.

- :mod:`.stage`: the wrapper (``with stage(study, step, Params) as ctx``): validates params, checks
  inputs against dvc.yaml and dvc.lock, seeds, opens and closes the MLflow run, handles SIGTERM
- :mod:`.params`: params files, profiles, typed validation and its messages
- :mod:`.tracking`, :mod:`.tracking_agent`, :mod:`.registry`, :mod:`.mlflow_client`: MLflow
- :mod:`.dvcfile`: read-only access to dvc.yaml and dvc.lock
- :mod:`.checkout`, :mod:`.remote`: a clean copy of the checkout, the default DVC remote (used by
  the flow, the tools and the tests)

The folder is the rule: ``claimbench deps`` walks through these modules (what they import from the
library, such as :mod:`stages.common.seeding`, does shape outputs) but never names one as a dep, so
editing the runtime re-runs nothing. It imports only the library below it
(``tests/common/test_floors.py``).
"""
