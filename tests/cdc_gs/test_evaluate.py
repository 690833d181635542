"""cdc_gs evaluation: PSNR/SSIM from skimage.metrics on known cases, our masked PSNR against
skimage's on the full mask, the claims' summary on hand-made rows, and the pyfunc model's renders."""
from __future__ import annotations

import numpy as np
import pytest

from stages.cdc_gs.evaluate import masked_psnr, score, summarise


def test_psnr_of_a_constant_error_is_20_db():
    t = np.zeros((16, 16))
    s = score(t, np.full((16, 16), 0.1), np.random.default_rng(0).random((16, 16)), 0.75)
    assert s["psnr"] == pytest.approx(20.0) and s["hf_psnr"] == pytest.approx(20.0)


def test_masked_psnr_on_all_pixels_is_skimage_psnr():
    from skimage.metrics import peak_signal_noise_ratio

    rng = np.random.default_rng(1)
    t, r = rng.random((20, 20)), rng.random((20, 20))
    assert masked_psnr(t, r, np.ones((20, 20), bool)) == pytest.approx(peak_signal_noise_ratio(t, r, data_range=1.0))
    with pytest.raises(ValueError, match="selects no pixel"):
        masked_psnr(t, r, np.zeros((20, 20), bool))


def test_ssim_of_identical_images_is_one_and_render_is_clipped():
    t = np.random.default_rng(2).random((16, 16))
    s = score(t, t * 3 - 1, np.ones((16, 16)), 0.5)                 # clipped render differs from t
    assert s["ssim"] < 1.0
    assert score(t, t, np.ones((16, 16)), 0.5)["ssim"] == pytest.approx(1.0)


def test_summarise_counts_wins():
    rows = []
    for i, (a, c) in enumerate([(20, 21), (22, 21.5), (25, 26), (30, 31)]):
        for meth, v in (("adc", a), ("cdc", c)):
            rows.append({"image": f"im{i}", "method": meth, "count": 10, "psnr": v, "ssim": v / 100, "hf_psnr": v})
    m = summarise(rows, 10, [10])
    assert m["images_cdc_psnr_gt_adc"] == 3 and m["n_images"] == 4
    assert m["mean_psnr_gain"] == pytest.approx((1 - 0.5 + 1 + 1) / 4)
    assert m["counts_cdc_mean_psnr_gt_adc"] == 1 and "mean_psnr_gain_over_shuffled" not in m


def test_pyfunc_renders_the_saved_splats(tmp_path):
    import mlflow.pyfunc
    import pandas as pd

    from stages.cdc_gs import splat
    from stages.cdc_gs.train import save_model

    cfg = splat.FitConfig(n_target=8, init_fraction=0.5, steps=3, densify_from=1, densify_every=1, densify_until=2,
                          lr_mu=0.05, lr_scale=0.02, lr_theta=0.02, lr_color=0.02, lr_opacity=0.02,
                          clone_max_scale=1.0, min_opacity=0.0, cdc_densify_fraction=0.1, cdc_prune_fraction=0.1)
    img = np.random.default_rng(0).random((8, 8)).astype(np.float32)
    fits = {}
    for m in ("adc", "cdc"):
        f = splat.Fitter(img, cfg, m, seed=0)
        f.fit()
        fits.update({f"im|{m}|8|{k}": v for k, v in f.export().items()})
        fits[f"im|{m}|8|render"] = f.render().detach().numpy()[..., 0]
    save_model(tmp_path / "model", fits, ["im"], 8)
    model = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    out = model.predict(pd.DataFrame({"image": ["im", "im"], "method": ["adc", "cdc"]}))
    np.testing.assert_allclose(np.array(out[1]), fits["im|cdc|8|render"], atol=1e-5)
    with pytest.raises(ValueError, match="no fit for image 'dog'"):
        model.predict(pd.DataFrame({"image": ["dog"], "method": ["adc"]}))
