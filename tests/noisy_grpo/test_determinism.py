"""noisy_grpo end to end on the smoke profile, in the session's smoke build: its stages run once
more give the same outputs, and the figures the claims read are there."""
from __future__ import annotations

import pytest

from tests.helpers import assert_claims_read_every_seed

# an MLflow model's MLmodel records when it was saved and a random id: not a result
VOLATILE = ("data/noisy_grpo/model/MLmodel",)


@pytest.mark.study
def test_smoke_chain_reruns_to_the_same_outputs(rerun_study):
    out = rerun_study("noisy_grpo", volatile=VOLATILE)
    m = out["metrics"]
    assert m["seeds"] == [0, 1]                       # the smoke profile's verdict seeds
    assert_claims_read_every_seed("noisy_grpo", m, [0, 1])
    for s in ("0", "1"):
        for k in ("noisy_grpo_ood_gain", "id_loss", "bayes_only_ood_gain", "noisy_over_noise_only_ood"):
            assert -1 <= m["per_seed"][s][k] <= 1
    assert (out["root"] / "reports/noisy_grpo/accuracy.png").stat().st_size > 5_000
