"""gara_sam prepare: the synthetic scenes.

Pre-training set: clean scenes with every shape kind (what the frozen segmenter, our stand-in for
SAM, learns from), drawn once from the fixed ``base_seed``: SAM is one fixed pre-trained model, so
the stand-in is one too, shared by every verdict seed. Per verdict seed (``ctx.seeds``), from that
seed: the adaptation set: scenes with ``adapt_shapes`` only, each under one random *seen*
corruption, plus ``clean_frac`` clean copies. Test set: ``n_test`` scenes with every shape kind, each
shown clean and under every seen and unseen corruption (paired: the same scenes in every condition).
Images are stored as uint8 (the stages read them as value / 255).

Outputs: data/gara_sam/scenes.npz (``pre_x``, ``pre_y``; ``<seed>/adapt_x`` ... per seed) and reports/gara_sam/prepare.json (sizes, conditions, foreground share).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, SCENES


def _u8(x):
    import numpy as np

    return np.round(np.clip(x, 0, 1) * 255).astype(np.uint8)


def build_base(p) -> dict:
    """The pre-training scenes, drawn from the fixed ``p.base_seed`` (the same for every verdict seed)."""
    import numpy as np

    from .scenes import make_scenes

    pre_x, pre_y = make_scenes(p.n_pretrain, p.size, np.random.default_rng([p.base_seed, 1]))
    return {"pre_x": _u8(pre_x), "pre_y": pre_y.astype(np.uint8)}


def build_seed(p, seed: int, progress: bool = True) -> dict:
    """One seed's adaptation and test scenes (arrays keyed without the seed), drawn from ``seed`` only."""
    import numpy as np
    from tqdm import tqdm

    from .scenes import CONDITIONS, SEEN, corrupt_batch, make_scenes

    rng = np.random.default_rng([seed, 0])
    ad_x, ad_y = make_scenes(p.n_adapt, p.size, rng, shapes=tuple(p.adapt_shapes))
    kind = rng.integers(len(SEEN), size=p.n_adapt)
    ad_x = corrupt_batch(ad_x, [SEEN[k] for k in kind], rng, p.severity_low)
    n_clean = int(round(p.clean_frac * p.n_adapt))
    if n_clean:
        cx, cy = make_scenes(n_clean, p.size, rng, shapes=tuple(p.adapt_shapes))
        ad_x, ad_y = np.concatenate([ad_x, cx]), np.concatenate([ad_y, cy])
        kind = np.concatenate([kind, np.full(n_clean, -1)])
    te_x, te_y = make_scenes(p.n_test, p.size, rng)
    test = [_u8(corrupt_batch(te_x, [c] * p.n_test, rng, p.severity_low))
            for c in tqdm(CONDITIONS, desc=f"gara_sam: seed {seed} test conditions", disable=not progress,
                          mininterval=2)]
    return {"adapt_x": _u8(ad_x), "adapt_y": ad_y.astype(np.uint8), "adapt_kind": kind.astype(np.int8),
            "test_x": np.stack(test), "test_y": te_y.astype(np.uint8)}


def build(p, seeds, progress: bool = True) -> dict:
    """The arrays of scenes.npz for prepare params ``p``: the shared pre-training scenes and each
    seed's adaptation and test scenes under ``<seed>/``."""
    out = build_base(p)
    for s in seeds:
        out.update({f"{s}/{k}": v for k, v in build_seed(p, s, progress).items()})
    return out


def main() -> None:
    with stage("gara_sam", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .scenes import CONDITIONS, SEEN, UNSEEN

        p = ctx.params.prepare
        arrays = build(p, ctx.seeds)
        write_npz(ctx.path(SCENES), arrays)
        k = arrays[f"{ctx.seeds[0]}/adapt_kind"]
        write_json(ctx.path(PREPARE_METRICS), {
            "n_pretrain": p.n_pretrain, "n_adapt": int(len(k)), "n_adapt_clean": int((k < 0).sum()),
            "n_test": p.n_test, "seeds": list(ctx.seeds), "base_seed": p.base_seed, "size": p.size, "conditions": list(CONDITIONS), "seen": list(SEEN),
            "unseen": list(UNSEEN), "foreground_share_test": float(np.mean([arrays[f"{s}/test_y"].mean() for s in ctx.seeds]))})
        print(f"  {p.n_pretrain} pre-training, {len(k)} adaptation ({int((k < 0).sum())} clean), "
              f"{p.n_test} test scenes x {len(CONDITIONS)} conditions, "
              f"per seed of {list(ctx.seeds)}", flush=True)


if __name__ == "__main__":
    main()
