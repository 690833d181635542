"""autoopt, the whole chain image -> M1 -> M2 -> M3 -> solution: the shared chain steps, the e2e
stage and the one-image solve tool."""
