"""bitmark: A green-list watermark on bit n-grams of a bitwise autoregressive image model is detectable by a z-test, survives mild attacks, and is radioactive: a model trained on watermarked outputs emits detectable outputs.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml). ``prepare`` quantises scikit-learn's 8x8 digits to 4 bits;
``train`` fits a class-conditional bitwise autoregressive model (MADE) and, on its watermarked and
clean samples, the radioactive and control models; ``evaluate`` scores detection, quality,
robustness to attacks and radioactivity.
"""
