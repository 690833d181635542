"""jsp_multipolicy: K policies sharing one network, trained by self-labels with adaptive imitation intensity, beat a single self-labelled policy (SLIM) on job shops, without a reward function.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). prepare draws random 10x10 and 15x15 job shops and 10x10
flow shops and solves them with CP-SAT; train fits SLIM (K = 1) and the K-policy network on the same
random training shops; evaluate scores both and the SPT / MWKR / MOPNR rules by their gap to CP-SAT.
"""
