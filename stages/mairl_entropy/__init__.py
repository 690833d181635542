"""mairl_entropy: multi-agent inverse RL in entropy-regularised Markov games (Freihaut & Ramponi,
"On Feasible Rewards in Multi-Agent Inverse Reinforcement Learning", NeurIPS 2025,
arXiv 2411.15046): a Nash equilibrium is rationalised by rewards of different game nature; the
entropy-regularised equilibrium (QRE) is computed, checked unique, and rewards recovered from
demonstrations with error falling like 1/sqrt(n)."""
