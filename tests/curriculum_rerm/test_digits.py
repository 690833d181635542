"""The batched MLP against torch.nn per model, the biased stage objective, and the digit tasks."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.curriculum_rerm.digits import (ARMS, DigitTasks, arm_steps, error_rate, forward, init_params, load_images,
                                           make_digit_tasks, total_steps, train_arms, train_stage)


@pytest.fixture(scope="module")
def digits():
    return load_images()


def test_batched_forward_matches_torch_nn_per_model():
    gen = torch.Generator().manual_seed(0)
    params = init_params(3, [64, 16, 10], gen)
    X = torch.randn(3, 7, 64, generator=gen)
    out = forward(params, X)
    for b in range(3):
        net = torch.nn.Sequential(torch.nn.Linear(64, 16), torch.nn.ReLU(), torch.nn.Linear(16, 10))
        with torch.no_grad():
            net[0].weight.copy_(params[0][b].T)
            net[0].bias.copy_(params[1][b, 0])
            net[2].weight.copy_(params[2][b].T)
            net[2].bias.copy_(params[3][b, 0])
            torch.testing.assert_close(out[b], net(X[b]))


def test_models_train_independently():
    """Model 0's result does not depend on what model 1 sees (the summed loss separates)."""
    gen = torch.Generator().manual_seed(1)
    params = init_params(2, [64, 8, 10], gen)
    anchor = [torch.zeros_like(p) for p in params]
    X = torch.randn(2, 20, 64, generator=gen)
    y = torch.randint(0, 10, (2, 20), generator=gen)
    a = train_stage(params, anchor, X, y, lam=1e-3, lr=0.01, steps=20)
    X2, y2 = X.clone(), y.clone()
    X2[1], y2[1] = torch.randn(20, 64, generator=gen), torch.randint(0, 10, (20,), generator=gen)
    b = train_stage(params, anchor, X2, y2, lam=1e-3, lr=0.01, steps=20)
    for pa, pb in zip(a, b):
        torch.testing.assert_close(pa[0], pb[0])


def test_huge_lambda_keeps_the_anchor():
    gen = torch.Generator().manual_seed(2)
    params = init_params(2, [64, 8, 10], gen)
    anchor = [p + 0.1 for p in params]
    X, y = torch.randn(2, 30, 64, generator=gen), torch.randint(0, 10, (2, 30), generator=gen)
    out = train_stage(params, anchor, X, y, lam=1e4, lr=0.01, steps=200)
    for p, a in zip(out, anchor):
        assert (p - a).abs().max() < 0.02


def test_training_fits_the_clean_stage(digits):
    images, labels = digits
    tk = make_digit_tasks(images, labels, np.random.default_rng(0), reps=2, per_stage=100, n_test=100,
                          noise=0.4, levels=[0.0, 1.0])
    X, y = tk.stages["good"][0]
    params = init_params(2, [64, 32, 10], torch.Generator().manual_seed(0))
    out = train_stage(params, [torch.zeros_like(p) for p in params], torch.from_numpy(X), torch.from_numpy(y),
                      lam=1e-3, lr=0.01, steps=150)
    assert error_rate(out, torch.from_numpy(X), torch.from_numpy(y)).max() < 0.05


