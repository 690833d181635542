"""autoopt m2-evaluate: both LaTeX -> Pyomo translators, scored in the sandbox.

For the printed test split (``test``) and the handwriting-like one (``test_handwritten``), each
on two LaTeX sources -- the dataset's ground truth and M1's own predictions
(data/autoopt/m1_predictions.json, written by m1-evaluate) -- each translator in
``translators``

* ``rules``: the rule-based translator (:mod:`.rules`: a lark parser + Pyomo emitter);
* ``seq2seq``: the learned model (:mod:`.seq2seq`, the verdict seed's checkpoint
  data/autoopt/m2/seq2seq_<seed>.pt, greedy decoding; not in the default profile)

writes a script per row; every script runs in the sandbox (:mod:`.sandbox`: separate worker
processes, a time and a memory limit) against the row's reference script ("compare" task:
``points`` random points of the reference's box, seeded from the verdict seed and the row id,
the same points for every translator and source), and :mod:`.equivalence` judges the two models.
Every verdict seed (``common.seeds``) runs it all with its own M1's predictions and its own
points; ``per_seed`` holds each seed's figures, the top level their means.

Per translator, source and split: the shares of rows translated (a script came out), executed
(the script ran without raising: stages ok / no_build_model / not_a_model / task_error), built a
Pyomo model (ok / task_error), and equivalent to the reference; failure reasons (the first
failing step: ``translate``, a sandbox stage, or an equivalence reason); corpus BLEU (sacrebleu,
its default 13a tokenizer, on the script text) and CER (character Levenshtein distance / reference
length, on the exact text) against the reference script with its docstring line removed from
both (it holds tags the LaTeX does not show); the equivalent rate per problem type; and the
end-to-end loss, equivalent rate on the ground truth minus on M1's LaTeX.
The rule-based translator on the true LaTeX is checked by tests (tests/autoopt/test_m2_rules.py;
its ledger claims were retired in issue 40: it reads the grammar that wrote the LaTeX).

Identical (script, reference, points) jobs are run once (a translator often writes the same
script from the ground truth and from a correct M1 prediction).

Paper: M2 BLEU 88.25, CER 0.0825 (fine-tuned DeepSeek-Coder-1.3B on 1,018 real scripts); the
paper does not test execution or equivalence. Our data is generated and our translators are ours.

Outputs: reports/autoopt/m2_metrics.json, m2_examples.json, m2_equivalence.png, m2_scores.csv.
"""
from __future__ import annotations

import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Callable

from stages.common.runtime.stage import stage

from ..params import AutoOptParams, M2EvalParams
from ..paths import CSV_M2, DATASET, M1_PREDICTIONS, M2_EXAMPLES, M2_METRICS, M2_MODEL_DIR, PLOT_M2

SPLITS = {"printed": "test", "handwritten": "test_handwritten"}
SOURCES = ("ground_truth", "m1")
EXECUTED = ("ok", "no_build_model", "not_a_model", "task_error")
BUILT = ("ok", "task_error")
CHUNK = 64          # LaTeX strings a seq2seq decoding call (m2_seq2seq.translate's own batch)

Translator = Callable[[list[str]], list[tuple[str, str]]]


class InputError(ValueError):
    """An input file is missing or malformed (the stage exits 2 with this message)."""


def row_seed(seed: int, row_id: str) -> int:
    """The compare points' seed of one row: the same for every translator and source."""
    return zlib.crc32(f"{seed}:{row_id}".encode())


