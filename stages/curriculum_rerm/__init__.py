"""curriculum_rerm: curriculum learning as biased regularised ERM ("When Does Curriculum Learning
Help? A Theoretical Perspective", NeurIPS 2025): ridge task sequences (closed form and SGD) and an
MLP on noisy digits, good curriculum vs direct training vs a curriculum violating the condition."""
