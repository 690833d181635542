"""ensemble_tail: majority-vote ensembles (MoVE / ROVE / ROVEs) over subsampled SAA solutions
turn the slow (polynomial) tail of a heavy-tailed base learner into an exponential one
(Qian, Ying, Lam & Yin, "Subsampled Ensemble Can Improve Generalization Tail Exponentially",
arXiv 2405.14741; official code mickeyhqian/VoteEnsemble)."""
