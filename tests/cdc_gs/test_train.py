"""cdc_gs train: the verdict seeds run in one process, in batches, and each seed's fits are the
ones it gets alone (the same fit seed per seed, image and count for every arm; the batch size sets
only the speed)."""
from __future__ import annotations

import numpy as np
import pytest

from stages.cdc_gs.params import PARAMS
from stages.cdc_gs.arms import ARMS, jobs
from stages.cdc_gs.train import fit_arms, fit_seed
from stages.common.runtime.params import load_study

from tests.helpers import bit_exact_batching


@pytest.fixture
def small(real_params):
    _, p = load_study("cdc_gs", PARAMS, real_params, profile="smoke")
    tr = p.train.model_copy(update={"steps": 20, "densify_from": 2, "densify_every": 3, "densify_until": 12,
                                    "counts": [16], "main_count": 16})
    rng = np.random.default_rng(0)
    return [rng.random((12, 12)).astype(np.float32) for _ in range(2)], p.prepare, tr


@bit_exact_batching
def test_a_seed_in_a_batch_of_seeds_is_the_seed_alone(small):
    imgs, prep, tr = small
    together = fit_arms(imgs, prep, tr.model_copy(update={"fit_batch": 8}), [0, 1])
    alone = fit_arms(imgs, prep, tr.model_copy(update={"fit_batch": 1}), [1])
    assert set(together) == {(s, i, arm, 16) for s in (0, 1) for i in (0, 1) for arm in ARMS}
    for key, r in alone.items():
        for k, v in r["export"].items():
            np.testing.assert_array_equal(together[key]["export"][k], v, err_msg=f"{key} {k}")
        np.testing.assert_array_equal(together[key]["render"], r["render"])
        np.testing.assert_array_equal(together[key]["losses"], r["losses"])
    # the seeds differ, and every arm of a seed, image and count starts from the same primitives
    assert not np.array_equal(together[(0, 0, "cdc", 16)]["render"], together[(1, 0, "cdc", 16)]["render"])
    assert len({fit_seed(s, i, 0) for s in (0, 1, 1000) for i in range(3)}) == 9


def test_jobs_cover_every_seed_image_arm_and_count(small):
    _, _, tr = small
    todo = jobs(["a", "b"], tr.model_copy(update={"counts": [8, 16]}), [0, 1, 2])
    assert len(todo) == len(set(todo)) == 3 * 2 * len(ARMS) * 2
