"""cdc_gs prepare: the target images (scikit-image's shipped test images, offline) and their wavelet
complexity maps.

Each image is centre-cropped to a square, converted to grey (skimage.color.rgb2gray), scaled to
[0, 1] and resized with anti-aliasing to ``size`` x ``size`` (skimage.transform.resize).
Outputs: data/cdc_gs/images.npz (``names``, ``images`` (k, size, size), ``complexity`` (k, size,
size)) and reports/cdc_gs/prepare.json (per image: mean complexity, share of pixels above 0.5).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import IMAGES, PREPARE_METRICS


def load_image(name: str, size: int):
    """skimage.data's ``name`` as a (size, size) float32 grey image in [0, 1]."""
    import numpy as np
    from skimage import color, data, transform

    img = np.asarray(getattr(data, name)())
    if img.ndim == 3:
        img = color.rgb2gray(img[..., :3])
    img = img.astype(np.float64)
    if img.max() > 1.5:
        img = img / 255.0
    h, w = img.shape
    s = min(h, w)
    img = img[(h - s) // 2:(h - s) // 2 + s, (w - s) // 2:(w - s) // 2 + s]
    return np.clip(transform.resize(img, (size, size), anti_aliasing=True), 0, 1).astype(np.float32)


def main() -> None:
    with stage("cdc_gs", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json, write_npz

        from .splat import wavelet_complexity

        p = ctx.params.prepare
        imgs = np.stack([load_image(n, p.size) for n in p.images])
        cmaps = np.stack([wavelet_complexity(im, p.wavelet, p.wavelet_levels) for im in imgs]).astype(np.float32)
        write_npz(ctx.path(IMAGES), {"names": np.array(p.images), "images": imgs, "complexity": cmaps})
        stats = {n: {"mean_complexity": float(c.mean()), "share_above_half": float((c > 0.5).mean()),
                     "pixel_std": float(im.std())} for n, im, c in zip(p.images, imgs, cmaps)}
        write_json(ctx.path(PREPARE_METRICS), {"size": p.size, "images": stats})
        for n, s in stats.items():
            print(f"  {n}: mean complexity {s['mean_complexity']:.3f}, {100 * s['share_above_half']:.0f}% of "
                  f"pixels above 0.5", flush=True)


if __name__ == "__main__":
    main()
