"""rppg_cogload: Fusing remote modalities improves heart-rate estimation (< 3 BPM), and remote PPG + respiration + blink classify cognitive load nearly as well as contact sensing (86.49% vs 87.5%).

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` simulates participants' physiology and remote
and contact sensors and measures every recording's vital signs; ``train`` cross-validates
cognitive-load classifiers on each feature set; ``evaluate`` scores heart-rate fusion and load accuracy.
"""
