"""bitmark train: for every verdict seed (``ctx.seeds``, one after another in this process), the
clean bitwise AR model and the radioactivity pair.

1. The clean model (a class-conditional MADE over the 256 bits) is fitted to the seed's training
   digits.
2. Radioactivity as in the official code (sprintml/BitMark, ``Infinity/finetune_for_radioactivity.sh``
   fine-tunes the pretrained generator itself on its own BitMark images): a copy of the clean model
   is *fine-tuned* on a mix of ``finetune_wm`` BitMark samples (delta = watermark.delta) of the
   clean model and ``finetune_real`` real training digits: the *radioactive* model. The *control*
   is the same fine-tune, the same real digits, the same batches, with the BitMark samples replaced
   by as many unwatermarked samples of the clean model: only the watermark differs.
Every seed's three models go to data/bitmark/weights/<seed>/ (what evaluate reads). The first
verdict seed's models are also saved as MLflow pyfunc folders (``pyfunc.py``); the clean and the
radioactive ones are logged and registered (``bitmark-clean_ar``, ``bitmark-radioactive_ar``).

Outputs: data/bitmark/weights, data/bitmark/model_clean, data/bitmark/model_radioactive,
data/bitmark/model_control and reports/bitmark/train.json (per seed: NLLs, the training sets' z).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from .params import PARAMS
from .paths import DIGITS, MODEL_CLEAN, MODEL_CONTROL, MODEL_RADIO, TRAIN_METRICS, WEIGHTS

ARMS = ("clean", "radioactive", "control")


def save_model(target, model, cfg: dict, code, labels) -> None:
    """The model as a pyfunc folder: weights + config artifacts, models from code, with the input
    example ``(DataFrame({"label": labels}), {"delta": 0.0, "seed": 0})`` (``labels``: a few real
    digit classes). Its signature is the one MLflow infers from sampling that example (``label``,
    the output ``p0..p63`` and ``z``, the params ``delta``, default 0: no watermark, and ``seed``),
    with ``label`` made optional and the scoring mode's bit columns ``b0..b255`` (long) added as
    optional, so that both uses of ``pyfunc.py`` pass MLflow's schema enforcement."""
    import tempfile
    from pathlib import Path

    import numpy as np
    import pandas as pd
    from mlflow.models import Model, ModelSignature
    from mlflow.types.schema import ColSpec, Schema

    from stages.common.mlmodel import save_pyfunc

    from .ar import save_weights
    from .wm import N_BITS

    example = (pd.DataFrame({"label": np.asarray(labels, dtype=np.int64)}), {"delta": 0.0, "seed": 0})
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp) / "weights.pt"
        save_weights(model, w, cfg)
        artifacts = {"weights": w, "config": str(w) + ".json"}
        inferred = Model.load(str(save_pyfunc(Path(tmp) / "probe", code, artifacts, input_example=example))).signature
        inputs = Schema([ColSpec(c.type, c.name, required=False) for c in inferred.inputs.inputs]
                        + [ColSpec("long", f"b{i}", required=False) for i in range(N_BITS)])
        save_pyfunc(target, code, artifacts, signature=ModelSignature(inputs, inferred.outputs, inferred.params),
                    input_example=example)


def finetune_sets(clean, xtr, ytr, p, w, seed: int, table, progress: bool = True) -> dict:
    """The two fine-tuning sets of one seed, as (bits, labels): ``radioactive`` = ``finetune_wm``
    BitMark samples of ``clean`` + ``finetune_real`` real training digits; ``control`` = as many
    unwatermarked samples of ``clean`` + the same real digits. Classes balanced in the samples."""
    import numpy as np

    from stages.common.seeds import rng

    from . import ar
    from .wm import encode

    labels = np.arange(p.finetune_wm) % 10
    real = rng(seed, 5).choice(len(ytr), size=p.finetune_real, replace=p.finetune_real > len(ytr))
    rb, rl = encode(xtr[real]), ytr[real]
    marked = ar.sample(clean, labels, seed * 1000 + 11, table, w.ngram, w.delta,
                       progress="bitmark: BitMark fine-tuning samples" if progress else None)
    plain = ar.sample(clean, labels, seed * 1000 + 12,
                      progress="bitmark: unwatermarked fine-tuning samples" if progress else None)
    return {"radioactive": (np.concatenate([marked, rb]), np.concatenate([labels, rl])),
            "control": (np.concatenate([plain, rb]), np.concatenate([labels, rl])),
            "samples": {"radioactive": marked, "control": plain}}


def finetune(clean, bits, labels, p, seed: int, progress: bool = True, desc: str = "bitmark: fine-tune"):
    """A copy of ``clean`` fine-tuned on ``bits``: (model, losses). Both arms of a seed use the
    same ``seed``, so they see the same batch indices."""
    from . import ar

    m = ar.build(p.hidden, p.layers, seed).to(next(clean.parameters()).device)
    m.load_state_dict(clean.state_dict())
    losses = ar.train(m, bits, labels, p.finetune_steps, p.batch, p.finetune_lr, p.weight_decay,
                      seed * 1000 + 13, progress=progress, desc=desc)
    return m, losses


