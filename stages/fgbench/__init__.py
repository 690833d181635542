"""fgbench: functional-group-level molecular property reasoning (Liu et al., FGBench, arXiv 2508.01055).

Builds an FGBench-format dataset from molecules shipped in installed wheels (or reads the
published one), and compares an FG-agnostic model, an FG-aware model and a small text model on
its nine question types. Heavy imports (rdkit, accfg, torch, sklearn) happen inside the stages.
"""
