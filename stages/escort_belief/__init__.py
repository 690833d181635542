"""escort_belief: SVGD, ESCORT and a bootstrap particle filter on drifting correlated Gaussian-mixture beliefs and a light-dark POMDP."""