def test_digit_tasks_pair_the_arms(digits):
    images, labels = digits
    tk = make_digit_tasks(images, labels, np.random.default_rng(1), reps=3, per_stage=50, n_test=80,
                          noise=0.4, levels=[0.0, 0.5, 1.0])
    good, viol = tk.stages["good"], tk.stages["violating"]
    assert len(good) == len(viol) == 3 and len(tk.stages["direct"]) == len(tk.stages["direct_total"]) == 1
    assert tk.stages["direct_long"][0] is tk.stages["direct"][0]
    # direct's data are the curricula's last stage; the violating curriculum's last stage is the true task
    for a, b in zip(tk.stages["direct"][0], good[-1]):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(viol[-1][1], good[-1][1])
    np.testing.assert_array_equal(viol[0][0], good[0][0])
    assert (viol[0][1] != good[0][1]).mean() > 0.5                     # permuted labels early on
    # stage 1 is clean: its images are exact digits; the total-data arm is 3 x 50 noisy images
    clean = {img.tobytes() for img in images}
    assert all(img.tobytes() in clean for img in good[0][0][0])
    assert tk.stages["direct_total"][0][0].shape == (3, 150, 64)
    np.testing.assert_array_equal(tk.stages["direct_total"][0][0][:, 100:], good[-1][0])
    assert tk.X_test.shape == (3, 80, 64)
    # reversed: the good curriculum's early stages in reverse order, the target stage last
    rev = tk.stages["reversed"]
    assert rev[0] is good[1] and rev[1] is good[0] and rev[2] is good[2]
    # pooled: the good curriculum's three stages (images at their own noise levels) in one stage
    (px, py), = tk.stages["pooled"]
    assert px.shape == (3, 150, 64)
    np.testing.assert_array_equal(px[:, :50], good[0][0])
    np.testing.assert_array_equal(py[:, 50:100], good[1][1])
    # direct_total holds the same images as pooled, all at full noise: equal where the noise is full
    np.testing.assert_array_equal(tk.stages["direct_total"][0][1], py)
    assert not np.array_equal(tk.stages["direct_total"][0][0][:, :50], px[:, :50])


def test_too_many_images_refused(digits):
    images, labels = digits
    with pytest.raises(ValueError, match="exceed the 1797 digits"):
        make_digit_tasks(images, labels, np.random.default_rng(0), 1, 600, 100, 0.4, [0.0, 0.5, 1.0])


def test_train_arms_is_deterministic(digits):
    images, labels = digits
    tk = make_digit_tasks(images, labels, np.random.default_rng(2), reps=2, per_stage=30, n_test=60,
                          noise=0.4, levels=[0.0, 1.0])
    init = init_params(2, [64, 16, 10], torch.Generator().manual_seed(5))
    a = train_arms(tk, init, 1e-3, 0.01, 10)
    b = train_arms(tk, init, 1e-3, 0.01, 10)
    assert set(a) == set(ARMS)
    for k in ARMS:
        np.testing.assert_array_equal(a[k], b[k])


def test_steps_per_arm_and_progress_ticks(digits):
    images, labels = digits
    tk = make_digit_tasks(images, labels, np.random.default_rng(3), reps=1, per_stage=20, n_test=50,
                          noise=0.4, levels=[0.0, 0.5, 1.0])
    assert arm_steps("direct_long", 30, 3) == 90 and arm_steps("pooled", 30, 3) == 30
    # 3 curricula x 3 stages x 30, direct 30, direct_long 90, direct_total 30, pooled 30
    assert total_steps(tk, 30) == 9 * 30 + 30 + 90 + 30 + 30
    ticks = []
    init = init_params(1, [64, 8, 10], torch.Generator().manual_seed(0))
    train_arms(tk, init, 1e-3, 0.01, 30, arms=("good", "direct_long"), tick=ticks.append)
    assert sum(ticks) == 3 * 30 + 90 and max(ticks) == 25


def test_digit_tasks_of_several_seeds_concatenate_in_order(digits):
    images, labels = digits
    a = make_digit_tasks(images, labels, np.random.default_rng(4), 1, 20, 50, 0.4, [0.0, 1.0])
    b = make_digit_tasks(images, labels, np.random.default_rng(5), 2, 20, 50, 0.4, [0.0, 1.0])
    c = DigitTasks.concat([a, b])
    assert c.X_test.shape == (3, 50, 64)
    for arm in ARMS:
        for (x, y), (xb, yb) in zip(c.stages[arm], b.stages[arm]):
            np.testing.assert_array_equal(x[1:], xb)
            np.testing.assert_array_equal(y[1:], yb)
