"""autoopt m1-train: M1 (CNN encoder + transformer decoder) on image -> LaTeX tokens.

Trains the main model on the whole training split, then the learning-curve models: a fresh
model per fraction of the training split (the first fraction x N formulations), each for
``curve_steps`` steps with the same schedule shape. Checkpoints are state dicts
(``torch.save``; read back with ``torch.load(weights_only=True)``); the main one is also written
as an MLflow pyfunc model (models-from-code, no pickled objects) that the stage logs.

Outputs: data/autoopt/m1/ (main.pt, curve_<k>.pt, vocab.json, mlflow_model/),
reports/autoopt/train.json (metrics, with the loss curve also logged to MLflow by step).
"""
from __future__ import annotations

from stages.common.stage import stage

from ..params import AutoOptParams
from ..paths import DATASET, MODEL_DIR
from ..paths import TRAIN_METRICS as METRICS

TRAIN_SPLIT = "train"


def model_config(vocab_size: int, tp):
    from .model import M1Config

    return M1Config(vocab_size=vocab_size, height=tp.height, width=tp.width,
                    channels=tuple(tp.channels), d_model=tp.d_model, heads=tp.heads,
                    layers=tp.layers, ff=tp.ff, dropout=tp.dropout, attn_dropout=tp.attn_dropout,
                    max_len=tp.max_len)


def images_array(ds, height: int, width: int, desc: str = "images"):
    """Every image of a split fitted into height x width, ink as uint8 (N, H, W)."""
    import numpy as np
    from tqdm import tqdm

    from ..data.render import to_input

    out = np.zeros((len(ds), height, width), dtype=np.uint8)
    for k, img in enumerate(tqdm(ds["image"], desc=desc, mininterval=2, disable=len(ds) < 500)):
        out[k] = np.round(to_input(np.asarray(img.convert("L")), height, width) * 255)
    return out


def token_array(texts, vocab, max_len: int):
    import numpy as np

    ids = [vocab.encode(t, max_len) for t in texts]
    arr = np.zeros((len(ids), max(len(i) for i in ids)), dtype=np.int64)
    for k, i in enumerate(ids):
        arr[k, :len(i)] = i
    return arr


def lr_at(step: int, steps: int, warmup: int, peak: float) -> float:
    import math

    if step < warmup:
        return peak * (step + 1) / warmup
    t = (step - warmup) / max(1, steps - warmup)
    return peak * 0.5 * (1 + math.cos(math.pi * min(1.0, t)))


def bucketed_batches(lengths, batch_size: int, pool: int, gen):
    """One epoch of batches as index tensors: shuffle, cut into pools of ``pool`` batches, sort
    each pool by label length and cut it into batches, then shuffle the batches. Batches pad to
    their longest label, so grouping similar lengths cuts the padded tokens the decoder computes
    (pool = 1: plain shuffled batches). Every index appears exactly once; a short last batch is
    kept."""
    import torch

    if batch_size < 1 or pool < 1:
        raise ValueError(f"bucketed_batches: batch_size and pool must be >= 1, got {batch_size}, {pool}")
    lengths = torch.as_tensor(lengths)
    order = torch.randperm(len(lengths), generator=gen)
    batches = []
    step = batch_size * pool
    for s in range(0, len(order), step):
        chunk = order[s:s + step]
        chunk = chunk[torch.argsort(lengths[chunk], stable=True)]
        batches += list(chunk.split(batch_size))
    return [batches[k] for k in torch.randperm(len(batches), generator=gen).tolist()]


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


