"""The tools: what a user or developer calls, above the studies and the flow.

- :mod:`.cli`: the ``claimbench`` command
- :mod:`.scaffold` and ``study_template/``: ``claimbench new-study``
- :mod:`.depgraph`: each stage's code deps from the import graph (``claimbench deps``)
- :mod:`.params_check`: the ``params`` stage, which validates every study's params first
- :mod:`.dvc_plots` and ``templates/``: the offline ``dvc plots`` page
- :mod:`.provenance`: each claim's registration and revisions against git history

Nothing under ``stages/`` or ``flows/`` imports this package (``tests/common/test_floors.py``);
it imports them: the CLI starts the flow and runs studies' stages, the params stage imports every
study's params model, ``claimbench diff`` reads the ledger.
"""
