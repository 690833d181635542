"""autoopt m1-evaluate: M1 against the retrieval baseline on the printed and the
handwriting-like test splits (reported separately, never averaged), beam vs greedy (page design),
and the learning curve.

* M1 greedy on every test image (line design: each segmented line read by the CRNN, greedy CTC,
  the lines joined with ``\\\\``); page design: also beam search (``beam_width``) on the first
  ``beam_images``.
* Retrieval baseline: the LaTeX of the nearest training image, by Euclidean distance between
  images fitted into retrieval_height x retrieval_width (the same fitting M1's input uses).
* Learning curve: each curve model (trained on a fraction of the training split for
  ``curve_steps`` steps) decoded greedily on the first ``curve_images`` printed test images.

Outputs: reports/autoopt/m1_metrics.json (the end-to-end stage merges it into metrics.json, which
claims.yaml reads), data/autoopt/m1_predictions.json (M1's greedy LaTeX for every test image: M2 and
the end-to-end stage read it), bleu.png, learning_curve.png, learning_curve.csv, scores.csv,
examples.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .training import TRAIN_SPLIT, images_array, seed_checkpoint
from ..params import AutoOptParams
from ..paths import (CSV_CURVE, CSV_SCORES, DATASET, EXAMPLES, M1_METRICS, M1_PREDICTIONS, MODEL_DIR,
                    PLOT_BLEU, PLOT_CURVE)
EVAL_SPLITS = {"printed": "test", "handwritten": "test_handwritten"}


def decode_greedy(model, vocab, images, device, batch: int = 64) -> list[str]:
    import torch
    from tqdm import tqdm

    out: list[str] = []
    for s in tqdm(range(0, len(images), batch), desc="greedy", mininterval=5, disable=len(images) <= batch):
        x = torch.from_numpy(images[s:s + batch]).to(device=device, dtype=torch.float32).div_(255).unsqueeze(1)
        out += [vocab.decode(ids) for ids in model.greedy(x, vocab.bos, vocab.eos, model.cfg.max_len)]
    return out


def decode_beam(model, vocab, images, device, width: int) -> list[str]:
    import torch
    from tqdm import tqdm

    out = []
    for img in tqdm(images, desc=f"beam {width}", mininterval=5, disable=len(images) < 50):
        x = torch.from_numpy(img[None, None]).to(device=device, dtype=torch.float32).div_(255)
        out.append(vocab.decode(model.beam(x, vocab.bos, vocab.eos, model.cfg.max_len, width)))
    return out


def main() -> None:
    with stage("autoopt", "m1-evaluate", AutoOptParams) as ctx:
        import datasets
        import numpy as np
        import torch

        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json, write_text
        from stages.common.plots import new_figure, save_png, write_csv
        from stages.common.seeds import per_seed_metrics

        from . import metrics as M
        from .reader import load_reader

        ep, tp = ctx.params.evaluate, ctx.params.train
        limit_threads(default=tp.threads)
        device = select_device(ctx.common.device)
        dd = datasets.load_from_disk(str(ctx.path(DATASET)))
        seeds = list(ctx.seeds)
        readers = {}
        for s_ in seeds:
            path = seed_checkpoint(ctx.path(MODEL_DIR), s_)
            if not path.exists():
                raise FileNotFoundError(f"{path} (M1 of verdict seed {s_}) is missing: run `dvc repro "
                                        f"stages/autoopt/dvc.yaml:autoopt-m1-train` with the same common.seeds")
            readers[s_] = load_reader(path, device)
        reader = readers[seeds[0]]
        model = reader.model
        train_latex = dd[TRAIN_SPLIT]["latex"]
        rh, rw = ep.retrieval_height, ep.retrieval_width
        x_train_small = images_array(dd[TRAIN_SPLIT], rh, rw, "retrieval index")

        # the retrieval baseline does not draw: once for every seed
        retrieval: dict = {}
        inputs: dict = {}
        for name, split in EVAL_SPLITS.items():
            if split not in dd:
                print(f"  note: no {split} split in the dataset (the published layout has none); "
                      f"its figures are null")
                continue
            ds = dd[split]
            if reader.design == "lines":
                from .line_model import split_lines

                x = split_lines(ds["image"], model.cfg.height, reader.max_width, f"{split} lines")
            else:
                x = images_array(ds, tp.height, tp.width, f"{split} images")
            nn_idx = M.nearest(x_train_small, images_array(ds, rh, rw, f"{split} retrieval"))
            ret = [train_latex[i] for i in nn_idx]
            inputs[name] = (ds, x, ret)
            retrieval[name] = M.score(ret, ds["latex"])

        per_seed: dict = {}
        examples: dict = {}
        predictions: dict = {}
        score_rows = []
        printed_images = inputs["printed"][1] if "printed" in inputs else None
        for s_ in seeds:
            rd = readers[s_]
            res: dict = {"m1": {}, "m1_beam": {}, "margin_bleu": {}, "margin_authors_bleu": {},
                         "control": {"m1_unpaired": {}, "margin_bleu_unpaired": {}}}
            predictions[str(s_)] = {}
            for name, (ds, x, ret) in inputs.items():
                refs = ds["latex"]
                hyp = rd.read_lines(x, device) if rd.design == "lines" else decode_greedy(rd.model, rd.vocab, x, device)
                predictions[str(s_)][name] = [{"id": i, "latex": h} for i, h in zip(ds["id"], hyp)]
                res["m1"][name] = M.score(hyp, refs)
                res["margin_bleu"][name] = res["m1"][name]["bleu"] - retrieval[name]["bleu"]
                res["margin_authors_bleu"][name] = res["m1"][name]["authors_bleu"] - retrieval[name]["authors_bleu"]
                # the control: the same predictions scored against another image's reference (a
                # cyclic shift of the split: a derangement), i.e. M1's output without the image's
                # information; it keeps the output's vocabulary, lengths and structure
                unpaired = refs[1:] + refs[:1]
                res["control"]["m1_unpaired"][name] = M.score(hyp, unpaired)
                res["control"]["margin_bleu_unpaired"][name] = (res["control"]["m1_unpaired"][name]["bleu"]
                                                                - retrieval[name]["bleu"])
                k = min(ep.beam_images, len(refs)) if rd.design == "page" else 0
                if k:
                    beam = decode_beam(rd.model, rd.vocab, x[:k], device, ep.beam_width)
                    res["m1_beam"][name] = {**M.score(beam, refs[:k]),
                                            "greedy_bleu_same_images": M.corpus_bleu(hyp[:k], refs[:k]),
                                            "width": ep.beam_width}
                if s_ == seeds[0]:
                    examples[name] = [{"reference": r, "m1": h, "retrieval": t}
                                      for r, h, t in list(zip(refs, hyp, ret))[:ep.examples]]
                for method, sc in (("m1", res["m1"][name]), ("retrieval", retrieval[name])):
                    score_rows.append({"seed": s_, "split": name, "method": method, **{
                        key: sc[key] for key in ("bleu", "authors_bleu", "exact_match", "token_error_rate", "cer")}})
            margins = list(res["margin_bleu"].values())
            res["margin_bleu"]["min"] = min(margins) if len(margins) == len(EVAL_SPLITS) else None
            if "printed" in res["m1"] and "handwritten" in res["m1"]:
                res["printed_minus_handwritten_bleu"] = res["m1"]["printed"]["bleu"] - res["m1"]["handwritten"]["bleu"]
            per_seed[s_] = res
            print(f"  seed {s_}: " + "; ".join(
                f"{n} M1 BLEU {res['m1'][n]['bleu']:.1f} (authors' {res['m1'][n]['authors_bleu']:.1f}), "
                f"unpaired {res['control']['m1_unpaired'][n]['bleu']:.1f}" for n in res["m1"]), flush=True)

        # learning curve: greedy BLEU of each curve model on the first curve_images printed images
        curve = []
        if printed_images is not None and (ctx.path(MODEL_DIR) / "curve_0.pt").exists():
            refs = dd["test"]["latex"][:ep.curve_images]
            xs = printed_images[:ep.curve_images]
            k = 0
            while (ctx.path(MODEL_DIR) / f"curve_{k}.pt").exists():
                blob = torch.load(ctx.path(MODEL_DIR) / f"curve_{k}.pt", map_location="cpu", weights_only=True)
                r = load_reader(ctx.path(MODEL_DIR) / f"curve_{k}.pt", device)
                hyp = r.read_lines(xs, device) if r.design == "lines" else decode_greedy(r.model, r.vocab, xs, device)
                curve.append({"train_size": int(blob["extra"]["train_size"]),
                              "fraction": float(blob["extra"]["fraction"]),
                              "steps": int(blob["extra"]["steps"]),
                              "bleu": M.corpus_bleu(hyp, refs)})
                k += 1
        curve_info = ({"points": curve, "images": len(refs), "model_seed": seeds[0],
                       "bleu_gain_smallest_to_largest": curve[-1]["bleu"] - curve[0]["bleu"]} if curve else None)
        results = per_seed_metrics(per_seed, retrieval=retrieval, curve=curve_info,
                                   m1_parameters=sum(p.numel() for p in model.parameters()),
                                   m1_design=reader.design)
        write_json(ctx.path(M1_METRICS), results)
        write_json(ctx.path(M1_PREDICTIONS), {"seeds": seeds, "per_seed": predictions})
        write_json(ctx.path(EXAMPLES), examples)
        write_csv(ctx.path(CSV_SCORES), score_rows)

        fig, ax = new_figure(figsize=(6.5, 3.8))
        names = [n for n in EVAL_SPLITS if n in retrieval]
        w = 0.27
        arms = (("M1 (greedy)", lambda s_, n: per_seed[s_]["m1"][n]["bleu"]),
                ("control: M1 unpaired", lambda s_, n: per_seed[s_]["control"]["m1_unpaired"][n]["bleu"]),
                ("retrieval baseline", lambda s_, n: retrieval[n]["bleu"]))
        for j, (label, get) in enumerate(arms):
            vals = np.array([[get(s_, n) for n in names] for s_ in seeds])
            pos = np.arange(len(names)) + (j - 1) * w
            bars = ax.bar(pos, vals.mean(0), w, label=label)
            ax.bar_label(bars, fmt="%.1f", fontsize=7)
            for row in vals:
                ax.plot(pos, row, "k.", ms=3)
        ax.set_xticks(np.arange(len(names)), [f"{n} test" for n in names])
        ax.set_ylabel("corpus BLEU (sacrebleu)")
        ax.set_ylim(0, 100)
        ax.set_title(f"M1 vs nearest-training-image retrieval (generated data; mean of {len(seeds)} seeds, dots)",
                     fontsize=9)
        ax.legend(fontsize=8)
        save_png(fig, ctx.path(PLOT_BLEU))

        fig, ax = new_figure(figsize=(5.5, 3.6))
        if curve:
            write_csv(ctx.path(CSV_CURVE), [{"train_size": c["train_size"], "bleu": c["bleu"]} for c in curve])
            ax.plot([c["train_size"] for c in curve], [c["bleu"] for c in curve], "o-")
            for c in curve:
                ax.annotate(f"{c['bleu']:.1f}", (c["train_size"], c["bleu"]), fontsize=8,
                            textcoords="offset points", xytext=(0, 6), ha="center")
            ax.set_xscale("log")
            ax.set_xlabel("training formulations (log scale)")
            ax.set_ylabel(f"BLEU, first {len(refs)} printed test images")
            ax.set_title(f"learning curve: {curve[0]['steps']} steps per model (seed {seeds[0]})", fontsize=10)
            ax.grid(True, alpha=0.3)
        else:   # the default profile trains no curve models (train.curve_fractions is empty)
            write_text(ctx.path(CSV_CURVE), "train_size,bleu\n")
            ax.text(0.5, 0.5, f"no learning curve in profile {ctx.common.profile!r}\n(train.curve_fractions is empty)",
                    ha="center", va="center", transform=ax.transAxes)
            ax.set_axis_off()
        save_png(fig, ctx.path(PLOT_CURVE))
        for n in names:
            print(f"  {n}: M1 BLEU {results['m1'][n]['bleu']:.1f} (mean of {len(seeds)} seeds) vs retrieval "
                  f"{retrieval[n]['bleu']:.1f} (exact {results['m1'][n]['exact_match']:.2f}, "
                  f"TER {results['m1'][n]['token_error_rate']:.3f})")
        if curve:
            print("  learning curve: " + ", ".join(f"{c['train_size']}: {c['bleu']:.1f}" for c in curve))


if __name__ == "__main__":
    main()