def load_m1_predictions(path: Path, ids_by_split: dict[str, list[str]], seed: int) -> dict[str, list[str]]:
    """The M1 of verdict seed ``seed``: its LaTeX per split, in the dataset's row order (every row
    needs a prediction). The file holds ``{"seeds": [...], "per_seed": {"<seed>": {split: [...]}}}``."""
    import json

    if not path.exists():
        raise InputError(f"{path} not found: M1's predictions are written by the m1-evaluate stage "
                         f"(`dvc repro stages/autoopt/dvc.yaml:autoopt-m1-evaluate`)")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not JSON ({err})") from None
    per = data.get("per_seed") if isinstance(data, dict) else None
    if not isinstance(per, dict) or str(seed) not in per:
        raise InputError(f"{path}: no predictions of verdict seed {seed} (seeds there: "
                         f"{sorted(per) if isinstance(per, dict) else None}); re-run autoopt-m1-evaluate "
                         f"with the same common.seeds")
    data = per[str(seed)]
    out = {}
    for name, ids in ids_by_split.items():
        entries = data.get(name) if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise InputError(f"{path}: no list under {name!r} (keys: {sorted(data) if isinstance(data, dict) else type(data).__name__})")
        by_id = {}
        for e in entries:
            if not (isinstance(e, dict) and isinstance(e.get("id"), str) and isinstance(e.get("latex"), str)):
                raise InputError(f"{path}: {name} entries are {{'id': str, 'latex': str}}, got {e!r:.80}")
            by_id[e["id"]] = e["latex"]
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise InputError(f"{path}: no {name} prediction for {len(missing)} row(s), e.g. {missing[0]}")
        out[name] = [by_id[i] for i in ids]
    return out


def text_scores(hyps: list[str], refs: list[str]) -> dict[str, float]:
    """Corpus BLEU (sacrebleu, 13a) and CER of scripts against references (docstrings removed)."""
    import sacrebleu
    from rapidfuzz.distance import Levenshtein

    from .docstring import strip_docstring

    h = [strip_docstring(x) for x in hyps]
    r = [strip_docstring(x) for x in refs]
    bleu = float(sacrebleu.corpus_bleu(h, [r]).score) if r else 0.0
    dist = sum(Levenshtein.distance(a, b) for a, b in zip(h, r))
    return {"bleu": bleu, "cer": dist / max(1, sum(len(b) for b in r))}


def summarise(rows: list[dict], types: list[str]) -> dict:
    """Rates and failure reasons of one (translator, source, split) group."""
    n = len(rows)
    reasons = Counter(r["reason"] for r in rows if not r["equivalent"])
    by_type: dict[str, dict] = {}
    for t in sorted(set(types)):
        sel = [r for r, tt in zip(rows, types) if tt == t]
        by_type[t] = {"n": len(sel), "equivalent_rate": sum(r["equivalent"] for r in sel) / len(sel)}
    return {"n": n,
            "translated_rate": sum(r["translated"] for r in rows) / n,
            "executes_rate": sum(r["stage"] in EXECUTED for r in rows) / n,
            "builds_rate": sum(r["stage"] in BUILT for r in rows) / n,
            "equivalent_rate": sum(r["equivalent"] for r in rows) / n,
            "failure_reasons": dict(sorted(reasons.items())),
            "by_type": by_type}


