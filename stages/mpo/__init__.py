"""mpo: Evolution-searched mirror-descent preference losses beat DPO and ORPO on noisy, mixed-quality control-task preferences.

Steps: ``prepare`` behaviour-clones a reference policy on Pendulum-v1 and draws preference datasets
at several label-flip rates and a mixed-quality set; ``train`` tunes DPO, cDPO and ORPO, searches the
mirror-descent loss family by CMA-ES (and, as the control, the DPO/cDPO corner with the same
budget), and scores every method on held-out draws; ``evaluate`` turns
the scores into the claims' figures and the return-vs-noise plot, and rolls the policies out in gymnasium. Every stage runs every verdict seed (``ctx.seeds``).
"""
