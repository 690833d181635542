"""noisy_grpo maths against known answers: the Gaussian conjugate posterior, the Bayesian advantage
(a flat prior gives GRPO's advantage; a noisier rollout gets less), the noise schedule, the data's
OOD disjointness, batched sampling; bad inputs by their message."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.common.pg import group_advantages
from stages.noisy_grpo import core


def test_gaussian_posterior_mean_known_answer():
    # prior N(0, 1), one observation 2 with variance 1: posterior mean 1 (precision-weighted)
    assert float(core.gaussian_posterior_mean(0.0, 1.0, 2.0, 1.0)) == pytest.approx(1.0)
    # prior N(1, 3), observation 5 with variance 1: (1/3 + 5) / (1/3 + 1) = 4
    assert float(core.gaussian_posterior_mean(1.0, 3.0, 5.0, 1.0)) == pytest.approx(4.0)
    # scipy-free check against the closed form on random values
    rng = np.random.default_rng(0)
    m0, v0, x, v = rng.normal(size=4), rng.uniform(0.1, 2, 4), rng.normal(size=4), rng.uniform(0.1, 2, 4)
    want = (m0 / v0 + x / v) / (1 / v0 + 1 / v)
    np.testing.assert_allclose(core.gaussian_posterior_mean(m0, v0, x, v).numpy(), want, rtol=1e-5)


def test_bayesian_advantage_flat_prior_is_grpo_and_noise_is_penalised():
    g = torch.arange(3).repeat_interleave(4)
    r = torch.tensor([1, 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1], dtype=torch.float32)
    flat = core.bayesian_advantages(r, torch.zeros(12), g, 0.6, 1.0, 0.25)
    torch.testing.assert_close(flat, group_advantages(r, g), atol=1e-5, rtol=0)
    # two right answers in one group, one seen clean and one at the largest noise: the clean one wins
    adv = core.bayesian_advantages(torch.tensor([1.0, 1.0, 0.0, 0.0]), torch.tensor([0.0, 0.6, 0.0, 0.0]),
                                   torch.zeros(4, dtype=torch.long), 0.6, 1.0, 0.25)
    assert adv[0] > adv[1] > 0 > adv[2]


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="prior_var and obs_var must be > 0"):
        core.gaussian_posterior_mean(0.0, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="sigma_ref must be > 0"):
        core.bayesian_advantages(torch.ones(2), torch.zeros(2), torch.zeros(2), 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="noise levels must be >= 0"):
        core.bayesian_advantages(torch.ones(2), -torch.ones(2), torch.zeros(2), 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="cannot hold"):
        core.make_images(2, 2, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="n_steps >= 1"):
        core.noise_schedule(0, 0, 0.6, 0.0)


def test_noise_schedule_endpoints():
    assert core.noise_schedule(0, 11, 0.6, 0.0) == pytest.approx(0.6)
    assert core.noise_schedule(5, 11, 0.6, 0.0) == pytest.approx(0.3)
    assert core.noise_schedule(10, 11, 0.6, 0.0) == pytest.approx(0.0)


def test_data_counts_chains_and_ood_disjoint():
    rng = np.random.default_rng(1)
    img, cnt, q = core.make_images(50, 6, 3, rng)
    assert np.isin(img, (0.0, 1.0)).all()
    np.testing.assert_array_equal(img.sum(axis=(2, 3)), cnt)          # one pixel per object
    chain = core.noisy_chains(cnt, q, 1.0, 3, rng)
    right = core.true_chain(cnt, q)
    assert ((chain != right).sum(axis=1) >= 1).all()                 # every chain has a misread
    np.testing.assert_array_equal(chain[:, 3], chain[np.arange(50), q])   # the answer follows the chain
    ood, _, _ = core.make_images(50, 6, 3, rng, ood=True)
    assert not np.isin(ood, (0.0, 1.0)).all(axis=(1, 2, 3)).any()


def test_batched_sampling_is_seeded_and_scores_its_chains():
    torch.manual_seed(0)
    pol = core.Policy(4, 3, d_model=16)
    img, cnt, q = (torch.as_tensor(a) for a in core.make_images(8, 4, 2, np.random.default_rng(0)))
    a = pol.sample(img, q, torch.Generator().manual_seed(3))
    b = pol.sample(img, q, torch.Generator().manual_seed(3))
    assert a.shape == (8, core.CHAIN) and torch.equal(a, b) and int(a.max()) < 3
    lp = pol.chain_logp(img, q, a)
    assert lp.shape == (8, core.CHAIN) and (lp <= 0).all()
    # causal: the log-probability of the first token does not depend on the later ones
    c = a.clone()
    c[:, 1:] = (c[:, 1:] + 1) % 3
    torch.testing.assert_close(pol.chain_logp(img, q, c)[:, 0], lp[:, 0])


def test_rl_step_runs_for_every_method():
    torch.manual_seed(0)
    img, cnt, q = (torch.as_tensor(a) for a in core.make_images(16, 4, 2, np.random.default_rng(0)))
    pol = core.Policy(4, 3, d_model=16)
    for m in core.METHODS:
        curve = core.rl(pol, pol, img, q, cnt, m, 2, 2, 4, 1e-3, 0.2, 0.02, 1, 0.6, 0.0, 1.0, 0.25,
                        torch.Generator().manual_seed(0))
        assert len(curve) == 2 and all(0 <= c <= 1 for c in curve)


def test_mlflow_policy_carries_its_signature_and_example_and_answers_as_the_policy(tmp_path):
    """The pyfunc (stages/noisy_grpo/pyfunc.py) saved with core.policy_frame rows as its example:
    MLflow infers the signature, and the loaded model gives the policy's greedy chains for float64
    and float32 pixel columns alike."""
    import json

    import mlflow.pyfunc
    from mlflow.models import Model

    from stages.common.mlmodel import save_pyfunc

    torch.manual_seed(0)
    pol = core.Policy(4, 3, d_model=16).eval()
    torch.save(pol.state_dict(), tmp_path / "weights.pt")
    (tmp_path / "config.json").write_text(json.dumps({"grid": 4, "vocab": 3, "d_model": 16}))
    img, _, q = core.make_images(5, 4, 2, np.random.default_rng(0))
    save_pyfunc(tmp_path / "m", "stages/noisy_grpo/pyfunc.py", {"weights": tmp_path / "weights.pt",
                                                                "config": tmp_path / "config.json"},
                input_example=core.policy_frame(img[:2], q[:2]))
    meta = Model.load(str(tmp_path / "m"))
    assert meta.signature.inputs.input_names()[:2] == ["q", "p0"] and meta.signature.outputs is not None
    want = pol.sample(torch.as_tensor(img), torch.as_tensor(q), torch.Generator().manual_seed(0), greedy=True)
    loaded = mlflow.pyfunc.load_model(str(tmp_path / "m"))
    frame = core.policy_frame(img, q)
    assert loaded.predict(frame) == want.tolist()
    assert loaded.predict(frame.astype({c: "float32" for c in frame.columns[1:]})) == want.tolist()
