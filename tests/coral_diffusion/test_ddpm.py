"""coral_diffusion's DDPM: the forward process against its closed form, the SupCon loss by hand,
sampling's bad inputs and determinism, the stack (many models at once) against the single module,
and the pyfunc round trip (tiny sizes)."""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from stages.coral_diffusion import ddpm  # noqa: E402

TINY = dict(T=20, hidden=16, bottleneck=8, proj=8, label_init=0.02, class_in_encoder=True, steps=3, batch=16,
            lr=1e-3, temperature=0.1, time_scale=0.3)


def test_linear_betas_and_alpha_bar():
    b = ddpm.linear_betas(1000)
    assert b[0] == pytest.approx(1e-4) and b[-1] == pytest.approx(0.02)
    b100 = ddpm.linear_betas(100)
    assert b100[0] == pytest.approx(1e-3) and b100[-1] == pytest.approx(0.2)
    ab = ddpm.alpha_bars([0.1, 0.2, 0.5])
    assert ab.tolist() == pytest.approx([0.9, 0.72, 0.36])
    with pytest.raises(ValueError, match="T must be >= 2"):
        ddpm.linear_betas(1)


def test_q_sample_moments_match_closed_form():
    """x_t | x_0 ~ N(sqrt(abar_t) x_0, (1 - abar_t) I): empirical mean and variance over 20000 draws."""
    T = 100
    abar = torch.tensor(ddpm.alpha_bars(ddpm.linear_betas(T)), dtype=torch.float32)
    g = torch.Generator().manual_seed(0)
    x0 = torch.linspace(-1, 1, 64).expand(20_000, 64)
    for t in (0, 30, 99):
        tt = torch.full((20_000,), t, dtype=torch.long)
        xt = ddpm.q_sample(x0, tt, torch.randn(20_000, 64, generator=g), abar)
        a = float(abar[t])
        assert xt.mean(0).numpy() == pytest.approx(math.sqrt(a) * x0[0].numpy(), abs=0.03)
        assert xt.var(0).mean().item() == pytest.approx(1 - a, rel=0.03)


def test_supcon_by_hand():
    """Three unit vectors, labels (0, 0, 1), tau = 1: anchor 0's positive is 1, etc."""
    z = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    y = torch.tensor([0, 0, 1])
    # anchor 0: logits to 1, 2 = 0, -1 -> -log(e^0 / (e^0 + e^-1)); anchor 1: logits to 0, 2 = 0, 0 -> log 2
    # anchor 2 has no positive: skipped
    want = (-math.log(1 / (1 + math.exp(-1))) + math.log(2)) / 2
    assert ddpm.supcon_loss(z, y, 1.0).item() == pytest.approx(want, rel=1e-6)
    # weights per anchor give a weighted mean over the anchors with positives
    w = torch.tensor([3.0, 1.0, 100.0])
    want_w = (3 * -math.log(1 / (1 + math.exp(-1))) + math.log(2)) / 4
    assert ddpm.supcon_loss(z, y, 1.0, weights=w).item() == pytest.approx(want_w, rel=1e-6)
    assert ddpm.supcon_loss(z, torch.tensor([0, 1, 2]), 1.0).item() == 0.0
    with pytest.raises(ValueError, match="temperature must be > 0"):
        ddpm.supcon_loss(z, y, 0.0)


def _tiny_model(coral_weight: float = 0.5):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (40, 64)).astype(np.float32)
    y = np.arange(40) % 10
    return ddpm.train_ddpm(x, y, coral_weight=coral_weight, seed=0, **TINY)


def test_training_is_deterministic_and_coral_only_adds_a_term():
    m1, d1, c1 = _tiny_model()
    m2, d2, c2 = _tiny_model()
    assert d1 == d2 and c1 == c2 and len(c1) == TINY["steps"]
    m0, d0, c0 = _tiny_model(0.0)
    assert c0 == [] and d0[0] == d1[0]          # same weights, batch and noise at step 0


def test_sample_bad_inputs_and_determinism():
    model, _, _ = _tiny_model()
    with pytest.raises(ValueError, match="sample_steps must be in 1..T"):
        ddpm.sample(model, [0, 1], T=20, sample_steps=21, seed=0)
    with pytest.raises(ValueError, match="labels must be in 0..9"):
        ddpm.sample(model, [0, 10], T=20, sample_steps=5, seed=0)
    a = ddpm.sample(model, [3, 4, 5], T=20, sample_steps=5, seed=7)
    b = ddpm.sample(model, [3, 4, 5], T=20, sample_steps=5, seed=7)
    c = ddpm.sample(model, [3, 4, 5], T=20, sample_steps=20, seed=7)       # ancestral
    assert a.shape == (3, 64) and np.array_equal(a, b) and np.abs(c).max() <= 1.0


