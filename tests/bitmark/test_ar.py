"""bitmark's bitwise AR model: autoregressive masks, the watermark's effect at sampling, seeded
determinism, and the pyfunc model's two uses."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")      # imported before the fixture caps its threads

from stages.bitmark import ar, wm  # noqa: E402


def test_bit_i_depends_only_on_earlier_bits():
    m = ar.build(16, 2, 0, n_bits=12)
    x = torch.rand(1, 12, requires_grad=True)
    y = ar.one_hot([3])
    for i in range(12):
        (g,) = torch.autograd.grad(m(x, y)[0, i], x)
        assert (g[0, i:] == 0).all(), i                  # no path from bit i or later to logit i


def zero_model():
    m = ar.build(4, 1, 0)
    with torch.no_grad():
        for prm in m.parameters():
            prm.zero_()
    return m


def test_watermark_moves_the_green_share_to_sigmoid_delta():
    """A model with every logit 0: unwatermarked bits are fair coins; with delta the green bit has
    probability sigmoid(delta), so the green share is sigmoid(delta)."""
    m, table = zero_model(), wm.green_table(5, 2)
    labels = np.arange(300) % 10
    plain = wm.green_counts(ar.sample(m, labels, 1), table, 2) / 256
    marked = wm.green_counts(ar.sample(m, labels, 1, table, 2, 2.0), table, 2) / 256
    assert plain.mean() == pytest.approx(0.5, abs=0.01)
    assert marked.mean() == pytest.approx(1 / (1 + np.exp(-2.0)), abs=0.01)


def test_sampling_and_training_are_seeded():
    m = ar.build(8, 1, 0)
    labels = np.arange(20) % 10
    assert (ar.sample(m, labels, 3) == ar.sample(m, labels, 3)).all()
    assert (ar.sample(m, labels, 3) != ar.sample(m, labels, 4)).any()
    bits = np.random.default_rng(0).integers(0, 2, size=(40, 256))
    runs = []
    for _ in range(2):
        mm = ar.build(8, 1, 0)
        runs.append(ar.train(mm, bits, labels.repeat(2), 5, 8, 1e-2, 0.0, 0, progress=False))
    assert runs[0] == runs[1]
    with pytest.raises(ValueError, match="needs the green table"):
        ar.sample(m, labels, 0, None, 2, 1.0)


def test_pyfunc_samples_and_scores(tmp_path):
    import pandas as pd
    from mlflow.pyfunc import load_model

    from stages.bitmark.train import save_model

    from pathlib import Path

    m = ar.build(8, 1, 0)
    code = Path(ar.__file__).with_name("pyfunc.py")
    save_model(tmp_path / "model", m, {"hidden": 8, "layers": 1, "key": 7, "ngram": 2, "seed": 0}, code, [5, 0, 9])
    from mlflow.models import Model

    meta = Model.load(str(tmp_path / "model"))      # the signature: both modes' columns optional, the params
    assert {c.name: c.required for c in meta.signature.inputs.inputs if c.name in ("label", "b0")} == {
        "label": False, "b0": False}
    assert {p.name: p.default for p in meta.signature.params.params} == {"delta": 0.0, "seed": 0}
    assert meta.load_input_example(str(tmp_path / "model"))["label"].tolist() == [5, 0, 9]
    model = load_model(str(tmp_path / "model"))
    out = model.predict(pd.DataFrame({"label": [0, 1, 2, 3]}), params={"delta": 2.0, "seed": 1})
    assert list(out.columns[:2]) == ["p0", "p1"] and len(out) == 4 and out["z"].mean() > 1
    bits = wm.encode(out[[f"p{i}" for i in range(64)]].to_numpy())
    z = model.predict(pd.DataFrame(bits, columns=[f"b{i}" for i in range(256)]))["z"].to_numpy()
    assert np.allclose(z, out["z"].to_numpy())
    with pytest.raises(ValueError, match="needs a column `label`"):
        model.predict(pd.DataFrame({"x": [1]}))


def test_adam_matches_torch_bit_for_bit_on_the_made():
    """The shared Adam (stages.common.optim) on this study's masked model, as the train stage runs it."""
    from stages.common.optim import Adam

    params = {}
    for name in ("ours", "torch"):
        m = ar.build(8, 1, 0, n_bits=16)
        opt = Adam(m.parameters(), lr=1e-2, weight_decay=1e-3) if name == "ours" else \
            torch.optim.Adam(m.parameters(), lr=1e-2, weight_decay=1e-3)
        g = torch.Generator().manual_seed(0)
        for _ in range(20):
            x = (torch.rand(32, 16, generator=g) < 0.5).float()
            loss = torch.nn.functional.binary_cross_entropy_with_logits(m(x, ar.one_hot(np.arange(32) % 10)), x)
            opt.zero_grad()
            loss.backward()
            opt.step()
        params[name] = [p.detach().clone() for p in m.parameters()]
    assert all(torch.equal(a, b) for a, b in zip(params["ours"], params["torch"]))


def test_token_sampling_matches_the_bit_model_and_the_token_watermark():
    """With every logit 0 the 16 levels are equally likely: token-level KGW's green share is
    e^delta / (1 + e^delta) (half the levels green), and without the bias it is 1/2."""
    m, table = zero_model(), wm.token_green_table(3)
    labels = np.arange(200) % 10
    plain = ar.sample_tokens(m, labels, 0, table, 0.0)
    marked = ar.sample_tokens(m, labels, 0, table, 2.0)
    assert plain.shape == (200, 64) and plain.min() >= 0 and plain.max() <= 15
    share = lambda px: (wm.token_z_scores(px, table) * np.sqrt(64 * 0.25) + 32).mean() / 64
    assert share(plain) == pytest.approx(0.5, abs=0.01)
    assert share(marked) == pytest.approx(np.exp(2) / (1 + np.exp(2)), abs=0.01)


def test_token_sampling_follows_a_trained_models_bits():
    """A MADE whose every bit is certain (a large bias on the first pixel's bits): the token sampler
    reproduces the level those bits spell."""
    m = zero_model()
    with torch.no_grad():
        m.out.bias[:4] = torch.tensor([20.0, -20.0, 20.0, 20.0])       # pixel 0 = 1011 = 11
    px = ar.sample_tokens(m, np.zeros(50, int), 0, wm.token_green_table(1), 0.0)
    assert (px[:, 0] == 11).all()
