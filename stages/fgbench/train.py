"""fgbench train: the models, fitted on the train split, answering every test question.

Per (question type, dataset): a constant baseline (the training majority for boolean questions,
zero change for value questions), an FG-agnostic model (fingerprints only) and an FG-aware
model (adds the FG edit and where it sits), both scikit-learn random forests; and one
text model for all boolean questions and one for all value questions, trained from scratch in
torch on the question text. Molecule level, per regression dataset: a random forest on Morgan
fingerprints vs one on fingerprints + AccFG group counts.

Outputs: data/fgbench/predictions/{pairs.json, molecules.json}, reports/fgbench/train.json and
data/fgbench/text_model (the text models as an MLflow pyfunc model, logged and registered as
``fgbench-text``: ``mlflow.pyfunc.load_model("models:/fgbench-text@ledger")``).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import FGBenchParams
from .paths import MOLECULES, PREDICTIONS, QA, TEXT_MODEL, TRAIN_METRICS

MODELS = ("constant", "fg_agnostic", "fg_aware", "text")
RNG_PAIR, RNG_MOL, RNG_TEXT = 1, 2, 3


def _bool(s: str) -> int:
    return 1 if str(s).strip().lower() == "true" else 0


def pair_models(train: list[dict], test: list[dict], p, seed: int, classes: dict, progress: bool = True):
    """Predictions of the constant, FG-agnostic and FG-aware models for every test question."""
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from tqdm import tqdm

    from . import features, records

    fp = features.Fingerprints(p.fp_radius, p.fp_bits)
    vocab = features.edit_vocab(train)
    preds = {m: [None] * len(test) for m in ("constant", "fg_agnostic", "fg_aware")}
    groups = sorted({(r["type"], r["dataset"]) for r in test})
    fitted = {}
    for type_, dataset in tqdm(groups, desc="pair models", disable=not progress, mininterval=2):
        _, task = records.split_type(type_)
        tr = [r for r in train if r["type"] == type_ and r["dataset"] == dataset]
        te_idx = [i for i, r in enumerate(test) if r["type"] == type_ and r["dataset"] == dataset]
        te = [test[i] for i in te_idx]
        cls = classes.get(dataset, {})
        if task == "value_regression":
            y = np.asarray([float(r["answer"]) for r in tr])
            const = np.zeros(len(te))
        else:
            y = np.asarray([_bool(r["answer"]) for r in tr])
            major = int(y.mean() > 0.5) if len(y) else 0
            const = np.full(len(te), major)
        for i, v in zip(te_idx, const):
            preds["constant"][i] = _answer(task, v)
        ok = len(tr) >= p.min_train and (task == "value_regression" or len(set(y.tolist())) == 2)
        fitted[f"{type_}:{dataset}"] = {"train": len(tr), "test": len(te), "fitted": bool(ok)}
        for name, make in (("fg_agnostic", lambda rs: features.agnostic(rs, fp, cls)),
                           ("fg_aware", lambda rs: features.aware(rs, fp, cls, vocab))):
            if not ok:
                out = const
            else:
                kw = dict(n_estimators=p.pair_trees, max_features="sqrt", min_samples_leaf=p.min_leaf,
                          n_jobs=1, random_state=seed * 1000 + RNG_PAIR)
                model = RandomForestRegressor(**kw) if task == "value_regression" else \
                    RandomForestClassifier(**kw)
                model.fit(make(tr), y)
                out = model.predict(make(te))
            for i, v in zip(te_idx, out):
                preds[name][i] = _answer(task, v)
    return preds, fitted, len(vocab)


def _answer(task: str, v) -> str:
    return repr(float(v)) if task == "value_regression" else str(bool(int(v)))


def text_models(train: list[dict], test: list[dict], p, seed: int, progress: bool = True):
    """The text models' answers for every test question, their training losses, the models
    ({'bool': ..., 'value': ...}) and the value model's scale per dataset."""
    import numpy as np

    from . import textmodel

    models, losses, scale = {}, {}, {}
    for kind in ("bool", "value"):
        tr = [r for r in train if textmodel.kind_of(r["type"]) == kind]
        if not tr or not any(textmodel.kind_of(r["type"]) == kind for r in test):
            continue
        if kind == "bool":
            y = np.asarray([_bool(r["answer"]) for r in tr], dtype=np.float64)
        else:
            ys = np.asarray([float(r["answer"]) for r in tr])
            ds = [r["dataset"] for r in tr]
            scale = {d: float(np.std([v for v, dd in zip(ys, ds) if dd == d]) or 1.0) for d in set(ds)}
            y = np.asarray([v / scale[d] for v, d in zip(ys, ds)])
        models[kind], losses[kind] = textmodel.fit([r["question"] for r in tr], y, kind, p.text,
                                                   seed * 1000 + RNG_TEXT, progress)
    preds = textmodel.answer_all(models, scale, test, p.text.buckets, p.text.max_tokens)
    return preds, losses, models, scale


