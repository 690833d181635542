"""hephaestus_qosd Morph and Refine: the mixture fits a toy target, the MLflow model round-trips, and
Refine returns a feasible perturbation no costlier than Forge's."""
from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pytest

from stages.hephaestus_qosd import cvae, qosd


@pytest.fixture(autouse=True)
def one_torch_thread():
    """One torch thread, as the stages run (stages.common.device.limit_threads); restored after."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)

P = NS(n_components=2, latent=2, hidden=16, sigma_x=0.05, lr=0.01, steps=150, batch=64)


def toy_rows(n=400, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.random((n, cvae.N_FEATURES)).astype(np.float32)
    return (c[:, 10] * 0.5).astype(np.float32), c          # target: half of the 'Forge' column


def test_mixture_learns_a_toy_map_and_round_trips(tmp_path):
    x, c = toy_rows()
    model, losses = cvae.train_model(x, c, P, seed=0, progress=False)
    assert np.mean(losses[-20:]) < 0.5 * losses[0]
    pred = cvae.decode_mean(model, c)
    assert np.mean(np.abs(pred - x)) < 0.1
    from mlflow.utils import environment

    check = environment.warn_dependency_requirement_mismatches
    cvae.save_mlflow(tmp_path / "m", model, P, c[:3])
    assert environment.warn_dependency_requirement_mismatches is check    # the skipped scan is put back
    again = cvae.load_model_dir(tmp_path / "m")
    np.testing.assert_allclose(cvae.decode_mean(again, c), pred, atol=1e-6)


def test_refine_feasible_and_no_worse_than_forge():
    rng = np.random.default_rng(2)
    x, c = toy_rows()
    model, _ = cvae.train_model(x, c, P, seed=0, progress=False)
    fp = NS(step_frac=0.05, credit=0.25)
    rp = NS(iterations=2, batch=3, sigma0=1.0, sigma_decay=0.9, lr=0.5)
    for kind in ("quadratic", "fixed_charge"):
        inst = qosd.make_instance("r", "erdos_renyi", 12, 1.5, rng, kind)
        fd = qosd.forge(inst)
        out = cvae.refine(inst, model, cvae.edge_features(inst, fd), fd, rp, fp, seed=0)
        assert qosd.is_feasible(inst, out["delta"]) and out["cost"] <= inst.cost(fd) + 1e-9
        assert qosd.is_feasible(inst, out["first_sample"])
        assert out["first_sample_cost"] == pytest.approx(inst.cost(out["first_sample"]))
        assert len(out["curve"]) == 2 and out["curve"][-1] == out["cost"] and out["curve"][0] >= out["curve"][1]
        again = cvae.refine(inst, model, cvae.edge_features(inst, fd), fd, rp, fp, seed=0)
        assert again["cost"] == out["cost"]                     # seeded


def test_training_starts_from_the_initial_model_and_blind_is_it(tmp_path):
    """The blind arm is the seed's mixture before training: train_model starts from
    initial_model(seed) (with a learning rate of 1e-30, below the float32 resolution of every
    weight, the weights stay there), and untrained_like rebuilds it from a saved model's sizes."""
    import torch

    x, c = toy_rows(100)
    still, _ = cvae.train_model(x, c, NS(**{**vars(P), "lr": 1e-30, "steps": 2}), seed=7, progress=False)
    start = cvae.initial_model(P, 7)
    for k, v in start.state_dict().items():
        assert torch.equal(v, still.state_dict()[k]), k
    trained, _ = cvae.train_model(x, c, NS(**{**vars(P), "steps": 5}), seed=7, progress=False)
    cvae.save_mlflow(tmp_path / "m", trained, P, c[:3])
    blind = cvae.untrained_like(tmp_path / "m", 7)
    assert all(torch.equal(v, start.state_dict()[k]) for k, v in blind.state_dict().items())
    assert not all(torch.equal(v, trained.state_dict()[k]) for k, v in blind.state_dict().items())