def train_seed(seed: int, xtr, ytr, xte, yte, p, w, device="cpu", progress: bool = True) -> dict:
    """One seed's clean model, fine-tuning sets and fine-tuned pair: {"models": {arm: model},
    "metrics": {...}, "losses": {arm: [...]}, "cpu_s": {...}}."""
    import time

    import numpy as np

    from . import ar
    from .wm import encode, green_table, z_scores

    btr, bte = encode(xtr), encode(xte)
    table = green_table(w.key, w.ngram)
    t0 = time.process_time()
    clean = ar.build(p.hidden, p.layers, seed).to(device)
    losses = {"clean": ar.train(clean, btr, ytr, p.steps, p.batch, p.lr, p.weight_decay, seed, progress=progress,
                                desc=f"bitmark: clean AR model, seed {seed}")}
    clean_s = time.process_time() - t0
    metrics = {"clean": {"nll_bits_train": ar.nll_bits(clean, btr, ytr), "nll_bits_test": ar.nll_bits(clean, bte, yte),
                         "loss_last50_mean": float(np.mean(losses["clean"][-50:]))}}
    t0 = time.process_time()
    sets = finetune_sets(clean, xtr, ytr, p, w, seed, table, progress)
    sample_s = time.process_time() - t0
    models = {"clean": clean}
    t0 = time.process_time()
    for name in ("radioactive", "control"):
        bits, labels = sets[name]
        models[name], losses[name] = finetune(clean, bits, labels, p, seed, progress, f"bitmark: {name} fine-tune, seed {seed}")
        metrics[name] = {"finetune_set_z_mean": float(z_scores(bits, table, w.ngram).mean()),
                         "samples_z_mean": float(z_scores(sets["samples"][name], table, w.ngram).mean()),
                         "nll_bits_test": ar.nll_bits(models[name], bte, yte),
                         "loss_last50_mean": float(np.mean(losses[name][-50:]))}
    metrics["finetune"] = {"wm_share": p.finetune_wm / (p.finetune_wm + p.finetune_real),
                           "real_z_mean": float(z_scores(btr, table, w.ngram).mean())}
    return {"models": models, "metrics": metrics, "losses": losses,
            "cpu_s": {"clean": clean_s, "sampling": sample_s, "finetune": time.process_time() - t0}}


def main() -> None:
    with stage("bitmark", "train", PARAMS) as ctx:
        from pathlib import Path

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import atomic_dir, write_json
        from stages.common.seeds import per_seed_metrics, run_seeds

        from .ar import save_weights
        from .data import seed_split

        limit_threads()        # one thread: a 256-bit MADE on batches of 128 gains nothing from two
        d = dict(np.load(ctx.path(DIGITS)))
        p, w, seeds = ctx.params.train, ctx.params.watermark, ctx.seeds
        device = select_device(ctx.common.device)
        cfg = {"hidden": p.hidden, "layers": p.layers, "key": w.key, "ngram": w.ngram}

        def one(seed: int) -> dict:
            try:
                split = seed_split(d, seed)
            except KeyError as exc:
                fail(str(exc.args[0]))
            r = train_seed(seed, *split, p, w, device)
            m = r["metrics"]
            print(f"  seed {seed}: clean NLL {m['clean']['nll_bits_train']:.1f} / {m['clean']['nll_bits_test']:.1f} bits "
                  f"(train / test); fine-tuning sets z {m['radioactive']['finetune_set_z_mean']:.2f} (BitMark mix) / "
                  f"{m['control']['finetune_set_z_mean']:.2f} (control); CPU s: "
                  + ", ".join(f"{k} {v:.1f}" for k, v in r["cpu_s"].items()), flush=True)
            return r

        res = run_seeds(seeds, one, "seed")
        with atomic_dir(ctx.path(WEIGHTS)) as tmp:
            for seed, r in res.items():
                for arm in ARMS:
                    save_weights(r["models"][arm], tmp / str(seed) / f"{arm}.pt", {**cfg, "seed": seed})
        first = res[seeds[0]]
        for arm in ARMS:
            lo = first["losses"][arm]
            ctx.run.log_curve(f"train.{arm}.loss", lo[::10], list(range(0, len(lo), 10)))
        code = Path(__file__).with_name("pyfunc.py")
        example_labels = seed_split(d, seeds[0])[3][:3]    # the first verdict seed's first three test digits
        for arm, target in (("clean", MODEL_CLEAN), ("radioactive", MODEL_RADIO), ("control", MODEL_CONTROL)):
            save_model(ctx.path(target), first["models"][arm], {**cfg, "seed": seeds[0]}, code, example_labels)
        ctx.run.log_model(ctx.path(MODEL_CLEAN), "clean_ar", params={"trained_on": "real digits", "seed": seeds[0], **cfg})
        ctx.run.log_model(ctx.path(MODEL_RADIO), "radioactive_ar", params={
            "trained_on": f"the clean model fine-tuned on {p.finetune_wm} BitMark samples (delta {w.delta}) "
                          f"and {p.finetune_real} real digits", "seed": seeds[0], **cfg})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: r["metrics"] for s, r in res.items()},
                                                             model_seed=seeds[0]))
        ctx.run.log_metrics({f"{k}_cpu_s": sum(r["cpu_s"][k] for r in res.values()) for k in first["cpu_s"]})


if __name__ == "__main__":
    main()