def test_pyfunc_round_trip(tmp_path):
    import pandas as pd

    pytest.importorskip("mlflow")
    import mlflow.pyfunc

    from stages.coral_diffusion.params import TrainStep

    model, _, _ = _tiny_model()
    p = TrainStep(**TINY, coral_weight=0.5)
    ddpm.save_mlflow(tmp_path / "m", model, ddpm.model_config(p, sample_steps=5), [4, 0, 7])
    loaded = mlflow.pyfunc.load_model(str(tmp_path / "m"))
    out = np.asarray(loaded.predict(pd.DataFrame({"label": [1, 2]}), params={"seed": 3}))
    want = (ddpm.sample(model, [1, 2], T=20, sample_steps=5, seed=3) + 1) * 8
    assert out.shape == (2, 64) and np.allclose(out, want, atol=1e-5)
    default = np.asarray(loaded.predict(pd.DataFrame({"label": [1, 2]})))       # the param's default: seed 0
    assert np.allclose(default, (ddpm.sample(model, [1, 2], T=20, sample_steps=5, seed=0) + 1) * 8, atol=1e-5)
    sig = loaded.metadata.signature
    assert sig.inputs.input_names() == ["label"] and sig.params.to_dict()[0]["default"] == 0
    with pytest.raises(Exception, match="missing inputs \\['label'\\]"):       # the signature's schema check
        loaded.predict(pd.DataFrame({"digit": [1]}))


def test_supcon_matches_pytorch_metric_learning():
    """The authors' SupConLoss (pytorch-metric-learning) on L2-normalised rows gives the same loss."""
    pml = pytest.importorskip("pytorch_metric_learning.losses")
    g = torch.Generator().manual_seed(0)
    for _ in range(3):
        z, y = torch.randn(64, 16, generator=g), torch.randint(0, 6, (64,), generator=g)
        want = pml.SupConLoss(temperature=0.1)(torch.nn.functional.normalize(z, dim=-1), y).item()
        assert ddpm.supcon_loss(z, y, 0.1).item() == pytest.approx(want, rel=1e-5)


def _jobs():
    from stages.coral_diffusion.arms import shuffled_labels

    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (40, 64)).astype(np.float32)
    y = np.arange(40) % 10
    return [{"x": x[:n], "y": y[:n], "seed": s, "con_y": c} for s in (3, 4) for n in (40, 30)
            for c in (None, y[:n], shuffled_labels(y[:n], s))]


def test_stack_round_trip_and_forward_match_the_module():
    """stack_states / unstack_state give the state dicts back exactly, and the stack's forward is
    the module's (to float rounding), bottleneck included."""
    states = []
    for s in (0, 1, 2):
        torch.manual_seed(s)
        states.append(ddpm.build_model(16, 8, 8, class_in_encoder=False).state_dict())
    P = ddpm.stack_states(states)
    assert all(torch.equal(ddpm.unstack_state(P, i)[k], states[i][k]) for i in range(3) for k in states[i])
    g = torch.Generator().manual_seed(0)
    x, t, y = torch.randn(3, 7, 64, generator=g), torch.randint(0, 20, (3, 7), generator=g), torch.randint(0, 10, (3, 7), generator=g)
    eps, z = ddpm.stacked_forward(P, x, t, y, False, with_bottleneck=True)
    for i in range(3):
        m = ddpm.build_model(16, 8, 8, class_in_encoder=False)
        m.load_state_dict(states[i])
        e1, z1 = m(x[i], t[i], y[i], with_bottleneck=True)
        assert torch.allclose(eps[i], e1, atol=1e-6) and torch.allclose(z[i], z1, atol=1e-6)
        assert torch.allclose(ddpm.stacked_head(P, z)[i], m.head(z1), atol=1e-6)
    # with the label in the encoder too, the bottleneck depends on the label; without, it does not
    _, z_a = ddpm.stacked_forward(P, x, t, torch.zeros_like(y), False, with_bottleneck=True)
    assert torch.equal(z_a, z)
    _, z_b = ddpm.stacked_forward(P, x, t, torch.zeros_like(y), True, with_bottleneck=True)
    assert not torch.equal(z_b, ddpm.stacked_forward(P, x, t, y, True, with_bottleneck=True)[1])


