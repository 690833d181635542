"""mnl_assortment: online and offline assortment optimisation under the linear MNL model (Han, Blanchet & Zhou, NeurIPS 2025)."""
