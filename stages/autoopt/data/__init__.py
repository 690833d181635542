"""autoopt data: the dataset (formulation grammar, rendering, the published-format reader, the
prepare stage)."""
