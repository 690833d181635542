"""Every file the autoopt stages read or write, in one place (relative to the repository root).
Stages take their paths from here, not from one another, so a stage's deps (its imports) are the
modules it runs and no more."""
DATASET = "data/autoopt/dataset"
CARD_JSON, CARD_MD = "data/autoopt/card.json", "data/autoopt/card.md"
CONTACT = "reports/autoopt/contact_sheet.png"
PREPARE_METRICS = "reports/autoopt/prepare.json"
MODEL_DIR = "data/autoopt/m1"
TRAIN_METRICS = "reports/autoopt/train.json"
# M1 training: greedy BLEU on the validation split against training steps (the validation curve)
PLOT_VAL_CURVE = "reports/autoopt/m1_validation_curve.png"
CSV_VAL_CURVE = "reports/autoopt/m1_validation_curve.csv"
# M1 evaluation: its own figures; reports/autoopt/metrics.json (what claims.yaml reads) is the
# end-to-end stage's merge of the M1, M2, M3 and end-to-end figures
M1_METRICS = "reports/autoopt/m1_metrics.json"
M1_PREDICTIONS = "data/autoopt/m1_predictions.json"   # M1's greedy LaTeX for every test image
PLOT_BLEU = "reports/autoopt/bleu.png"
PLOT_CURVE = "reports/autoopt/learning_curve.png"
CSV_CURVE = "reports/autoopt/learning_curve.csv"
CSV_SCORES = "reports/autoopt/scores.csv"
EXAMPLES = "reports/autoopt/examples.json"
# M2 (LaTeX -> Pyomo): the learned seq2seq model, and the evaluation of both translators
M2_MODEL_DIR = "data/autoopt/m2"
M2_TRAIN_METRICS = "reports/autoopt/m2_train.json"
M2_METRICS = "reports/autoopt/m2_metrics.json"
M2_EXAMPLES = "reports/autoopt/m2_examples.json"
PLOT_M2 = "reports/autoopt/m2_equivalence.png"
CSV_M2 = "reports/autoopt/m2_scores.csv"
# M3 (BOBD vs IPOPT vs a GA on a benchmark with known optima)
M3_METRICS = "reports/autoopt/m3_metrics.json"
M3_RUNS = "reports/autoopt/m3_runs.csv"
M3_PLOT_DIR = "reports/autoopt/m3_plots"
# end to end: image -> M1 -> M2 -> M3 -> solution; and the study's merged metrics
E2E_ROWS = "reports/autoopt/e2e_rows.csv"
PLOT_E2E = "reports/autoopt/e2e.png"
METRICS = "reports/autoopt/metrics.json"