def save_mlflow_model(target, checkpoint, code_file=None,
                      requirements: tuple[str, ...] = ("torch==2.13.0", "numpy==2.4.6", "pillow")) -> None:
    """An MLflow pyfunc model (models from code: the file ``code_file``, by default M1's
    ``pyfunc.py`` in this folder, + the checkpoint artifact), written atomically to ``target``.
    M1 and M2's seq2seq model (which passes its own ``m2/pyfunc.py``) both use it."""
    import os
    from pathlib import Path

    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    import mlflow.pyfunc

    from stages.common.io import atomic_dir

    code = Path(code_file) if code_file is not None else Path(__file__).with_name("pyfunc.py")
    with atomic_dir(target) as tmp:
        out = Path(tmp) / "model"
        mlflow.pyfunc.save_model(str(out), python_model=str(code),
                                 artifacts={"checkpoint": str(checkpoint)},
                                 pip_requirements=list(requirements))
        for p in out.iterdir():
            os.replace(p, Path(tmp) / p.name)
        out.rmdir()


def main() -> None:
    with stage("autoopt", "m1-train", AutoOptParams) as ctx:
        import json
        import time

        import datasets
        import numpy as np
        import torch

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json, write_text

        from ..tokenizer import Vocab

        tp = ctx.params.train
        threads = limit_threads(default=tp.threads)
        torch.use_deterministic_algorithms(True, warn_only=True)
        device = select_device(ctx.common.device)
        dd = datasets.load_from_disk(str(ctx.path(DATASET)))
        train = dd[TRAIN_SPLIT]
        vocab = Vocab.build(train["latex"])
        cfg = model_config(len(vocab), tp)
        t0 = time.perf_counter()
        x_train = images_array(train, tp.height, tp.width, "train images")
        y_train = token_array(train["latex"], vocab, tp.max_len)
        x_val = images_array(dd["validation"], tp.height, tp.width, "validation images")
        y_val = token_array(dd["validation"]["latex"], vocab, tp.max_len)
        prep_s = time.perf_counter() - t0

        out_dir = ctx.path(MODEL_DIR)
        out_dir.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        model, losses = train_model(x_train, y_train, cfg, tp, tp.steps, ctx.seed, device, "M1 main")
        train_s = time.perf_counter() - t0
        val = teacher_forced(model, x_val, y_val, device)
        save_checkpoint(out_dir / "main.pt", model, cfg, vocab, {"train_size": len(train), "steps": tp.steps})
        write_text(out_dir / "vocab.json", json.dumps(vocab.tokens, indent=0) + "\n")

        curve = []
        t0 = time.perf_counter()
        for k, frac in enumerate(tp.curve_fractions):
            n = max(tp.batch_size, int(round(frac * len(train))))
            m, lc = train_model(x_train[:n], y_train[:n], cfg, tp, tp.curve_steps, ctx.seed + 1 + k,
                                device, f"curve {frac:g}")
            save_checkpoint(out_dir / f"curve_{k}.pt", m, cfg, vocab,
                            {"train_size": n, "fraction": frac, "steps": tp.curve_steps})
            curve.append({"fraction": frac, "train_size": n, "final_loss": float(np.mean(lc[-20:])),
                          "val": teacher_forced(m, x_val, y_val, device)})
        curve_s = time.perf_counter() - t0
        save_mlflow_model(out_dir / "mlflow_model", out_dir / "main.pt")
        from .model import count_parameters

        metrics = {"train_size": len(train), "vocab_size": len(vocab), "parameters": count_parameters(model),
                   "steps": tp.steps, "threads": threads, "device": str(device),
                   "final_loss": float(np.mean(losses[-20:])), "validation": val,
                   "truncated_labels": int((y_train[:, -1] != 0).sum()),
                   "curve": curve, "seconds": {"images": prep_s, "train": train_s, "curve": curve_s}}
        write_json(ctx.path(METRICS), metrics)
        ctx.run.log_curve("train.loss", losses)
        ctx.run.log_model(out_dir / "mlflow_model", "m1", params={"train_size": len(train), "steps": tp.steps})
        print(f"  M1: {metrics['parameters']} parameters, {tp.steps} steps in {train_s:.0f}s; "
              f"validation token accuracy {val['token_accuracy']:.3f}; curve {curve_s:.0f}s")


if __name__ == "__main__":
    main()
