"""autoopt: an AutoOpt-11k-format dataset (generated, or the published one) and the AutoOpt chain
image -> LaTeX (M1) -> Pyomo (M2) -> solution (M3, BOBD). Sinha, Arora & Pujara, arXiv 2510.21436.

Sub-packages, in the order of the chain (a later one may import an earlier one, never the
reverse): ``data`` (the dataset), ``m1`` (image -> LaTeX), ``m2`` (LaTeX -> Pyomo, the sandbox),
``m3`` (solving: BOBD and its baselines), ``chain`` (the whole chain: the e2e stage, the solve
tool). Shared at this level: ``params``, ``paths``, ``tokenizer``. Heavy imports live inside the
stages."""
