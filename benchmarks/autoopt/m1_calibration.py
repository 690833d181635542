"""autoopt M1 calibration, on calibration seeds only (>= 1000, never a verdict seed): the line
recogniser trained as m1-train trains it (the study's one generated dataset, one model a seed,
``train.workers`` seeds side by side), judged on the validation split only (the test splits are
the verdict's): greedy BLEU of M1, of the retrieval baseline (nearest training image) and of the
control (M1's output scored against another image's reference), and the CPU seconds a seed.

    nice -n 10 python benchmarks/autoopt/m1_calibration.py [--seeds 1000,1001] [--set train.steps=1400]
    python benchmarks/autoopt/m1_calibration.py --smoke      # seconds: the smoke profile's tiny model

What it was used for (README: autoopt, Calibration): the step count that lets five seeds of M1 fit
issue 40's budget for the study. Needs the dataset (``dvc repro stages/autoopt/dvc.yaml:autoopt-prepare``),
except with ``--smoke``, which renders the smoke profile's tiny dataset in memory (the prepare
stage's own generated_rows); it writes nothing into the checkout.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))   # the repository, for benchmarks.common

from benchmarks.common.calibration import parse_seeds, seed_parser, study_params  # noqa: E402


def main(argv=None) -> None:
    ap = seed_parser(__doc__, sets=True)
    a, seeds = parse_seeds(ap, argv)

    import datasets
    import numpy as np
    import torch

    from stages.autoopt.m1 import metrics as M
    from stages.autoopt.m1.line_model import recognise, split_lines, training_pairs
    from stages.autoopt.m1.train import crnn_config, train_seeds
    from stages.autoopt.m1.training import TRAIN_SPLIT, images_array
    from stages.autoopt.params import AutoOptParams
    from stages.autoopt.tokenizer import Vocab

    params = study_params("autoopt", AutoOptParams, a)
    tp, ep = params.train, params.evaluate
    if tp.design != "lines":
        raise SystemExit("calibrates the line design only")
    torch.set_num_threads(1)
    path = ROOT / "data/autoopt/dataset"
    if a.smoke:        # no stage outputs needed: the smoke profile's dataset, rendered here
        from stages.autoopt.data import rows as data
        from stages.autoopt.data.prepare import generated_rows

        feats = data.features()
        dd = datasets.DatasetDict({s: datasets.Dataset.from_list(r, features=feats)
                                   for s, r in generated_rows(params.prepare, params.prepare.data_seed).items()})
    elif not path.exists():
        raise SystemExit(f"{path} is missing: run `dvc repro stages/autoopt/dvc.yaml:autoopt-prepare` first")
    else:
        dd = datasets.load_from_disk(str(path))
    train, val = dd[TRAIN_SPLIT], dd["validation"]
    if a.smoke:
        train, val = train.select(range(min(32, len(train)))), val.select(range(min(8, len(val))))
    lp = tp.lines
    vocab = Vocab.build(dd[TRAIN_SPLIT]["latex"])
    tr_lines = split_lines(train["image"], lp.height, lp.max_width, "train lines")
    va_lines = split_lines(val["image"], lp.height, lp.max_width, "validation lines")
    refs = list(val["latex"])
    xs, ys, _ = training_pairs(tr_lines, train["latex"], vocab, lp.subframes)
    cfg = crnn_config(len(vocab), lp)
    x_small = images_array(train, ep.retrieval_height, ep.retrieval_width, "retrieval index")
    nn_idx = M.nearest(x_small, images_array(val, ep.retrieval_height, ep.retrieval_width, "validation retrieval"))
    retrieval = M.corpus_bleu([train["latex"][i] for i in nn_idx], refs)
    device = torch.device("cpu")

    def validate(model) -> float:
        return M.corpus_bleu(recognise(model, vocab, va_lines, device), refs)

    print(f"M1 calibration: {len(train)} training images, {len(refs)} validation images, {tp.steps} steps, "
          f"seeds {seeds} on {tp.workers} processes; retrieval BLEU on validation {retrieval:.1f}", flush=True)
    c0, t0 = time.process_time(), time.perf_counter()
    trained = train_seeds(seeds, tp.workers, xs=xs, ys=ys, cfg=cfg, tp=tp, device=device, validate=validate)
    wall = time.perf_counter() - t0
    from stages.autoopt.m1.crnn import CRNN

    margins, controls = [], []
    for s in seeds:
        state, losses, vcurve, train_s = trained[s]
        model = CRNN(cfg)
        model.load_state_dict(state)
        model.eval()
        hyp = recognise(model, vocab, va_lines, device)
        bleu = M.corpus_bleu(hyp, refs)
        unpaired = M.corpus_bleu(hyp, refs[1:] + refs[:1])
        margins.append(bleu - retrieval)
        controls.append(unpaired - retrieval)
        print(f"  seed {s}: validation BLEU {bleu:.1f} (curve " + ", ".join(f"{st}: {b:.1f}" for st, b in vcurve)
              + f"), unpaired control {unpaired:.1f}; {train_s:.0f} s training", flush=True)
    print(f"M1 - retrieval on validation: {np.round(margins, 2).tolist()} (mean {np.mean(margins):+.2f}); control "
          f"{np.round(controls, 2).tolist()} (mean {np.mean(controls):+.2f})")
    print(f"compute: {wall:.0f} s wall for {len(seeds)} seeds on {tp.workers} processes "
          f"(this process {time.process_time() - c0:.0f} CPU s, the workers' not counted)")


if __name__ == "__main__":
    main()
