"""gara_sam's scenes and corruptions: masks match the drawn shapes, corruptions are seeded and bounded,
bad inputs fail by their message."""
from __future__ import annotations

import numpy as np
import pytest

from stages.gara_sam.scenes import CONDITIONS, corrupt, make_scenes


def test_scenes_are_seeded_and_masks_cover_the_shapes():
    a = make_scenes(6, 32, np.random.default_rng(3))
    b = make_scenes(6, 32, np.random.default_rng(3))
    np.testing.assert_array_equal(a[0], b[0])
    imgs, masks = a
    assert imgs.shape == (6, 3, 32, 32) and masks.shape == (6, 1, 32, 32)
    assert 0 <= imgs.min() and imgs.max() <= 1
    assert (masks.reshape(6, -1).sum(1) > 0).all()
    im, m = make_scenes(1, 32, np.random.default_rng(1), shapes=("ellipse",))
    assert 4 <= m.sum() <= 32 * 32


def test_corruptions_are_bounded_seeded_and_clean_is_identity():
    im = make_scenes(1, 32, np.random.default_rng(0))[0][0]
    np.testing.assert_array_equal(corrupt(im, "clean", 0.7, np.random.default_rng(0)), im)
    for kind in CONDITIONS[1:]:
        x = corrupt(im, kind, 1.0, np.random.default_rng(5))
        y = corrupt(im, kind, 1.0, np.random.default_rng(5))
        np.testing.assert_array_equal(x, y)
        assert x.shape == im.shape and 0 <= x.min() and x.max() <= 1
        assert np.abs(x - im).mean() > 0.01, kind          # every corruption changes the image


def test_bad_inputs_fail_by_their_message():
    im = np.zeros((3, 8, 8), np.float32)
    with pytest.raises(ValueError, match="unknown corruption 'snow'"):
        corrupt(im, "snow", 0.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"severity must be in \[0, 1\]"):
        corrupt(im, "fog", 1.5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="shapes must be a non-empty subset"):
        make_scenes(2, 16, np.random.default_rng(0), shapes=("star",))
    with pytest.raises(ValueError, match="make_scenes needs n >= 1"):
        make_scenes(0, 16, np.random.default_rng(0))
