"""Seeds as an axis (docs/VERDICTS.md, section 1) and what the claims read: a seed's figures depend
on that seed alone, the batched fits are the single fits, the baselines' selection is what it says,
and every claim reads each seed's figures."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from stages.mpo import experiment as ex
from stages.mpo import po


@pytest.fixture(scope="module")
def tiny():
    """The smoke profile cut further (20 steps, 4 episodes, population 2), with a low flip rate
    (0.2) as the default profile has, for the context figure of the noise check."""
    from stages.common.runtime.params import load_study
    from stages.mpo.params import PARAMS

    threads = torch.get_num_threads()
    torch.set_num_threads(1)      # as the stages (limit_threads): tiny stacked fits, one thread (20x faster)
    _, prm = load_study("mpo", PARAMS, profile="smoke")
    t = prm.train.model_copy(update={"steps": 20, "episodes": 4, "es_popsize": 2})
    yield prm.prepare.model_copy(update={"flips": [0.0, 0.2, 0.3]}), t
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def two_seeds(tiny):
    """Seeds 0 and 1 one after another in this process, as the train stage runs them."""
    p, t = tiny
    return {s: ex.claim_metrics(ex.seed_run(p, t, s)["results"], p.flips, p.target_flip) for s in (0, 1)}


def test_a_seed_gets_the_same_figures_alone_as_after_another(tiny, two_seeds):
    p, t = tiny
    alone = ex.claim_metrics(ex.seed_run(p, t, 1)["results"], p.flips, p.target_flip)
    assert alone == two_seeds[1]
    assert two_seeds[0]["scores"] != two_seeds[1]["scores"]       # and another seed draws other data


def test_batched_fits_are_the_single_fits(tiny):
    p, t = tiny
    ref = ex.build_reference(p, 3)
    data = ex.build_draws(p, ref, 3)
    thetas = [po.dpo(1.0), po.cdpo(0.3, 0.2), po.orpo(0.3),
              po.theta_from_vector(np.array([0.3, 0.7, -0.5, 0.4, 0.2, 0.1]))]
    keys = ["flip0.3/val0", "flip0.2/val0", "mixed/test0", "flip0.3/test0"]
    prefs = [ex.get_prefs(data, k) for k in keys]
    batch = po.train_po_batch(ref, prefs, thetas, p.hidden, 40, 3e-3)
    for th, pr, pb in zip(thetas, prefs, batch):
        single = po.train_po(ref, pr, th, p.hidden, 40, 3e-3)
        x = torch.from_numpy(pr.s)
        with torch.no_grad():
            np.testing.assert_allclose(torch.softmax(pb(x), 1).numpy(), torch.softmax(single(x), 1).numpy(),
                                       atol=1e-4)
    # and the fits moved away from the reference (the check above is not trivially true)
    r = po.make_policy(p.hidden)
    r.load_state_dict(ref)
    with torch.no_grad():
        x = torch.from_numpy(prefs[0].s)
        assert (torch.softmax(batch[0](x), 1) - torch.softmax(r(x), 1)).abs().max() > 1e-3


def test_batched_loss_is_the_single_loss():
    g = torch.Generator().manual_seed(0)
    logits, ref = torch.randn(3, 7, po.N_ACTIONS, generator=g), torch.randn(3, 7, po.N_ACTIONS, generator=g)
    ref_logp = torch.log_softmax(ref, -1)
    w = torch.randint(0, po.N_ACTIONS, (3, 7), generator=g)
    lo = (w + 1 + torch.randint(0, po.N_ACTIONS - 1, (3, 7), generator=g)) % po.N_ACTIONS
    thetas = [po.dpo(0.5), po.orpo(0.3), po.theta_from_vector(np.array([0.2, 0.5, -0.3, -0.4, 0.1, 0.2]))]
    th = {k: torch.tensor([x[k] for x in thetas]).view(3, 1) for k in po.FAMILY_KEYS}
    got = po.family_loss_batch(logits, ref_logp, w, lo, th)
    for i, x in enumerate(thetas):
        want = po.family_loss(logits[i], ref_logp[i], w[i], lo[i], x)
        assert float(got[i]) == pytest.approx(float(want), rel=1e-5, abs=1e-6)


def test_selection_takes_the_best_validation_mean():
    val = {"dpo_b0.1": [0.2, 0.4], "dpo_b1": [0.5, 0.1], "dpo_b0.3": [0.1, 0.3], "orpo_b1": [0.9, 0.9]}
    assert ex.select(val, "dpo_") == "dpo_b0.1"
    # the selected config is at least as good as the untuned DPO(beta=1) on validation, always
    rng = np.random.default_rng(0)
    for _ in range(50):
        v = {f"dpo_b{b:g}": list(rng.random(2)) for b in (0.1, 0.3, 1.0)}
        assert np.mean(v[ex.select(v, "dpo_")]) >= np.mean(v["dpo_b1"])


def test_corner_search_stays_on_the_corner(tiny):
    p, t = tiny
    ref = ex.build_reference(p, 2)
    data = ex.build_draws(p, ref, 2)
    sc = ex.Scorer(p, t, ref, data, 2, ex.score_bounds(2, 8))
    theta, hist = ex.run_search(sc, "flip0.3", t, 2, coords=ex.CORNER_COORDS)
    assert theta["c"] == 0.0 and theta["d"] == 0.0 and theta["w_ref"] == 1.0
    assert len(hist) == t.es_generations and sc.fits == t.es_popsize * t.es_generations * p.val_draws


def test_claims_read_every_seed(two_seeds):
    from stages.common.seeds import per_seed_metrics
    from tests.helpers import assert_claims_read_every_seed

    assert_claims_read_every_seed("mpo", per_seed_metrics(two_seeds), [0, 1])
