"""What M1's two stages and M2's train stage share: the name of the training split, the images of a
split fitted into the page design's input, the warm-up + cosine learning-rate schedule, the
length-bucketed batches, torch's deterministic mode on a GPU, and the MLflow pyfunc writer. In a module of their own so that no stage
imports another (a stage's code deps are the modules it runs)."""
from __future__ import annotations

TRAIN_SPLIT = "train"


def deterministic_on_gpu(device) -> None:
    """torch's deterministic algorithms (a warning where an op has none) on a CUDA device, where
    they choose other kernels than the default ones. Not on the CPU: there every op M1 and M2 train
    with is deterministic already, and the mode only makes torch fill each new tensor with NaN
    before use (``torch.utils.deterministic.fill_uninitialized_memory``). Measured on this study's
    2-core machine (2026-12-07), M1 at default sizes, one thread, 150 steps: 11.5-11.9 steps/s
    without the mode, 10.4-11.1 with it, 11.7 with it but without the fill; the same weights bit
    for bit in all three; the smoke models of both stages and M1's default ones came out unchanged."""
    if device.type == "cuda":
        import torch

        torch.use_deterministic_algorithms(True, warn_only=True)


def images_array(ds, height: int, width: int, desc: str = "images"):
    """Every image of a split fitted into height x width, ink as uint8 (N, H, W)."""
    import numpy as np
    from tqdm import tqdm

    from ..data.render import to_input

    out = np.zeros((len(ds), height, width), dtype=np.uint8)
    for k, img in enumerate(tqdm(ds["image"], desc=desc, mininterval=2, disable=len(ds) < 500)):
        out[k] = np.round(to_input(np.asarray(img.convert("L")), height, width) * 255)
    return out


def seed_checkpoint(out_dir, seed: int):
    """The checkpoint of verdict seed ``seed``'s main M1 (a pathlib.Path under ``out_dir``)."""
    return out_dir / f"seed_{seed}.pt"


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


def png_frame(images):
    """The M1 model's input for PIL ``images``: a DataFrame with one PNG-encoded image (bytes) per
    row in the column ``image``."""
    import io

    import pandas as pd

    def png(img) -> bytes:
        buf = io.BytesIO()
        img.save(buf, format="PNG")
        return buf.getvalue()

    return pd.DataFrame({"image": [png(im) for im in images]})


def save_mlflow_model(target, checkpoint, code_file=None,
                      requirements: tuple[str, ...] = ("torch==2.13.0", "numpy==2.4.6", "pillow"), *,
                      input_example) -> None:
    """An MLflow pyfunc model (models from code: the file ``code_file``, by default M1's
    ``pyfunc.py`` in this folder, + the checkpoint artifact), written atomically to ``target``,
    with ``input_example`` (a few rows its predict takes) from which MLflow infers its signature.
    M1 and M2's seq2seq model (which passes its own ``m2/pyfunc.py``) both use it."""
    from pathlib import Path

    from stages.common.mlmodel import save_pyfunc

    code = Path(code_file) if code_file is not None else Path(__file__).with_name("pyfunc.py")
    save_pyfunc(target, code, {"checkpoint": checkpoint}, requirements=requirements, input_example=input_example)