def molecule_models(mols: dict, p, seed: int, regression: list[str], progress: bool = True):
    """Per regression dataset: test predictions of RF(fingerprints) and RF(fingerprints + FG counts)."""
    import json

    import numpy as np
    from sklearn.ensemble import RandomForestRegressor
    from tqdm import tqdm

    from . import features

    fp = features.Fingerprints(p.fp_radius, p.fp_bits)
    out = {}
    for dataset in tqdm(regression, desc="molecule models", disable=not progress, mininterval=2):
        tr = [r for r in mols["train"] if r["dataset"] == dataset]
        te = [r for r in mols["test"] if r["dataset"] == dataset]
        if len(tr) < p.min_train or not te:
            continue
        names = sorted({n for r in tr for n in json.loads(r["fgs"])})
        y = np.asarray([float(r["label"]) for r in tr])
        x_fp = np.asarray([fp(r["smiles"]) for r in tr])
        t_fp = np.asarray([fp(r["smiles"]) for r in te])
        x_fg = np.hstack([x_fp, features.fg_counts([r["fgs"] for r in tr], names)])
        t_fg = np.hstack([t_fp, features.fg_counts([r["fgs"] for r in te], names)])
        res = {"y": [float(r["label"]) for r in te], "smiles": [r["smiles"] for r in te], "fg_vocab": len(names)}
        for name, (xa, xb) in (("fp", (x_fp, t_fp)), ("fp_fg", (x_fg, t_fg))):
            rf = RandomForestRegressor(n_estimators=p.mol_trees, max_features="sqrt", n_jobs=1,
                                       random_state=seed * 1000 + RNG_MOL)
            rf.fit(xa, y)
            res[name] = rf.predict(xb).tolist()
        out[dataset] = res
    return out


def main() -> None:
    with stage("fgbench", "train", FGBenchParams) as ctx:
        import datasets

        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json

        from . import features, records, textmodel

        limit_threads()
        p = ctx.params.train
        qa = datasets.load_from_disk(str(ctx.path(QA)))
        mols = datasets.load_from_disk(str(ctx.path(MOLECULES)))
        train = [dict(r) for r in qa["train"]]
        test = [dict(r) for r in qa["test"]]
        for i, r in enumerate(train[:50] + test[:50]):
            try:
                records.check_record(r, f"{QA}[{i}]")
            except records.FGBenchDataError as exc:
                fail(f"fgbench.train: {exc}")
        mol_rows = {s: [dict(r) for r in mols[s]] for s in records.SPLITS}
        classes = {}
        for d in sorted({r["dataset"] for r in train + test}):
            labels = [r[k] for r in train + test if r["dataset"] == d for k in ("target_label", "ref_label")]
            classes[d] = features.class_ranks(labels)
        preds, fitted, vocab_size = pair_models(train, test, p, ctx.seed, classes)
        preds["text"], losses, text, scale = text_models(train, test, p, ctx.seed)
        regression = sorted({r["dataset"] for r in train if r["type"].endswith("value_regression")})
        mol_preds = molecule_models(mol_rows, p, ctx.seed, regression)
        for kind, curve in losses.items():
            ctx.run.log_curve(f"text.{kind}.loss", curve)
        pairs = [{"type": r["type"], "dataset": r["dataset"], "answer": r["answer"],
                  **{m: preds[m][i] for m in MODELS}} for i, r in enumerate(test)]
        textmodel.save_mlflow(ctx.path(TEXT_MODEL), text, scale, p.text)
        ctx.run.log_model(ctx.path(TEXT_MODEL), "text", params={"train_questions": len(train), **p.text.model_dump()})
        with atomic_dir(ctx.path(PREDICTIONS)) as tmp:
            write_json(tmp / "pairs.json", pairs)
            write_json(tmp / "molecules.json", mol_preds)
        write_json(ctx.path(TRAIN_METRICS), {
            "questions": {"train": len(train), "test": len(test)}, "edit_vocabulary": vocab_size,
            "groups": fitted, "text_final_loss": {k: v[-1] for k, v in losses.items()},
            "molecule_datasets": sorted(mol_preds)})
        print(f"  answered {len(test)} test questions with {len(MODELS)} models; molecule level on {sorted(mol_preds)}")


if __name__ == "__main__":
    main()
