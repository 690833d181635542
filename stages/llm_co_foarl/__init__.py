"""llm_co_foarl: a sequence model trained by SFT then feasibility-and-optimality-aware RL maps a text CO instance to a near-optimal feasible solution.

Steps: ``prepare`` draws TSP and 0/1 knapsack instances and proves their optima with OR-Tools;
``train`` fits a small encoder-decoder transformer by SFT, then FOARL (GRPO with a feasibility and
optimality reward), and an equal-compute SFT control; ``evaluate`` decodes the held-out instances
without a mask: feasible rate and optimality gap per model, next to random and greedy heuristics.
"""
