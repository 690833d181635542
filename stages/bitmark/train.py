"""bitmark train: the clean bitwise AR model on the real digits, then the radioactivity pair.

1. The clean model (a class-conditional MADE over the 256 bits) is fitted to the training digits.
2. From it, ``radio_samples`` images (classes balanced) are drawn twice: watermarked (BitMark at
   the chosen delta) and clean. A second model of the same architecture is fitted to each: the
   *radioactive* model sees only watermarked samples; the *control* only clean samples.
Each model is saved as an MLflow pyfunc folder (``pyfunc.py``); the clean and the radioactive
models are logged and registered (``bitmark-clean_ar``, ``bitmark-radioactive_ar``).

Outputs: data/bitmark/model_clean, data/bitmark/model_radioactive, data/bitmark/model_control and
reports/bitmark/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, MODEL_CLEAN, MODEL_CONTROL, MODEL_RADIO, TRAIN_METRICS


def save_model(target, model, cfg: dict, code) -> None:
    """The model as a pyfunc folder: weights + config artifacts, models from code; its signature
    declares the sampling params ``delta`` (default 0: no watermark) and ``seed``."""
    import tempfile
    from pathlib import Path

    from mlflow.models import ModelSignature
    from mlflow.types.schema import ParamSchema, ParamSpec

    from stages.common.mlmodel import save_pyfunc

    from .ar import save_weights

    signature = ModelSignature(inputs=None, outputs=None,
                               params=ParamSchema([ParamSpec("delta", "double", 0.0), ParamSpec("seed", "long", 0)]))
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp) / "weights.pt"
        save_weights(model, w, cfg)
        save_pyfunc(target, code, {"weights": w, "config": str(w) + ".json"}, signature=signature)


def main() -> None:
    with stage("bitmark", "train", PARAMS) as ctx:
        import time
        from pathlib import Path

        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json

        from . import ar
        from .wm import encode, green_table, z_scores

        limit_threads()        # one thread: a 256-bit MADE on batches of 128 gains nothing from two
        d = np.load(ctx.path(DIGITS))
        p, w = ctx.params.train, ctx.params.watermark
        btr, ytr = encode(d["train_pixels"].astype(np.int64)), d["train_labels"].astype(np.int64)
        bte, yte = encode(d["test_pixels"].astype(np.int64)), d["test_labels"].astype(np.int64)
        table = green_table(w.key, w.ngram)
        device = select_device(ctx.common.device)
        cfg = {"hidden": p.hidden, "layers": p.layers, "key": w.key, "ngram": w.ngram}
        code = Path(__file__).with_name("pyfunc.py")

        t0 = time.process_time()
        clean = ar.build(p.hidden, p.layers, ctx.seed).to(device)
        losses = ar.train(clean, btr, ytr, p.steps, p.batch, p.lr, p.weight_decay, ctx.seed, desc="bitmark: clean AR model")
        clean_s = time.process_time() - t0
        ctx.run.log_curve("train.clean.loss", losses[::10], list(range(0, len(losses), 10)))
        metrics = {"clean": {"nll_bits_train": ar.nll_bits(clean, btr, ytr), "nll_bits_test": ar.nll_bits(clean, bte, yte),
                             "loss_last50_mean": float(np.mean(losses[-50:]))}}

        labels = np.arange(p.radio_samples) % 10
        t0 = time.process_time()
        sets = {"radioactive": ar.sample(clean, labels, ctx.seed * 1000 + 11, table, w.ngram, w.delta,
                                         progress="bitmark: watermarked training set"),
                "control": ar.sample(clean, labels, ctx.seed * 1000 + 12, progress="bitmark: clean training set")}
        sample_s = time.process_time() - t0
        models = {}
        t0 = time.process_time()
        for i, (name, data) in enumerate(sets.items()):
            m = ar.build(p.hidden, p.layers, ctx.seed + 1).to(device)   # the same init for both: only the data differ
            lo = ar.train(m, data, labels, p.radio_steps, p.batch, p.lr, p.weight_decay, ctx.seed + 1 + i,
                          desc=f"bitmark: {name} AR model")
            ctx.run.log_curve(f"train.{name}.loss", lo[::10], list(range(0, len(lo), 10)))
            models[name] = m
            metrics[name] = {"training_set_z_mean": float(z_scores(data, table, w.ngram).mean()),
                             "nll_bits_test": ar.nll_bits(m, bte, yte), "loss_last50_mean": float(np.mean(lo[-50:]))}
        radio_s = time.process_time() - t0

        t0 = time.process_time()
        for name, target, m in (("clean", MODEL_CLEAN, clean), ("radioactive", MODEL_RADIO, models["radioactive"]),
                                ("control", MODEL_CONTROL, models["control"])):
            save_model(ctx.path(target), m, {**cfg, "seed": ctx.seed if name == "clean" else ctx.seed + 1}, code)
        ctx.run.log_model(ctx.path(MODEL_CLEAN), "clean_ar", params={"trained_on": "real digits", **cfg})
        ctx.run.log_model(ctx.path(MODEL_RADIO), "radioactive_ar",
                          params={"trained_on": f"{p.radio_samples} BitMark samples, delta {w.delta}", **cfg})
        save_s = time.process_time() - t0
        write_json(ctx.path(TRAIN_METRICS), metrics)
        timing = {"clean_cpu_s": clean_s, "clean_steps_per_cpu_s": p.steps / max(clean_s, 1e-9),
                  "radio_sampling_cpu_s": sample_s, "radio_training_cpu_s": radio_s, "save_cpu_s": save_s}
        ctx.run.log_metrics(timing)
        print(f"  clean AR: NLL {metrics['clean']['nll_bits_train']:.1f} / {metrics['clean']['nll_bits_test']:.1f} bits "
              f"(train / test), {timing['clean_steps_per_cpu_s']:.0f} steps/s; training sets z "
              f"{metrics['radioactive']['training_set_z_mean']:.2f} (watermarked) / {metrics['control']['training_set_z_mean']:.2f} "
              f"(clean); CPU s: clean {clean_s:.1f}, sampling {sample_s:.1f}, second models {radio_s:.1f}, save {save_s:.1f}",
              flush=True)


if __name__ == "__main__":
    main()
