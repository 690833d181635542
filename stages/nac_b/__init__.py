"""nac_b: natural actor-critic with batching (NAC-B) on periodic unichain average-reward MDPs."""
