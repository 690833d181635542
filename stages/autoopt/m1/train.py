"""autoopt m1-train: M1, image -> LaTeX tokens, in one of two designs (``train.design``):

* ``lines`` (the default since the page design failed the M1 checks): the image cut into lines
  by its horizontal projection profile (lines.py), each line read by a CRNN trained with CTC
  (crnn.py, line_model.py);
* ``page``: the whole image into a CNN encoder + transformer decoder (model.py).

Trains one main model per verdict seed (claims contract v2: the seed draws the initial weights
and the batch order; the data is the study's one generated dataset) on the whole training split,
``train.workers`` seeds side by side in forked processes, logging each seed's validation curve
(greedy BLEU on validation images against steps); then, for the first verdict seed only, the
learning-curve models (none in the default profile): a fresh model per fraction of the training
split (the first fraction x N formulations), each for ``curve_steps`` steps with the same schedule
shape. Checkpoints are state dicts (``torch.save``; read back with
``torch.load(weights_only=True)``); the first seed's (``main.pt``) is also written as an MLflow
pyfunc model (models-from-code, no pickled objects) that the stage logs.

Outputs: data/autoopt/m1/ (seed_<s>.pt for every verdict seed, main.pt = the first seed's,
curve_<k>.pt, vocab.json, mlflow_model/),
reports/autoopt/train.json (metrics; the loss and validation curves are also logged to MLflow by
step), reports/autoopt/m1_validation_curve.png + .csv.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from ..params import AutoOptParams
from ..paths import CSV_VAL_CURVE, DATASET, MODEL_DIR, PLOT_VAL_CURVE
from ..paths import TRAIN_METRICS as METRICS
from .training import (TRAIN_SPLIT, bucketed_batches, deterministic_on_gpu, images_array, lr_at, png_frame,
                       save_mlflow_model, seed_checkpoint)


def model_config(vocab_size: int, tp):
    from .model import M1Config

    return M1Config(vocab_size=vocab_size, height=tp.height, width=tp.width,
                    channels=tuple(tp.channels), d_model=tp.d_model, heads=tp.heads,
                    layers=tp.layers, ff=tp.ff, dropout=tp.dropout, attn_dropout=tp.attn_dropout,
                    max_len=tp.max_len)


def token_array(texts, vocab, max_len: int):
    import numpy as np

    ids = [vocab.encode(t, max_len) for t in texts]
    arr = np.zeros((len(ids), max(len(i) for i in ids)), dtype=np.int64)
    for k, i in enumerate(ids):
        arr[k, :len(i)] = i
    return arr


def train_model(images, tokens, cfg, tp, steps: int, seed: int, device, desc: str):
    """Train a fresh M1 for ``steps`` AdamW steps on (images uint8 (N, H, W), tokens (N, T));
    returns (model, losses per step)."""
    import torch
    from tqdm import tqdm

    from .model import M1

    torch.manual_seed(seed)
    model = M1(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tp.lr, weight_decay=tp.weight_decay)
    gen = torch.Generator().manual_seed(seed)
    imgs = torch.from_numpy(images)
    toks = torch.from_numpy(tokens)
    lengths = (toks != 0).sum(1)
    losses = []
    model.train()
    batches: list = []
    for step in tqdm(range(steps), desc=desc, mininterval=5):
        if not batches:
            batches = bucketed_batches(lengths, tp.batch_size, tp.bucket_pool, gen)
        idx = batches.pop()
        x = imgs[idx].to(device=device, dtype=torch.float32).div_(255).unsqueeze(1)
        y = toks[idx]
        y = y[:, : int((y != 0).sum(1).max())].to(device)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, tp.warmup, tp.lr)
        logits = model(x, y)
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                 y[:, 1:].reshape(-1), ignore_index=0,
                                                 label_smoothing=tp.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tp.grad_clip)
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return model, losses


def crnn_config(vocab_size: int, lp):
    from .crnn import CRNNConfig

    return CRNNConfig(vocab_size=vocab_size, height=lp.height, channels=tuple(lp.channels), hidden=lp.hidden,
                      rnn_layers=lp.rnn_layers, subframes=lp.subframes, dropout=lp.dropout,
                      max_width=lp.max_width)


def train_crnn(xs: list, ys: list, cfg, tp, steps: int, seed: int, device, desc: str,
               validate=None, eval_every: int = 0):
    """Train a fresh CRNN for ``steps`` AdamW steps on line crops ``xs`` with token ids ``ys``
    (CTC loss, warm-up + cosine learning rate, length-bucketed batches of ``tp.batch_size`` lines).
    ``validate(model) -> float`` is called every ``eval_every`` steps and after the last one.
    Returns (model, losses per step, [(step, validation value), ...], seconds of training
    without the validation)."""
    import time

    import torch
    from tqdm import tqdm

    from .crnn import CRNN, batch_images

    if len(xs) != len(ys) or not xs:
        raise ValueError(f"train_crnn needs as many line crops as targets, at least one; got {len(xs)}, {len(ys)}")
    torch.manual_seed(seed)
    model = CRNN(cfg).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=tp.lr, weight_decay=tp.weight_decay)
    ctc = torch.nn.CTCLoss(blank=0, zero_infinity=True)
    gen = torch.Generator().manual_seed(seed)
    widths = torch.tensor([a.shape[1] for a in xs])
    losses: list[float] = []
    curve: list[tuple[int, float]] = []
    batches: list = []
    spent = 0.0
    for step in tqdm(range(steps), desc=desc, mininterval=5):
        t0 = time.perf_counter()
        model.train()
        if not batches:
            batches = bucketed_batches(widths, tp.batch_size, tp.bucket_pool, gen)
        idx = batches.pop().tolist()
        x, w = batch_images([xs[i] for i in idx], cfg.height)
        tg = [ys[i] for i in idx]
        for g in opt.param_groups:
            g["lr"] = lr_at(step, steps, tp.warmup, tp.lr)
        logp = model(x.to(device), w.to(device))
        loss = ctc(logp.transpose(0, 1), torch.tensor([t for s in tg for t in s], device=device),
                   model.frames(w), torch.tensor([len(s) for s in tg]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), tp.grad_clip)
        opt.step()
        losses.append(float(loss.detach()))
        spent += time.perf_counter() - t0
        if validate is not None and ((eval_every and (step + 1) % eval_every == 0) or step + 1 == steps):
            curve.append((step + 1, float(validate(model))))
    model.eval()
    return model, losses, curve, spent


def teacher_forced(model, images, tokens, device, batch: int = 64) -> dict:
    """Loss (no smoothing) and next-token accuracy on held-out data, teacher forced."""
    import torch

    tot_loss, tot_ok, tot_n = 0.0, 0, 0
    with torch.no_grad():
        for s in range(0, len(images), batch):
            x = torch.from_numpy(images[s:s + batch]).to(device=device, dtype=torch.float32).div_(255).unsqueeze(1)
            y = torch.from_numpy(tokens[s:s + batch]).to(device)
            y = y[:, : int((y != 0).sum(1).max())]
            logits = model(x, y)
            tgt = y[:, 1:]
            mask = tgt != 0
            lp = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt.reshape(-1),
                                                   ignore_index=0, reduction="sum")
            tot_loss += float(lp)
            tot_ok += int(((logits.argmax(-1) == tgt) & mask).sum())
            tot_n += int(mask.sum())
    return {"loss": tot_loss / max(tot_n, 1), "token_accuracy": tot_ok / max(tot_n, 1), "tokens": tot_n}


def save_checkpoint(path, model, cfg, vocab, extra: dict | None = None) -> None:
    import dataclasses

    import torch

    from stages.common.io import atomic_path

    blob = {"state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()},
            "config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(cfg).items()},
            "vocab": list(vocab.tokens), "extra": extra or {}}
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


_FORKED: dict = {}   # what the seed workers read (set before the pool forks; nothing is pickled in)


def _train_seed(seed: int):
    """One verdict seed's main CRNN, in a forked worker (or in this process): returns the weights
    on the CPU, the losses, the validation curve and the training seconds."""
    from stages.common.device import limit_threads

    d = _FORKED
    limit_threads(d["threads"])
    model, losses, vcurve, train_s = train_crnn(d["xs"], d["ys"], d["cfg"], d["tp"], d["tp"].steps, seed, d["device"],
                                                f"M1 seed {seed}", d["validate"], d["tp"].lines.eval_every)
    return seed, {k: v.detach().cpu() for k, v in model.state_dict().items()}, losses, vcurve, train_s


def train_seeds(seeds: list[int], workers: int, *, xs: list, ys: list, cfg, tp, device, validate,
                threads: int = 1) -> dict[int, tuple]:
    """One main CRNN per seed on the line crops ``xs`` / targets ``ys`` (:func:`train_crnn`,
    ``tp.steps`` steps, ``validate`` every ``tp.lines.eval_every``), ``workers`` seeds at a time
    in forked processes of ``threads`` torch threads (nothing is pickled in; one seed's draws
    depend only on that seed, whichever worker runs it). Returns seed -> (CPU weights, losses,
    validation curve, training seconds)."""
    from stages.common.forkpool import fork_pool

    _FORKED.update(xs=xs, ys=ys, cfg=cfg, tp=tp, device=device, validate=validate, threads=threads)
    try:
        if workers <= 1 or len(seeds) == 1:
            out = [_train_seed(s) for s in seeds]
        else:
            # torch's optimizers import its compiler front end (torch._dynamo) when the first one is
            # made, 0.8 s: imported here once, the forked workers share it instead of each paying
            import torch._dynamo  # noqa: F401

            with fork_pool(min(workers, len(seeds))) as pool:
                out = pool.map(_train_seed, seeds, chunksize=1)
    finally:
        _FORKED.clear()
    return {s: rest for s, *rest in out}


def train_lines(ctx, dd, vocab, tp, device, out_dir) -> dict:
    """The line design: segment every training image, pair its lines with the label's lines,
    train one CRNN with CTC per verdict seed (``tp.workers`` processes side by side); each seed's
    validation curve (greedy BLEU on the first ``lines.eval_images`` validation images every
    ``lines.eval_every`` steps) is logged and plotted; then, for the first verdict seed only, the
    learning-curve models on growing fractions of the training images (none if
    ``curve_fractions`` is empty)."""
    import time

    import torch

    from .crnn import CRNN
    from .line_model import recognise, split_lines, training_pairs
    from .metrics import corpus_bleu

    lp = tp.lines
    seeds = list(ctx.seeds)
    train = dd[TRAIN_SPLIT]
    t0 = time.perf_counter()
    tr_lines = split_lines(train["image"], lp.height, lp.max_width, "train lines")
    val = dd["validation"].select(range(min(lp.eval_images, len(dd["validation"]))))
    va_lines = split_lines(val["image"], lp.height, lp.max_width, "validation lines")
    va_refs = list(val["latex"])
    xs, ys, pairs = training_pairs(tr_lines, train["latex"], vocab, lp.subframes)
    if not xs:
        raise RuntimeError("no training line could be paired with its label: the segmentation found "
                           "no image with as many lines as its LaTeX")
    prep_s = time.perf_counter() - t0
    cfg = crnn_config(len(vocab), lp)

    def validate(model) -> float:
        return corpus_bleu(recognise(model, vocab, va_lines, device), va_refs)

    t0 = time.perf_counter()
    trained = train_seeds(seeds, tp.workers, xs=xs, ys=ys, cfg=cfg, tp=tp, device=device, validate=validate,
                          threads=torch.get_num_threads())
    wall_s = time.perf_counter() - t0
    per_seed, models = {}, {}
    for s in seeds:
        state, losses, vcurve, train_s = trained[s]
        model = CRNN(cfg)
        model.load_state_dict(state)
        model.eval()
        models[s] = model
        save_checkpoint(seed_checkpoint(out_dir, s), model, cfg, vocab,
                        {"train_size": len(train), "steps": tp.steps, "design": "lines", "seed": s})
        per_seed[s] = {"losses": losses, "validation_curve": vcurve, "train_s": train_s}
    first = seeds[0]
    save_checkpoint(out_dir / "main.pt", models[first], cfg, vocab,
                    {"train_size": len(train), "steps": tp.steps, "design": "lines", "seed": first})
    curve = []
    t0 = time.perf_counter()
    for k, frac in enumerate(tp.curve_fractions):
        n = max(1, int(round(frac * len(train))))
        cx, cy, cst = training_pairs(tr_lines[:n], train["latex"][:n], vocab, lp.subframes)
        if not cx:
            raise RuntimeError(f"learning curve: no paired line in the first {n} training images")
        m, lc, _, _ = train_crnn(cx, cy, cfg, tp, tp.curve_steps, first + 1 + k, device, f"curve {frac:g}")
        save_checkpoint(out_dir / f"curve_{k}.pt", m, cfg, vocab,
                        {"train_size": n, "fraction": frac, "steps": tp.curve_steps, "design": "lines"})
        curve.append({"fraction": frac, "train_size": n, "lines": cst["lines"],
                      "final_loss": float(sum(lc[-20:]) / len(lc[-20:]))})
    curve_s = time.perf_counter() - t0
    from .model import count_parameters

    return {"design": "lines", "model": models[first], "per_seed": per_seed,
            "metrics": {"pairs": pairs, "parameters": count_parameters(models[first]),
                        "images_validation": len(va_refs),
                        "curve": curve, "seconds": {"lines": prep_s, "train_wall": wall_s, "curve": curve_s}}}


def train_page(ctx, dd, vocab, tp, device, out_dir) -> dict:
    """The page design: the whole image fitted into height x width, the encoder-decoder of
    model.py trained with teacher forcing; one validation-curve point (greedy BLEU after the last
    step)."""
    import time

    import numpy as np

    from .metrics import corpus_bleu
    from .model import count_parameters

    if len(ctx.seeds) > 1:
        from stages.common.base import ParamsError

        raise ParamsError(f"train.design 'page' trains one model (the design the line design replaced); it "
                          f"cannot run the {len(ctx.seeds)} verdict seeds {list(ctx.seeds)}: use design 'lines'")
    seed = ctx.seeds[0]
    train = dd[TRAIN_SPLIT]
    cfg = model_config(len(vocab), tp)
    t0 = time.perf_counter()
    x_train = images_array(train, tp.height, tp.width, "train images")
    y_train = token_array(train["latex"], vocab, tp.max_len)
    val_ds = dd["validation"].select(range(min(tp.lines.eval_images, len(dd["validation"]))))
    x_val = images_array(val_ds, tp.height, tp.width, "validation images")
    y_val = token_array(val_ds["latex"], vocab, tp.max_len)
    prep_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    model, losses = train_model(x_train, y_train, cfg, tp, tp.steps, seed, device, "M1 main")
    train_s = time.perf_counter() - t0
    val = teacher_forced(model, x_val, y_val, device)
    from .reader import Reader

    hyp = Reader("page", model, vocab).read([np.asarray(im.convert("L")) for im in val_ds["image"]], device)
    val["bleu"] = corpus_bleu(hyp, list(val_ds["latex"]))
    save_checkpoint(out_dir / "main.pt", model, cfg, vocab,
                    {"train_size": len(train), "steps": tp.steps, "design": "page", "seed": seed})
    save_checkpoint(seed_checkpoint(out_dir, seed), model, cfg, vocab,
                    {"train_size": len(train), "steps": tp.steps, "design": "page", "seed": seed})
    curve = []
    t0 = time.perf_counter()
    for k, frac in enumerate(tp.curve_fractions):
        n = max(tp.batch_size, int(round(frac * len(train))))
        m, lc = train_model(x_train[:n], y_train[:n], cfg, tp, tp.curve_steps, seed + 1 + k,
                            device, f"curve {frac:g}")
        save_checkpoint(out_dir / f"curve_{k}.pt", m, cfg, vocab,
                        {"train_size": n, "fraction": frac, "steps": tp.curve_steps, "design": "page"})
        curve.append({"fraction": frac, "train_size": n, "final_loss": float(np.mean(lc[-20:])),
                      "val": teacher_forced(m, x_val, y_val, device)})
    curve_s = time.perf_counter() - t0
    return {"design": "page", "model": model,
            "per_seed": {seed: {"losses": losses, "validation_curve": [(tp.steps, val["bleu"])], "train_s": train_s}},
            "metrics": {"parameters": count_parameters(model), "validation": val,
                        "truncated_labels": int((y_train[:, -1] != 0).sum()),
                        "curve": curve, "seconds": {"images": prep_s, "train": train_s, "curve": curve_s}}}


def main() -> None:
    with stage("autoopt", "m1-train", AutoOptParams) as ctx:
        import json

        import datasets
        import numpy as np

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json, write_text
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from ..tokenizer import Vocab

        tp = ctx.params.train
        threads = limit_threads(default=tp.threads)
        device = select_device(ctx.common.device)
        deterministic_on_gpu(device)
        dd = datasets.load_from_disk(str(ctx.path(DATASET)))
        train = dd[TRAIN_SPLIT]
        vocab = Vocab.build(train["latex"])
        out_dir = ctx.path(MODEL_DIR)
        out_dir.mkdir(parents=True, exist_ok=True)
        res = (train_lines if tp.design == "lines" else train_page)(ctx, dd, vocab, tp, device, out_dir)
        write_text(out_dir / "vocab.json", json.dumps(vocab.tokens, indent=0) + "\n")
        # its input example (MLflow infers the signature from it): the first two validation images, as PNG bytes
        save_mlflow_model(out_dir / "mlflow_model", out_dir / "main.pt",
                          input_example=png_frame(dd["validation"].select(range(2))["image"]))
        per = res["per_seed"]
        seeds = list(per)
        results = {s: {"final_loss": float(np.mean(v["losses"][-20:])),
                       "validation_bleu": v["validation_curve"][-1][1],
                       "steps_per_s": tp.steps / max(v["train_s"], 1e-9),
                       "validation_curve": [{"step": st, "bleu": b} for st, b in v["validation_curve"]]}
                   for s, v in per.items()}
        metrics = per_seed_metrics(results, design=res["design"], train_size=len(train), vocab_size=len(vocab),
                                   steps=tp.steps, threads=threads, workers=tp.workers, device=str(device),
                                   **res["metrics"])
        write_json(ctx.path(METRICS), metrics)
        write_csv(ctx.path(CSV_VAL_CURVE), [{"seed": s, **row} for s in seeds for row in results[s]["validation_curve"]])
        fig, ax = new_figure(figsize=(5.5, 3.6))
        for s in seeds:
            vc = per[s]["validation_curve"]
            ax.plot([st for st, _ in vc], [b for _, b in vc], "o-", ms=3, label=f"seed {s}")
        ax.set_xlabel("training steps")
        ax.set_ylabel(f"BLEU, first {tp.lines.eval_images} validation images")
        ax.set_ylim(0, 100)
        ax.set_title(f"M1 validation curve ({res['design']} design, {tp.steps} steps, one line a verdict seed)",
                     fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
        save_png(fig, ctx.path(PLOT_VAL_CURVE))
        for s in seeds:
            ctx.run.log_curve(f"train.loss.seed{s}", per[s]["losses"])
            vc = per[s]["validation_curve"]
            ctx.run.log_curve(f"validation.bleu.seed{s}", [b for _, b in vc], [st for st, _ in vc])
        ctx.run.log_model(out_dir / "mlflow_model", "m1", params={"train_size": len(train), "steps": tp.steps,
                                                                   "seed": seeds[0]})
        for s in seeds:
            print(f"  M1 seed {s} ({res['design']}): {tp.steps} steps at {results[s]['steps_per_s']:.2f} steps/s; "
                  "validation BLEU " + ", ".join(f"{st}: {b:.1f}" for st, b in per[s]["validation_curve"]))
        print(f"  {metrics['parameters']} parameters; {len(seeds)} seeds on {tp.workers} processes")


if __name__ == "__main__":
    main()
