"""Fixtures of the repo_safety tests."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest


REPO = Path(__file__).resolve().parents[2]


def small_params() -> SimpleNamespace:
    """Generator params of the default profile's shape on a small instance (fast; a namespace, so a
    test may change a field)."""
    return SimpleNamespace(n_prompts=60, n_responses=6, kl_beta=0.1, budget=0.0, correlation_target=0.4,
                           correlation_range=[0.2, 0.6], harmful_cost_mean=1.0, harmful_cost_scale=1.0,
                           benign_cost_mean=-0.1, benign_cost_scale=0.1, benign_prompt_scale=0.05,
                           safe_level=0.1, max_tries=200)


@pytest.fixture
def gen_params() -> SimpleNamespace:
    return small_params()
