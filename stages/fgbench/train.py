"""fgbench train: per verdict seed, the models fitted on that seed's train split, answering every
question of its test split.

Per (question type, dataset): a constant baseline (the training majority for boolean questions,
zero change for value questions); a structure-blind model (the label the question states, no
molecule); an FG-agnostic model (fingerprints only); an FG-aware model (adds the FG edit and where
it sits); and its control, the FG-aware model on shuffled FG edits (each question's edit block
from another question of its type and dataset): all scikit-learn random forests with the same
settings. One text model for all boolean questions and one for all value questions, trained from
scratch in torch on the question text. Molecule level, per regression dataset: a random forest on
Morgan fingerprints, on fingerprints + AccFG group counts, and on fingerprints + another
molecule's counts (the control).

The seeds run one after another in this process (``run_seeds``); the fingerprints and the FG-edit
parts of a question are computed once for all seeds (benchmarks/fgbench/seeds.py measures that
against one seed at a time). A seed's figures depend on its seed alone: its split comes from
prepare, its forests and text model from ``seed``.

Outputs: data/fgbench/predictions/<seed>/{pairs.json, molecules.json}, reports/fgbench/train.json
(``per_seed``) and data/fgbench/text_model: the first verdict seed's text models as an MLflow
pyfunc model, logged and registered as ``fgbench-text``
(``mlflow.pyfunc.load_model("models:/fgbench-text@ledger")``).
"""
from __future__ import annotations

import zlib

from stages.common.runtime.stage import fail, stage

from .params import FGBenchParams
from .paths import MOLECULES, PREDICTIONS, QA, TEXT_MODEL, TRAIN_METRICS

MODELS = ("constant", "label_only", "fg_agnostic", "fg_aware", "fg_shuffled", "text")
FORESTS = ("label_only", "fg_agnostic", "fg_aware", "fg_shuffled")
RNG_PAIR, RNG_MOL, RNG_TEXT, RNG_SHUFFLE = 1, 2, 3, 4


def _bool(s: str) -> int:
    return 1 if str(s).strip().lower() == "true" else 0


class Caches:
    """What the seeds share in one process: fingerprints and FG-edit parts, by molecule / edit."""

    def __init__(self, p):
        from . import features

        self.fp = features.Fingerprints(p.fp_radius, p.fp_bits)
        self.edits = features.EditParts()


def shuffled(n: int, seed: int, key: str, part: int):
    """A permutation of n rows drawn from (seed, the control's stream, the group, the split)."""
    import numpy as np

    return np.random.default_rng([seed, RNG_SHUFFLE, zlib.crc32(key.encode()), part]).permutation(n)


def pair_models(train: list[dict], test: list[dict], p, seed: int, classes: dict, caches: Caches | None = None,
                progress: bool = True):
    """Predictions of the constant baseline and the forests (FORESTS) for every test question."""
    import numpy as np
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from tqdm import tqdm

    from . import features, records

    caches = caches or Caches(p)
    fp = caches.fp
    vocab = features.edit_vocab(train)
    preds = {m: [None] * len(test) for m in ("constant", *FORESTS)}
    groups = sorted({(r["type"], r["dataset"]) for r in test})
    fitted = {}
    for type_, dataset in tqdm(groups, desc=f"pair models, seed {seed}", disable=not progress, mininterval=2):
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
        if ok:
            key = f"{type_}|{dataset}"
            base = (features.agnostic(tr, fp, cls), features.agnostic(te, fp, cls))
            edit = (features.edit_matrix(tr, vocab, caches.edits), features.edit_matrix(te, vocab, caches.edits))
            blind = (edit[0][shuffled(len(tr), seed, key, 0)], edit[1][shuffled(len(te), seed, key, 1)])
            xs = {"label_only": (features.label_only(tr, cls), features.label_only(te, cls)),
                  "fg_agnostic": base,
                  "fg_aware": (np.hstack([base[0], edit[0]]), np.hstack([base[1], edit[1]])),
                  "fg_shuffled": (np.hstack([base[0], blind[0]]), np.hstack([base[1], blind[1]]))}
        for name in FORESTS:
            if not ok:
                out = const
            else:
                kw = dict(n_estimators=p.pair_trees, max_features="sqrt", min_samples_leaf=p.min_leaf,
                          n_jobs=1, random_state=seed * 1000 + RNG_PAIR)
                model = RandomForestRegressor(**kw) if task == "value_regression" else \
                    RandomForestClassifier(**kw)
                model.fit(xs[name][0], y)
                out = model.predict(xs[name][1])
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