def evaluate(splits: dict[str, dict], m1: dict[str, list[str]], translators: dict[str, Translator],
             p: M2EvalParams, seed: int) -> tuple[dict, dict, list[dict]]:
    """The whole evaluation. ``splits[name]`` holds the rows' ``id``, ``latex``, ``pyomo`` and
    ``type`` lists; ``m1[name]`` M1's LaTeX in the same order. Returns (metrics, examples, csv rows)."""
    from .equivalence import judge
    from .sandbox import run_batch

    t0 = time.perf_counter()
    timing: dict[str, float] = {}
    scripts: dict[tuple, list[tuple[str, str]]] = {}
    for tname, fn in translators.items():
        t = time.perf_counter()
        for split, rows in splits.items():
            for source in SOURCES:
                latex = rows["latex"] if source == "ground_truth" else m1[split]
                out = fn(list(latex))
                if len(out) != len(latex):
                    raise RuntimeError(f"translator {tname} returned {len(out)} scripts for {len(latex)} inputs")
                scripts[(tname, source, split)] = out
        timing[f"translate_{tname}_s"] = time.perf_counter() - t

    # one sandbox batch over the distinct jobs
    jobs: dict[tuple, int] = {}
    for (tname, source, split), out in scripts.items():
        rows = splits[split]
        for (script, err), rid, ref in zip(out, rows["id"], rows["pyomo"]):
            if not err:
                jobs.setdefault((script, ref, row_seed(seed, rid)), len(jobs))
    job_list = list(jobs)
    t = time.perf_counter()
    results = run_batch([j[0] for j in job_list],
                        [{"kind": "compare", "reference": j[1], "points": p.points, "seed": j[2]} for j in job_list],
                        time_limit_s=p.time_limit_s, memory_mb=p.memory_mb, workers=p.workers,
                        desc=f"sandbox ({len(job_list)} distinct scripts)")
    timing["sandbox_s"] = time.perf_counter() - t
    verdicts = []
    for res in results:
        if res.ok:
            v = judge(res.payload, rel_tol=p.rel_tol, abs_tol=p.abs_tol)
            verdicts.append((res.stage, v.equivalent, v.reason or "", v.detail))
        else:
            verdicts.append((res.stage, False, res.stage, res.error))

    metrics: dict = {"m2": {}, "end_to_end_loss": {}, "rows": {s: len(r["id"]) for s, r in splits.items()},
                     "sandbox_jobs": len(job_list)}
    examples: dict = {s: [] for s in splits}
    csv_rows = []
    per_row: dict[tuple, list[dict]] = {}
    for (tname, source, split), out in scripts.items():
        rows = splits[split]
        scored = []
        for (script, err), rid, ref in zip(out, rows["id"], rows["pyomo"]):
            if err:
                scored.append({"translated": False, "stage": "translate", "equivalent": False,
                               "reason": "translate", "detail": err})
                continue
            st, eq, reason, detail = verdicts[jobs[(script, ref, row_seed(seed, rid))]]
            scored.append({"translated": True, "stage": st, "equivalent": eq, "reason": reason, "detail": detail})
        per_row[(tname, source, split)] = scored
        group = {**summarise(scored, list(rows["type"])),
                 **text_scores([s for s, _ in out], list(rows["pyomo"]))}
        metrics["m2"].setdefault(tname, {}).setdefault(source, {})[split] = group
        csv_rows.append({"translator": tname, "source": source, "split": split,
                         **{k: group[k] for k in ("equivalent_rate", "builds_rate", "executes_rate",
                                                  "translated_rate", "bleu", "cer")}})
    for tname in translators:
        metrics["end_to_end_loss"][tname] = {
            split: metrics["m2"][tname]["ground_truth"][split]["equivalent_rate"]
            - metrics["m2"][tname]["m1"][split]["equivalent_rate"] for split in splits}
    for split, rows in splits.items():
        for k in range(min(p.examples, len(rows["id"]))):
            ex = {"id": rows["id"][k], "type": rows["type"][k], "latex": rows["latex"][k],
                  "m1_latex": m1[split][k], "reference": rows["pyomo"][k]}
            for tname in translators:
                for source in SOURCES:
                    script, err = scripts[(tname, source, split)][k]
                    r = per_row[(tname, source, split)][k]
                    ex[f"{tname}.{source}"] = {"script": script, "error": err, "stage": r["stage"],
                                               "equivalent": r["equivalent"], "reason": r["reason"],
                                               "detail": r["detail"]}
            examples[split].append(ex)
    timing["total_s"] = time.perf_counter() - t0
    metrics["seconds"] = timing
    return metrics, examples, csv_rows


def plot(metrics: dict, path: Path) -> None:
    import numpy as np

    from stages.common.plots import new_figure, save_png

    tnames = list(metrics["m2"])
    groups = [(source, split) for split in SPLITS for source in SOURCES
              if split in metrics["m2"][tnames[0]][source]]
    fig, ax = new_figure(figsize=(7.5, 3.8))
    w = 0.8 / len(tnames)
    for j, tname in enumerate(tnames):
        vals = [metrics["m2"][tname][source][split]["equivalent_rate"] for source, split in groups]
        bars = ax.bar(np.arange(len(groups)) + (j - (len(tnames) - 1) / 2) * w, vals, w,
                      label={"rules": "rule-based (lark)", "seq2seq": "seq2seq (learned)"}.get(tname, tname))
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
    label = {"ground_truth": "true LaTeX", "m1": "M1's LaTeX"}
    ax.set_xticks(np.arange(len(groups)), [f"{split}\n{label[source]}" for source, split in groups], fontsize=8)
    ax.set_ylabel("equivalent to the reference model")
    ax.set_ylim(0, 1.1)
    ax.set_title("M2: LaTeX -> Pyomo, share of test rows whose model is equivalent", fontsize=10)
    ax.legend(fontsize=8)
    save_png(fig, path)