def test_a_model_in_the_stack_gets_what_it_gets_alone():
    """Bit for bit: each job trained in a stack of 12 (two seeds, two data sets, three arms) has the
    weights and losses it has alone, the jobs without the CORAL term included; the arms of one seed
    and data set start alike and see the same batches (equal first diffusion loss)."""
    jobs = _jobs()
    kw = dict(TINY, steps=4)
    P, dl, cl = ddpm.train_stacked(jobs, coral_weight=0.5, **kw)
    for i in (0, 4, 8, 11):
        A, dla, cla = ddpm.train_stacked([jobs[i]], coral_weight=0.5, **kw)
        assert all(torch.equal(P[k][i], A[k][0]) for k in P), i
        assert np.array_equal(dl[:, i], dla[:, 0]) and np.array_equal(cl[:, i], cla[:, 0], equal_nan=True)
    assert dl[0, 0] == dl[0, 1] == dl[0, 2] and dl[0, 0] != dl[0, 6]
    assert np.isnan(cl[:, 0]).all() and not np.isnan(cl[:, 1:3]).any()
    assert not np.array_equal(cl[:, 1], cl[:, 2])          # true and shuffled labels: different terms


def test_stacked_sampling_and_encoding_match_the_single_model():
    jobs = _jobs()[:3]
    P, _, _ = ddpm.train_stacked(jobs, coral_weight=0.5, **TINY)
    m = ddpm.build_model(16, 8, 8, class_in_encoder=True)
    m.load_state_dict(ddpm.unstack_state(P, 1))
    for steps in (20, 5):                                   # ancestral, DDIM
        g = ddpm.sample_stacked(P, [1, 2, 3, 9], [7, 7, 8], T=20, sample_steps=steps, class_in_encoder=True)
        assert np.allclose(g[1], ddpm.sample(m, [1, 2, 3, 9], T=20, sample_steps=steps, seed=7), atol=1e-5)
        assert not np.array_equal(g[1], g[2]) and np.abs(g).max() <= 1.0
        one_at_a_time = ddpm.sample_stacked(P, [1, 2, 3, 9], [7, 7, 8], T=20, sample_steps=steps,
                                            class_in_encoder=True, models_per_call=1)
        assert np.array_equal(one_at_a_time, g)             # groups change nothing
    x, y = jobs[0]["x"], jobs[0]["y"]
    f = ddpm.bottleneck_stacked(P, np.stack([x] * 3), np.stack([y] * 3), [0.1, 0.5], [5, 5, 5], T=20, class_in_encoder=True)
    assert f.shape == (3, 2, 40, 8)
    assert np.allclose(f[1], ddpm.bottleneck_features(m, x, y, [0.1, 0.5], T=20, seed=5), atol=1e-5)
    with pytest.raises(ValueError, match="sample_steps must be in 1..T"):
        ddpm.sample_stacked(P, [0], [1, 1, 1], T=20, sample_steps=0, class_in_encoder=True)


def test_supcon_over_leading_dimensions_is_each_batch_alone():
    g = torch.Generator().manual_seed(3)
    z, y = torch.randn(4, 16, 5, generator=g), torch.randint(0, 3, (4, 16), generator=g)
    y[2] = torch.arange(16)                                 # no positive at all: 0
    out = ddpm.supcon_loss(z, y, 0.2)
    assert out.shape == (4,) and out[2].item() == 0.0
    assert all(out[i].item() == pytest.approx(ddpm.supcon_loss(z[i], y[i], 0.2).item(), rel=1e-6) for i in range(4))


def test_shuffled_labels_keep_the_counts_and_lose_the_images_class():
    from stages.coral_diffusion.arms import shuffled_labels

    y = np.repeat(np.arange(10), [140, 100, 72, 52, 37, 27, 19, 14, 10, 7])
    a, b = shuffled_labels(y, 0), shuffled_labels(y, 1)
    assert np.array_equal(np.bincount(a), np.bincount(y)) and np.array_equal(a, shuffled_labels(y, 0))
    assert not np.array_equal(a, b)
    assert np.mean(a == y) < 0.3                            # about sum p_c^2 = 0.17 by chance
