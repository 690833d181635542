"""bitmark: A green-list watermark on bit n-grams of a bitwise autoregressive image model is detectable by a z-test, survives mild attacks, and is radioactive: a model fine-tuned on watermarked outputs emits detectable outputs.

Steps: ``prepare`` (the data), ``train`` (the method and its baseline), ``evaluate`` (metrics
and plots for the claims in claims.yaml), each over every verdict seed. ``prepare`` quantises
scikit-learn's 8x8 digits to 4 bits and splits them per seed; ``train`` fits a class-conditional
bitwise autoregressive model (MADE) and fine-tunes it on a mix of its BitMark samples and real
digits (the radioactive model) and on the same mix without the watermark (the control);
``evaluate`` scores detection, quality, robustness to attacks (against a token-level watermark)
and radioactivity.
"""