def seq2seq_translator(ckpt: Path, device) -> Translator:
    if not ckpt.exists():
        raise InputError(f"{ckpt} not found: the seq2seq checkpoint is written by the m2-train stage "
                         f"(`dvc repro stages/autoopt/dvc.yaml:autoopt-m2-train`), or drop seq2seq from m2_evaluate.translators")
    from .seq2seq import load_checkpoint, translate

    model, vocab = load_checkpoint(ckpt, device)

    def one(text: str) -> tuple[str, str]:
        try:
            return translate(model, vocab, [text], device)[0], ""
        except ValueError as err:           # e.g. LaTeX the tokenizer refuses
            return "", f"seq2seq: {err}"[:300]

    def run(latex: list[str]) -> list[tuple[str, str]]:
        """Greedy decoding in chunks of CHUNK strings sorted by length (for a progress bar;
        a chunk that raises is decoded string by string, so one bad input costs only itself)."""
        from tqdm import tqdm

        order = sorted(range(len(latex)), key=lambda k: len(latex[k]))
        out: list[tuple[str, str]] = [("", "")] * len(latex)
        for s in tqdm(range(0, len(order), CHUNK), desc="seq2seq decoding", mininterval=5):
            idx = order[s:s + CHUNK]
            try:
                scripts = [(t, "") for t in translate(model, vocab, [latex[k] for k in idx], device)]
            except ValueError:
                scripts = [one(latex[k]) for k in idx]
            for k, pair in zip(idx, scripts):
                out[k] = pair
        return out
    return run


def main() -> None:
    with stage("autoopt", "m2-evaluate", AutoOptParams) as ctx:
        from stages.common.device import limit_threads, select_device
        from stages.common.io import write_json
        from stages.common.plots import write_csv
        from stages.common.seeds import per_seed_metrics

        from .rules import translate_many

        p = ctx.params.m2_evaluate
        if "seq2seq" in p.translators:
            limit_threads(default=1)          # imports torch: only when the learned model decodes
        try:
            import datasets

            dd = datasets.load_from_disk(str(ctx.path(DATASET)))
            splits = {}
            for name, split in SPLITS.items():
                if split not in dd:
                    raise InputError(f"the dataset has no {split} split (the published layout has none)")
                ds = dd[split]
                k = len(ds) if p.max_rows == 0 else min(p.max_rows, len(ds))
                ds = ds.select(range(k)).select_columns(["id", "latex", "pyomo", "tags"])
                splits[name] = {"id": list(ds["id"]), "latex": list(ds["latex"]), "pyomo": list(ds["pyomo"]),
                                "type": [t["type"] for t in ds["tags"]]}
            seeds = list(ctx.seeds)
            m1 = {s_: load_m1_predictions(ctx.path(M1_PREDICTIONS), {s: r["id"] for s, r in splits.items()}, s_)
                  for s_ in seeds}
            from .seq2seq import seq2seq_checkpoint

            translators_of: dict[int, dict[str, Translator]] = {}
            for s_ in seeds:
                translators_of[s_] = {}
                for tname in p.translators:
                    if tname == "rules":
                        translators_of[s_][tname] = translate_many
                    else:
                        translators_of[s_][tname] = seq2seq_translator(
                            seq2seq_checkpoint(ctx.path(M2_MODEL_DIR), s_), select_device(ctx.common.device))
        except InputError as err:
            from stages.common.runtime.stage import fail

            fail(str(err))
        # every verdict seed: its M1's LaTeX, and its own compare points (row_seed) for every source
        per_seed, examples, csv_rows = {}, {}, []
        for s_ in seeds:
            per_seed[s_], ex, rows = evaluate(splits, m1[s_], translators_of[s_], p, s_)
            examples = examples or ex
            csv_rows += [{"seed": s_, **r} for r in rows]
            print(f"  seed {s_} done", flush=True)
        metrics = per_seed_metrics(per_seed)
        write_json(ctx.path(M2_METRICS), metrics)
        write_json(ctx.path(M2_EXAMPLES), examples)
        write_csv(ctx.path(CSV_M2), csv_rows)
        plot(metrics, ctx.path(PLOT_M2))
        for r in csv_rows:
            print(f"  seed {r['seed']} {r['translator']:8s} {r['source']:12s} {r['split']:11s} equivalent {r['equivalent_rate']:.3f} "
                  f"builds {r['builds_rate']:.3f} BLEU {r['bleu']:.1f} CER {r['cer']:.3f}")
        print("  seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in metrics["seconds"].items()))


if __name__ == "__main__":
    main()
