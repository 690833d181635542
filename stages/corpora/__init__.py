"""The shared corpora's data stages (``python -m stages.corpora <family>``; see README.md).

The corpora themselves, their generators and the loaders studies read them with are library code,
:mod:`stages.common.corpora`; this folder holds only the stages that write them (``dvc.yaml``,
``params.json``, :mod:`.stage`).
"""
