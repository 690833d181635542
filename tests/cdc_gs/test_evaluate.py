"""cdc_gs evaluation: PSNR/SSIM from skimage.metrics on known cases, our masked PSNR against
skimage's on the full mask, the claims' per-seed summary on hand-made rows and its per_seed layout
as the ledger reads it, and the pyfunc model's renders."""
from __future__ import annotations

from pathlib import Path

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


ARMS = ("adc", "loss_map", "cdc", "cdc_shuffled")


def rows_of(psnr: dict, counts=(10,)) -> list[dict]:
    """Hand-made per-fit rows: psnr[arm] = one value per image (the same at every count + count/10)."""
    return [{"image": f"im{i}", "arm": arm, "count": c, "psnr": v + c / 10, "ssim": v / 100, "hf_psnr": v - 1}
            for arm, vals in psnr.items() for i, v in enumerate(vals) for c in counts]


def test_summarise_means_over_images_and_counts():
    psnr = {"adc": [20, 22, 25, 30], "loss_map": [21, 22, 26, 30], "cdc": [21, 21.5, 26, 31],
            "cdc_shuffled": [20.5, 22, 25, 31.5]}
    m = summarise(rows_of(psnr, (10, 20)), 20, [10, 20])
    assert m["mean_psnr"]["cdc"] == pytest.approx(np.mean(psnr["cdc"]) + 1.5)
    assert m["mean_psnr"]["cdc"] - m["mean_psnr"]["loss_map"] == pytest.approx((0 - 0.5 + 0 + 1) / 4)
    assert m["by_count"]["10"]["psnr_gain"] == pytest.approx(0.125) == m["min_count_psnr_gain"]
    assert m["by_count"]["20"]["psnr"]["adc"] == pytest.approx(np.mean(psnr["adc"]) + 2)
    assert m["mean_hf_psnr_gain"] == pytest.approx((1 - 0.5 + 1 + 1) / 4) and m["images_cdc_hf_psnr_gt_adc"] == 3
    assert m["mean_psnr_gain_over_shuffled"] == pytest.approx((0.5 - 0.5 + 1 - 0.5) / 4)
    assert m["images_cdc_psnr_gt_shuffled"] == 2
    assert m["per_image"]["im3"]["psnr.cdc_shuffled"] == pytest.approx(33.5)


def test_per_seed_layout_the_claims_read():
    """metrics.json: per_seed figures (seed keys as strings) beside their means; the ledger reads
    each claim's metric, baseline and control per seed (stages/common/claims.py)."""
    from stages.common.claims import evaluate, load_claims
    from stages.common.seeds import per_seed_metrics

    psnr = {"adc": [20, 22, 25, 30], "loss_map": [21, 22, 26, 30], "cdc": [21, 21.5, 26, 31],
            "cdc_shuffled": [20.5, 22, 25, 31.5]}
    shifted = {a: [v + 0.1 * (a == "cdc") for v in vals] for a, vals in psnr.items()}
    per = {0: summarise(rows_of(psnr), 10, [10]), 1: summarise(rows_of(shifted), 10, [10])}
    m = per_seed_metrics(per, n_images=4, main_count=10, counts=[10])
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"}
    assert m["mean_psnr"]["cdc"] == pytest.approx(np.mean(psnr["cdc"]) + 1 + 0.05)
    assert m["per_seed"]["1"]["mean_psnr"]["cdc"] - m["per_seed"]["0"]["mean_psnr"]["cdc"] == pytest.approx(0.1)
    cf = load_claims(Path(__file__).resolve().parents[2] / "stages/cdc_gs/claims.yaml")
    rows = {r["id"]: r for r in evaluate(cf, m, [0, 1])}
    live = [c for c in cf.claims if not c.retired]
    assert live and all(rows[c.id]["verdict"] != "not run" for c in live), \
        {c.id: rows[c.id]["verdict"] for c in live}
    must = next(rows[c.id] for c in live if c.level == "must")
    assert must["n"] == 2 and must["control"]["n"] == 2
    assert must["per_seed"]["1"] - must["per_seed"]["0"] == pytest.approx(0.1)


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
    for seed in (0, 1):
        for m in ("adc", "cdc", "cdc_shuffled"):
            f = splat.Fitter(splat.FitJob(img, m[:3], seed, "shuffled" if m == "cdc_shuffled" else "wavelet"), cfg)
            f.fit()
            fits.update({f"{seed}|im|{m}|8|{k}": v for k, v in f.export().items()})
            fits[f"{seed}|im|{m}|8|render"] = f.render().detach().numpy()[0, ..., 0]
    save_model(tmp_path / "model", fits, ["im"], 1, 8)
    model = mlflow.pyfunc.load_model(str(tmp_path / "model"))
    out = model.predict(pd.DataFrame({"image": ["im", "im"], "method": ["adc", "cdc"]}))
    np.testing.assert_allclose(np.array(out[1]), fits["1|im|cdc|8|render"], atol=1e-5)
    with pytest.raises(ValueError, match="no fit for image 'dog'"):
        model.predict(pd.DataFrame({"image": ["dog"], "method": ["adc"]}))
    with pytest.raises(ValueError, match="no fit for image 'im' and method 'cdc_shuffled'"):
        model.predict(pd.DataFrame({"image": ["im"], "method": ["cdc_shuffled"]}))
