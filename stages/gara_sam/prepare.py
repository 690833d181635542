"""gara_sam prepare: the synthetic scenes, generated from the seed.

Pre-training set: clean scenes with every shape kind (what the frozen segmenter, our stand-in for
SAM, learns from). Adaptation set: scenes with ``adapt_shapes`` only, each under one random *seen*
corruption, plus ``clean_frac`` clean copies. Test set: ``n_test`` scenes with every shape kind, each
shown clean and under every seen and unseen corruption (paired: the same scenes in every condition).
Images are stored as uint8 (the stages read them as value / 255).

Outputs: data/gara_sam/scenes.npz and reports/gara_sam/prepare.json (sizes, conditions, foreground share).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import PREPARE_METRICS, SCENES


def build(p, seed: int, progress: bool = True) -> dict:
    """The arrays of scenes.npz for prepare params ``p``."""
    import numpy as np
    from tqdm import tqdm

    from .scenes import CONDITIONS, SEEN, corrupt_batch, make_scenes

    def u8(x):
        return np.round(np.clip(x, 0, 1) * 255).astype(np.uint8)

    rng = np.random.default_rng([seed, 0])
    pre_x, pre_y = make_scenes(p.n_pretrain, p.size, rng)
    ad_x, ad_y = make_scenes(p.n_adapt, p.size, rng, shapes=tuple(p.adapt_shapes))
    kind = rng.integers(len(SEEN), size=p.n_adapt)
    ad_x = corrupt_batch(ad_x, [SEEN[k] for k in kind], rng, p.severity_low)
    n_clean = int(round(p.clean_frac * p.n_adapt))
    if n_clean:
        cx, cy = make_scenes(n_clean, p.size, rng, shapes=tuple(p.adapt_shapes))
        ad_x, ad_y = np.concatenate([ad_x, cx]), np.concatenate([ad_y, cy])
        kind = np.concatenate([kind, np.full(n_clean, -1)])
    te_x, te_y = make_scenes(p.n_test, p.size, rng)
    test = [u8(corrupt_batch(te_x, [c] * p.n_test, rng, p.severity_low))
            for c in tqdm(CONDITIONS, desc="gara_sam: test conditions", disable=not progress, mininterval=2)]
    return {"pre_x": u8(pre_x), "pre_y": pre_y.astype(np.uint8), "adapt_x": u8(ad_x), "adapt_y": ad_y.astype(np.uint8),
            "adapt_kind": kind.astype(np.int8), "test_x": np.stack(test), "test_y": te_y.astype(np.uint8)}


def main() -> None:
    with stage("gara_sam", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json, write_npz

        from .scenes import CONDITIONS, SEEN, UNSEEN

        p = ctx.params.prepare
        arrays = build(p, ctx.seed)
        write_npz(ctx.path(SCENES), arrays)
        k = arrays["adapt_kind"]
        write_json(ctx.path(PREPARE_METRICS), {
            "n_pretrain": p.n_pretrain, "n_adapt": int(len(k)), "n_adapt_clean": int((k < 0).sum()),
            "n_test": p.n_test, "size": p.size, "conditions": list(CONDITIONS), "seen": list(SEEN),
            "unseen": list(UNSEEN), "foreground_share_test": float(arrays["test_y"].mean())})
        print(f"  {p.n_pretrain} pre-training, {len(k)} adaptation ({int((k < 0).sum())} clean), "
              f"{p.n_test} test scenes x {len(CONDITIONS)} conditions", flush=True)


if __name__ == "__main__":
    main()
