"""cdc_gs maths against closed forms and hand cases: the renderer (one Gaussian's value and
integral), the wavelet energy (Parseval), kNN density, the consistency picks, the fit's
bookkeeping (exact final count, same start for both methods, determinism), and bad inputs."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from stages.cdc_gs import splat

from tests.helpers import bit_exact_batching


def one(mu=(10.0, 12.0), s=(2.0, 2.0), theta=0.0, o=0.7, c=0.8):
    logit = math.log(o / (1 - o))
    return {"mu": torch.tensor([mu]), "log_scale": torch.log(torch.tensor([s])), "theta": torch.tensor([theta]),
            "color": torch.tensor([[c]]), "opacity_logit": torch.tensor([logit])}


def test_one_gaussian_value_at_pixels_by_hand():
    # mean on the centre of pixel (row 12, col 10) -> value c*o there; 3 px to the right: c*o*exp(-9/(2*4))
    p = one(mu=(10.5, 12.5))
    img = splat.render(p, 24, 24)[..., 0]
    assert img[12, 10].item() == pytest.approx(0.8 * 0.7, rel=1e-4)
    assert img[12, 13].item() == pytest.approx(0.8 * 0.7 * math.exp(-9 / 8), rel=1e-3)


def test_rotated_anisotropic_gaussian_matches_the_covariance_formula():
    p = one(mu=(20.3, 15.7), s=(4.0, 1.5), theta=0.6)
    img = splat.render(p, 32, 40)[..., 0].numpy()
    r = np.array([[math.cos(0.6), -math.sin(0.6)], [math.sin(0.6), math.cos(0.6)]])
    inv = np.linalg.inv(r @ np.diag([16.0, 2.25]) @ r.T)
    for row, col in ((15, 20), (17, 23), (10, 14), (20, 28)):
        d = np.array([col + 0.5 - 20.3, row + 0.5 - 15.7])
        assert img[row, col] == pytest.approx(0.56 * math.exp(-0.5 * d @ inv @ d), abs=1e-4)
    cov = splat.covariance(p["log_scale"], p["theta"])[0].numpy()
    np.testing.assert_allclose(cov, r @ np.diag([16.0, 2.25]) @ r.T, rtol=1e-5)


def test_integral_of_one_gaussian_is_two_pi_sx_sy_c_o():
    p = one(mu=(32.0, 32.0), s=(3.0, 5.0), theta=1.1)
    total = splat.render(p, 64, 64).sum().item()
    assert total == pytest.approx(2 * math.pi * 3 * 5 * 0.7 * 0.8, rel=1e-3)


def test_matrix_form_equals_the_direct_formula():
    g = torch.Generator().manual_seed(0)
    n = 50
    p = {"mu": torch.rand(n, 2, generator=g) * 48, "log_scale": torch.rand(n, 2, generator=g) * 3 - 1.2,
         "theta": torch.rand(n, generator=g) * 3, "color": torch.rand(n, 1, generator=g),
         "opacity_logit": torch.randn(n, generator=g)}
    grid = splat.pixel_grid(48, 48)
    np.testing.assert_allclose(splat.weights(p, grid).numpy(), splat.weights_direct(p, grid).numpy(), atol=1e-3)


def test_wavelet_energy_parseval_and_flat_image():
    import pywt

    rng = np.random.default_rng(0)
    img = rng.random((32, 32))
    e = splat.wavelet_energy(img, "haar", 2)
    approx = pywt.wavedec2(img, "haar", level=2)[0]
    assert e.sum() == pytest.approx((img ** 2).sum() - (approx ** 2).sum(), rel=1e-9)
    assert not splat.wavelet_complexity(np.full((16, 16), 0.3)).any()
    c = splat.wavelet_complexity(img)
    assert c.min() >= 0 and c.max() == 1.0


def test_complexity_sits_on_the_edge():
    img = np.zeros((16, 16))
    img[:, 9:] = 1.0                       # a vertical edge inside the 2x2 / 4x4 haar blocks at column 9
    c = splat.wavelet_complexity(img, "haar", 2)
    assert c[:, 8:10].min() > 0 and not c[:, :4].any() and not c[:, 12:].any()


def test_knn_density_by_hand():
    mu = torch.tensor([[0.0, 0.0], [1.0, 0.0], [3.0, 0.0]])
    d = splat.knn_density(mu, k=2).numpy()
    # point 0: neighbours at 1 and 3 -> mean of 1, 9 = 5; point 1: 1, 2 -> 2.5; point 2: 2, 3 -> 6.5
    np.testing.assert_allclose(d, [1 / 5, 1 / 2.5, 1 / 6.5], rtol=1e-6)
    with pytest.raises(ValueError, match="at least 2 primitives"):
        splat.knn_density(mu[:1])


def test_consistency_picks_follow_the_signs():
    freq = torch.tensor([0.9, 0.8, 0.1, 0.2, 0.9, 0.1])
    dens = torch.tensor([0.1, 0.2, 0.9, 0.8, 0.9, 0.1])     # 0, 1: complex and sparse; 2, 3: simple and dense
    g = torch.Generator().manual_seed(0)
    d, p = splat.consistency_picks(freq, dens, torch.full((6,), 0.5), 6, 6, g)
    assert set(d.tolist()) == {0, 1} and set(p.tolist()) == {2, 3}


def test_adaptive_threshold_ends():
    t = splat.adaptive_threshold(torch.tensor([0.0, 1.0, 5.0]))
    lo, hi = 0.00015, 0.0002
    assert t[0].item() == pytest.approx(hi)
    assert t[1].item() == pytest.approx(lo + (hi - lo) * (1 - 2 * (1 / (1 + math.exp(-6)) - 0.5)))
    assert t[2].item() == pytest.approx(t[1].item())           # clipped at 1


CFG = splat.FitConfig(n_target=24, init_fraction=0.25, steps=30, densify_from=3, densify_every=3, densify_until=15,
                      lr_mu=0.05, lr_scale=0.02, lr_theta=0.02, lr_color=0.02, lr_opacity=0.02, clone_max_scale=1.0,
                      min_opacity=0.005, cdc_densify_fraction=0.2, cdc_prune_fraction=0.2)


def tiny_image():
    img = np.zeros((12, 12), np.float32)
    img[3:9, 3:9] = 1.0
    img[::2, 9:] = 0.5
    return img


def fit(method="cdc", seed=0, complexity="wavelet", cfg=CFG, img=None) -> splat.Fitter:
    f = splat.Fitter(splat.FitJob(tiny_image() if img is None else img, method, seed, complexity), cfg)
    f.fit()
    return f


@pytest.mark.parametrize("method, complexity", [("adc", "wavelet"), ("cdc", "wavelet"), ("cdc", "error")])
def test_fit_ends_at_the_target_count_and_lowers_the_loss(method, complexity):
    f = splat.Fitter(splat.FitJob(tiny_image(), method, 0, complexity), CFG)
    losses = f.fit()
    assert f.n == 24 and losses.shape == (CFG.steps, 1) and losses[-1, 0] < losses[0, 0]
    if method == "cdc":
        assert sum(h["by_consistency"] for h in f.history[0]) > 0


def test_same_seed_same_start_and_same_fit():
    a, b = (splat.Fitter(splat.FitJob(tiny_image(), m, 3), CFG) for m in ("adc", "cdc"))
    for k in splat.ATTRS:
        assert torch.equal(a.params[k], b.params[k])
    b.fit()
    c = fit("cdc", seed=3)
    for k in splat.ATTRS:
        assert torch.equal(b.params[k], c.params[k])
    np.testing.assert_allclose(splat.render_export(b.export())[..., 0], b.render().detach().numpy()[0, ..., 0], atol=1e-6)


@bit_exact_batching
def test_a_batch_gives_each_fit_exactly_as_alone():
    """Fits in lockstep (a leading fit dimension: seeds, policies and maps mixed) end bit for bit
    where each ends alone: per-slice sums and per-slice draws (an odd image side and count, so the
    slices do not line up with the vector lanes)."""
    import dataclasses

    cfg = dataclasses.replace(CFG, n_target=37)
    img = np.random.default_rng(0).random((13, 13)).astype(np.float32)
    jobs = [splat.FitJob(img, m, s, c) for s in (0, 1)
            for m, c in (("adc", "wavelet"), ("cdc", "wavelet"), ("cdc", "shuffled"), ("cdc", "error"))]
    batch = splat.Fitter(jobs, cfg)
    losses = batch.fit()
    assert batch.n == 37 and losses.shape == (cfg.steps, len(jobs))
    for b, job in enumerate(jobs):
        alone = fit(job.method, job.seed, job.complexity, cfg, img)
        for k in splat.ATTRS:
            np.testing.assert_array_equal(batch.export(b)[k], alone.export()[k], err_msg=f"{job.method}/{job.complexity}/{k}")
        assert batch.history[b] == alone.history[0]
    # different seeds and maps make different fits
    assert not np.array_equal(batch.export(1)["mu"], batch.export(5)["mu"])
    assert not np.array_equal(batch.export(1)["mu"], batch.export(2)["mu"])


def test_the_error_map_and_adc_variants_prune_and_respawn():
    import dataclasses

    err = fit("cdc", complexity="error")
    assert sum(h["by_consistency"] for h in err.history[0]) > 0
    for rule in ("contribution", "opacity", "gradient_density"):
        f = fit("adc", cfg=dataclasses.replace(CFG, adc_rule=rule, adc_prune_fraction=0.2))
        assert f.n == 24 and sum(h["pruned"] for h in f.history[0]) >= 4, rule


def test_contribution_is_the_integral_over_two_pi():
    p = one(mu=(32.0, 32.0), s=(3.0, 5.0), theta=1.1)
    total = splat.render(p, 64, 64).sum().item()
    assert 2 * math.pi * splat.contribution(p).item() == pytest.approx(total, rel=1e-3)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="method must be 'adc' or 'cdc'"):
        splat.Fitter(splat.FitJob(tiny_image(), "mcmc", 0), CFG)
    with pytest.raises(ValueError, match="complexity must be one of"):
        splat.Fitter(splat.FitJob(tiny_image(), "cdc", 0, "sobel"), CFG)
    with pytest.raises(ValueError, match=r"h, w >= 4"):
        splat.Fitter(splat.FitJob(np.zeros((2, 2)), "adc", 0), CFG)
    with pytest.raises(ValueError, match="same shape"):
        splat.Fitter([splat.FitJob(tiny_image(), "adc", 0), splat.FitJob(np.zeros((8, 8)), "adc", 0)], CFG)
    with pytest.raises(ValueError, match="adc_rule must be one of"):
        import dataclasses

        splat.Fitter(splat.FitJob(tiny_image(), "adc", 0), dataclasses.replace(CFG, adc_rule="mcmc"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_fit_matches_the_cpu_fit():
    # every random draw is on the CPU generator, so the two runs make the same choices up to float error
    a = splat.Fitter(splat.FitJob(tiny_image(), "cdc", 1), CFG)
    b = splat.Fitter(splat.FitJob(tiny_image(), "cdc", 1), CFG, device="cuda")
    la, lb = a.fit(), b.fit()
    assert b.n == a.n == 24 and lb[-1, 0] == pytest.approx(la[-1, 0], rel=0.2, abs=1e-4)
