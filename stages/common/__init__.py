"""The library: what stages compute with. Every module here that a stage imports (directly or
through the runtime) is one of its DVC deps, so editing it re-runs exactly the stages that use it.

``io`` (atomic writes, DVC-compatible hashes), ``seeding`` and ``seeds`` (verdict seeds, shards),
``device`` (device choice, thread caps), ``plots``, ``mlmodel`` (saving a pyfunc model), ``stats``,
``inference`` (decision rules, intervals), ``claims`` (judging claims.yaml), ``fits``, ``optim``,
``pg``, ``samples``, ``isolated``, ``base`` and ``corpora`` (the shared corpora's generators and
loaders).

The floors above it: :mod:`stages.common.runtime` (what a stage runs inside: never a dep), the
studies (``stages/<study>/``), ``flows/``, and the tools (``claimbench/``). A module imports only
its own floor or those below (``tests/common/test_floors.py``).
"""
