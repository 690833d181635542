"""diff_purify: Adversary-aware purification (a score prior plus a learned score of adversarial perturbations) gives higher robust accuracy than prior-only purification and no defence, at a small cost in clean accuracy.

Steps: ``prepare`` (scikit-learn's 8x8 digits, split), ``train`` (an MLP classifier, a denoising score
prior, and a score of PGD perturbations, plus a random-noise control), ``evaluate`` (clean and robust
accuracy of no defence, prior-only and adversary-aware purification under PGD and BPDA+EOT attacks).
"""
