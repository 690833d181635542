"""Every file the fgbench stages read or write, in one place. Stages take their paths from here,
not from one another, so a stage's deps (its imports) are the modules it runs and no more."""
QA, MOLECULES = "data/fgbench/qa", "data/fgbench/molecules"
VOCAB, CARD_JSON, CARD_MD = "data/fgbench/fg_vocab.csv", "data/fgbench/card.json", "data/fgbench/card.md"
PREPARE_METRICS = "reports/fgbench/prepare.json"
PREDICTIONS = "data/fgbench/predictions"       # pairs.json and molecules.json
TEXT_MODEL = "data/fgbench/text_model"       # the text models as one MLflow model (pyfunc.py)
TRAIN_METRICS = "reports/fgbench/train.json"
METRICS = "reports/fgbench/metrics.json"
PLOT_TYPES, CSV_TYPES = "reports/fgbench/by_type.png", "reports/fgbench/by_type.csv"
PLOT_MOL, CSV_MOL = "reports/fgbench/mol_level.png", "reports/fgbench/mol_level.csv"
