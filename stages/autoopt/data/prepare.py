"""autoopt prepare: an AutoOpt-11k-format dataset.

``source: generated`` (default): formulations from the grammar (four problem types, six
complexities), each with canonical LaTeX, a Pyomo script (built once here to check it), tags and
the optimum where known (LP/MILP by HiGHS, planted ones by construction), rendered printed or
handwriting-like. ``source: published``: the Kaggle AutoOpt-11k folder at ``published_path``.

Outputs: data/autoopt/dataset (Hugging Face DatasetDict: train, validation, test,
test_handwritten), data/autoopt/card.json + card.md (counts per split, type, complexity, style),
reports/autoopt/contact_sheet.png, reports/autoopt/prepare.json (metrics).
"""
from __future__ import annotations

from stages.common.runtime.stage import fail, stage

from ..params import AutoOptParams
from ..paths import CARD_JSON, CARD_MD, CONTACT, DATASET
from ..paths import PREPARE_METRICS as METRICS


def generated_rows(p, seed: int) -> dict[str, list[dict]]:
    from multiprocessing import get_context

    from tqdm import tqdm

    from . import rows as data
    from .render import RenderSpec

    spec = RenderSpec(fontsets=tuple(p.fontsets), font_sizes=tuple(p.font_sizes), dpi=p.dpi)
    gen = {"type_weights": dict(p.type_weights), "complexity_rate": p.complexity_rate,
           "n_choices": list(p.n_choices), "max_explicit": p.max_explicit,
           "lp_share": p.lp_share, "inline_share": p.inline_share}
    out = {}
    for split, count in p.sizes.model_dump().items():
        jobs = data.jobs(seed, split, count, p.handwritten_train_share, gen, spec)
        if p.workers > 1:
            with get_context("spawn").Pool(p.workers) as pool:   # fork hung under the stage runner
                rows = list(tqdm(pool.imap(data.make_row, jobs, chunksize=16), total=len(jobs),
                                 desc=f"render {split}", mininterval=2))
        else:
            rows = [data.make_row(j) for j in tqdm(jobs, desc=f"render {split}", mininterval=2)]
        out[split] = rows
    return out


def published_rows(p) -> dict[str, list[dict]]:
    import numpy as np
    from PIL import Image

    from . import rows as data
    from .published import PublishedDataError, load_published

    try:
        splits = load_published(p.published_path, p.published_max_per_split)
    except PublishedDataError as err:
        fail(str(err))
    out = {}
    for split, items in splits.items():
        rows = []
        for idx, png, latex in items:
            with Image.open(png) as im:
                arr = np.asarray(im.convert("L"))
            rows.append({"id": f"{split}-{idx:06d}", "image": {"bytes": data.png_bytes(arr), "path": None},
                         "latex": latex, "pyomo": "", "style": "unknown",
                         "tags": {"type": "unknown", "sense": "", "complexities": ["unknown"], "n": 0,
                                  "integer": False, "layout": "", "family": "", "objectives": 0,
                                  "constraints": 0},
                         "optimum": None, "optimum_source": "none", "planted_point": "",
                         "height": int(arr.shape[0]), "width": int(arr.shape[1])})
        out[split] = rows
    return out


def contact_sheet(rows_by_split: dict[str, list[dict]], k: int, path) -> None:
    import io

    import numpy as np
    from PIL import Image

    from stages.common.plots import new_figure, save_png

    picks = []
    for split in ("test", "test_handwritten"):
        picks += [(split, r) for r in rows_by_split.get(split, [])[: (k + 1) // 2]]
    if not picks:
        picks = [(s, r) for s, rows in rows_by_split.items() for r in rows][:k]
    cols = 2
    nrows = (len(picks) + cols - 1) // cols
    fig, axes = new_figure(nrows, cols, figsize=(12, 2.1 * nrows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, (split, r) in zip(axes.flat, picks):
        img = np.asarray(Image.open(io.BytesIO(r["image"]["bytes"])))
        ax.imshow(img, cmap="gray", vmin=0, vmax=255)
        t = r["tags"]
        ax.set_title(f"{split} · {t['type']} · {', '.join(t['complexities'])} · n={t['n']}",
                     fontsize=7)
    fig.suptitle("autoopt samples: printed test split, then the handwriting-like test split", fontsize=9)
    save_png(fig, path, dpi=90)


def main() -> None:
    with stage("autoopt", "prepare", AutoOptParams) as ctx:
        import time

        import datasets

        from stages.common.io import atomic_dir, write_json, write_text

        from . import rows as data

        p = ctx.params.prepare
        t0 = time.perf_counter()
        rows = generated_rows(p, p.data_seed) if p.source == "generated" else published_rows(p)
        render_s = time.perf_counter() - t0
        feats = data.features()
        dd = datasets.DatasetDict({s: datasets.Dataset.from_list(r, features=feats)
                                   for s, r in rows.items()})
        with atomic_dir(ctx.path(DATASET)) as tmp:
            dd.save_to_disk(str(tmp))
        c = data.card(rows, p.source)
        write_json(ctx.path(CARD_JSON), c)
        write_text(ctx.path(CARD_MD), data.card_markdown(c))
        contact_sheet(rows, p.contact_sheet, ctx.path(CONTACT))
        all_rows = [r for rs in rows.values() for r in rs]
        metrics = {
            "source": p.source,
            "samples": len(all_rows),
            "per_split": {s: len(r) for s, r in rows.items()},
            "by_type": _counts(r["tags"]["type"] for r in all_rows),
            "by_complexity": _counts(c for r in all_rows for c in r["tags"]["complexities"]),
            "optimum_known": sum(r["optimum"] is not None for r in all_rows),
            "optimum_highs": sum(r["optimum_source"] == "highs" for r in all_rows),
            "optimum_planted": sum(r["optimum_source"] == "planted" for r in all_rows),
            "lp_not_optimal": sum(r["tags"]["family"] == "lp" and r["optimum"] is None for r in all_rows),
            "max_n": max((r["tags"]["n"] for r in all_rows), default=0),
            "render_s": render_s,
        }
        write_json(ctx.path(METRICS), metrics)
        print(f"  {len(all_rows)} samples ({', '.join(f'{s} {len(r)}' for s, r in rows.items())}); "
              f"optimum known for {metrics['optimum_known']}; {render_s:.1f}s to build")


def _counts(items) -> dict[str, int]:
    from collections import Counter

    return dict(sorted(Counter(items).items()))


if __name__ == "__main__":
    main()