def molecule_models(mols: dict, p, seed: int, regression: list[str], caches: Caches | None = None,
                    progress: bool = True):
    """Per regression dataset: test predictions of RF(fingerprints), RF(fingerprints + FG counts)
    and RF(fingerprints + FG counts of another molecule of the same split: the control)."""
    import json

    import numpy as np
    from sklearn.ensemble import RandomForestRegressor
    from tqdm import tqdm

    from . import features

    fp = (caches or Caches(p)).fp
    out = {}
    for dataset in tqdm(regression, desc=f"molecule models, seed {seed}", disable=not progress, mininterval=2):
        tr = [r for r in mols["train"] if r["dataset"] == dataset]
        te = [r for r in mols["test"] if r["dataset"] == dataset]
        if len(tr) < p.min_train or not te:
            continue
        names = sorted({n for r in tr for n in json.loads(r["fgs"])})
        y = np.asarray([float(r["label"]) for r in tr])
        x_fp = np.asarray([fp(r["smiles"]) for r in tr])
        t_fp = np.asarray([fp(r["smiles"]) for r in te])
        c_tr = features.fg_counts([r["fgs"] for r in tr], names)
        c_te = features.fg_counts([r["fgs"] for r in te], names)
        key = f"mol|{dataset}"
        arms = {"fp": (x_fp, t_fp),
                "fp_fg": (np.hstack([x_fp, c_tr]), np.hstack([t_fp, c_te])),
                "fp_fg_shuffled": (np.hstack([x_fp, c_tr[shuffled(len(tr), seed, key, 0)]]),
                                   np.hstack([t_fp, c_te[shuffled(len(te), seed, key, 1)]]))}
        res = {"y": [float(r["label"]) for r in te], "smiles": [r["smiles"] for r in te], "fg_vocab": len(names)}
        for name, (xa, xb) in arms.items():
            rf = RandomForestRegressor(n_estimators=p.mol_trees, max_features="sqrt", n_jobs=1,
                                       random_state=seed * 1000 + RNG_MOL)
            rf.fit(xa, y)
            res[name] = rf.predict(xb).tolist()
        out[dataset] = res
    return out


def class_ranks(rows: list[dict]) -> dict:
    """Per dataset, the rank of each class label (for the stated label as a number)."""
    from . import features

    classes = {}
    for d in sorted({r["dataset"] for r in rows}):
        labels = [r[k] for r in rows if r["dataset"] == d for k in ("target_label", "ref_label")]
        classes[d] = features.class_ranks(labels)
    return classes


def train_seed(train: list[dict], test: list[dict], mol_rows: dict, p, seed: int,
               caches: Caches | None = None, progress: bool = True) -> dict:
    """One verdict seed: every model's answer to each test question (``pairs``), the molecule-level
    predictions (``molecules``), the figures of train.json (``metrics``), and the text models
    (``text``: models, value scale, loss curves)."""
    caches = caches or Caches(p)
    classes = class_ranks(train + test)
    preds, fitted, vocab_size = pair_models(train, test, p, seed, classes, caches, progress)
    preds["text"], losses, text, scale = text_models(train, test, p, seed, progress)
    regression = sorted({r["dataset"] for r in train if r["type"].endswith("value_regression")})
    mol_preds = molecule_models(mol_rows, p, seed, regression, caches, progress)
    pairs = [{"type": r["type"], "dataset": r["dataset"], "answer": r["answer"],
              **{m: preds[m][i] for m in MODELS}} for i, r in enumerate(test)]
    metrics = {"questions": {"train": len(train), "test": len(test)}, "edit_vocabulary": vocab_size,
               "groups": fitted, "text_final_loss": {k: v[-1] for k, v in losses.items()},
               "molecule_datasets": sorted(mol_preds)}
    return {"pairs": pairs, "molecules": mol_preds, "metrics": metrics,
            "text": {"models": text, "scale": scale, "losses": losses}}


def load_seed(root, seed: int, where: str = "fgbench.train"):
    """A seed's (train, test, molecule rows) from prepare's folders; records checked (schema)."""
    import datasets

    from . import records

    qa = datasets.load_from_disk(str(root / QA / str(seed)))
    mols = datasets.load_from_disk(str(root / MOLECULES / str(seed)))
    train = [dict(r) for r in qa["train"]]
    test = [dict(r) for r in qa["test"]]
    for i, r in enumerate(train[:50] + test[:50]):
        records.check_record(r, f"{QA}/{seed}[{i}]")
    return train, test, {s: [dict(r) for r in mols[s]] for s in records.SPLITS}


def main() -> None:
    with stage("fgbench", "train", FGBenchParams) as ctx:
        from stages.common.device import limit_threads
        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import gather_shards, per_seed_metrics, run_seeds

        from . import records, textmodel

        limit_threads()
        p, seeds = ctx.params.train, ctx.seeds
        found = sorted(int(d.name) for d in ctx.path(QA).iterdir() if d.is_dir() and d.name.isdigit())
        try:
            gather_shards({QA: found}, seeds)
        except ValueError as exc:
            fail(f"fgbench.train: {exc}")
        caches = Caches(p)
        first_test = []            # the first verdict seed's test questions: the text model's input example

        def one(seed: int) -> dict:
            try:
                train, test, mol_rows = load_seed(ctx.root, seed)
            except records.FGBenchDataError as exc:
                fail(f"fgbench.train: {exc}")
            if seed == seeds[0]:
                first_test.extend(test)
            return train_seed(train, test, mol_rows, p, seed, caches)

        res = run_seeds(seeds, one, "seed")
        first = res[seeds[0]]
        for kind, curve in first["text"]["losses"].items():
            ctx.run.log_curve(f"text.{kind}.loss", curve)
        textmodel.save_mlflow(ctx.path(TEXT_MODEL), first["text"]["models"], first["text"]["scale"], p.text,
                              first_test)
        ctx.run.log_model(ctx.path(TEXT_MODEL), "text", params={
            "seed": seeds[0], "train_questions": first["metrics"]["questions"]["train"], **p.text.model_dump()})
        with atomic_dir(ctx.path(PREDICTIONS)) as tmp:
            for seed, r in res.items():
                write_json(tmp / str(seed) / "pairs.json", r["pairs"])
                write_json(tmp / str(seed) / "molecules.json", r["molecules"])
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: r["metrics"] for s, r in res.items()},
                                                             text_model_seed=seeds[0]))
        print(f"  seeds {seeds}: answered {sum(len(r['pairs']) for r in res.values())} test questions with "
              f"{len(MODELS)} models; molecule level on {first['metrics']['molecule_datasets']}")


if __name__ == "__main__":
    main()
