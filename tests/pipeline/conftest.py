"""Fresh copies of the repository for the pipeline and machinery tiers: ``repo_copy`` (nothing
built, smoke profile) and ``mini_copy`` (the same, with dvc.yaml cut down to zipf_bigram and the
ledger: the small target of the tests of the flow, the stack, Dask and failure safety).
The built copies (``smoke_built``, ``built_copy``) are in tests/conftest.py."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.builds import REPO, set_line, sh, stage_names, stale, tree_digest  # noqa: F401 - imported from here

MINI = ["zipf_bigram"]


@pytest.fixture
def repo_copy(tmp_path) -> Path:
    """The tracked (and untracked, not ignored) files of this checkout, as a fresh git repo on the
    smoke profile, with no DVC cache, no outputs and no MLflow store."""
    from stages.common.runtime.checkout import copy_checkout

    return copy_checkout(REPO, tmp_path / "repo", profile="smoke")


@pytest.fixture
def mini_copy(tmp_path) -> Path:
    """``repo_copy`` with only zipf_bigram's stages and the ledger in dvc.yaml."""
    from stages.common.runtime.checkout import copy_checkout

    return copy_checkout(REPO, tmp_path / "repo", profile="smoke", only=MINI)
