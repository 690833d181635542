"""mtl_kd: Distilling single-task RL teachers into one multi-task VRP model generalises to unseen variants and larger sizes; R3C re-construction improves inference.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). prepare generates CVRP-family test sets and solves
them with PyVRP's HGS (the reference); train fits one REINFORCE teacher per seen variant and
distils them into one student; evaluate takes every model's gap to HGS, the student's with R3C too.
"""
