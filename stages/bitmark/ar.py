"""The bitwise autoregressive model: a class-conditional MADE (masked MLP) over the 256 bits.

Bit i's logit depends on bits 0..i-1 (masked weights, natural order) and on the digit class (a
one-hot, unmasked). One forward pass gives every conditional (training); sampling runs 256 passes,
one bit at a time, with the watermark's bias added to each bit's logit (``wm.bias_logits``).
"""
from __future__ import annotations

import numpy as np

from .wm import N_BITS

N_CLASSES = 10


def build(hidden: int, layers: int, seed: int, n_bits: int = N_BITS):
    """A MADE with ``layers`` hidden layers of ``hidden`` units, a masked linear skip from the
    inputs, and the class one-hot feeding every layer. Weights seeded by ``seed``."""
    import torch
    from torch import nn

    if hidden < 2 or layers < 1:
        raise ValueError(f"ar.build: hidden must be >= 2 and layers >= 1, got {hidden}, {layers}")

    class MaskedLinear(nn.Linear):
        def __init__(self, n_in, n_out, mask):
            super().__init__(n_in, n_out)
            self.register_buffer("mask", torch.as_tensor(mask, dtype=torch.float32))

        def forward(self, x):
            return nn.functional.linear(x, self.weight * self.mask, self.bias)

    class Made(nn.Module):
        def __init__(self):
            super().__init__()
            g = np.random.default_rng([seed, 7])
            d_in = np.arange(1, n_bits + 1)                       # input degrees 1..D
            degs = [d_in]
            for _ in range(layers):                               # hidden degrees 1..D-1, spread evenly
                degs.append(np.sort(g.integers(1, n_bits, size=hidden)) if n_bits > 1 else np.ones(hidden, int))
            self.hidden = nn.ModuleList()
            self.cond = nn.ModuleList()
            for a, b in zip(degs[:-1], degs[1:]):
                self.hidden.append(MaskedLinear(len(a), len(b), (b[:, None] >= a[None, :])))
                self.cond.append(nn.Linear(N_CLASSES, len(b), bias=False))
            self.out = MaskedLinear(hidden, n_bits, (d_in[:, None] > degs[-1][None, :]))
            self.skip = MaskedLinear(n_bits, n_bits, (d_in[:, None] > d_in[None, :]))
            self.cond_out = nn.Linear(N_CLASSES, n_bits, bias=False)

        def forward(self, x, y1h):
            h = x
            for lin, c in zip(self.hidden, self.cond):
                h = torch.relu(lin(h) + c(y1h))
            return self.out(h) + self.skip(x) + self.cond_out(y1h)

    torch.manual_seed(seed)
    return Made()


def one_hot(labels):
    import torch

    return torch.nn.functional.one_hot(torch.as_tensor(np.array(labels), dtype=torch.long), N_CLASSES).float()


def train(model, bits, labels, steps: int, batch: int, lr: float, weight_decay: float, seed: int,
          progress: bool = True, desc: str = "bitmark: AR model", device=None):
    """Adam on the bits' binary cross-entropy (mean per bit); returns the loss per step. The batch
    indices come from a CPU generator seeded by ``seed``, whatever the ``device``."""
    import torch
    from tqdm import tqdm

    from stages.common.optim import Adam

    device = device or next(model.parameters()).device
    model.to(device)
    x = torch.as_tensor(np.asarray(bits), dtype=torch.float32).to(device)
    y = one_hot(labels).to(device)
    if len(x) != len(y) or len(x) == 0:
        raise ValueError(f"ar.train: {len(x)} sequences and {len(y)} labels")
    opt = Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    g = torch.Generator().manual_seed(int(seed))
    losses = []
    model.train()
    for _ in tqdm(range(steps), desc=desc, disable=not progress, mininterval=2):
        idx = torch.randint(0, len(x), (min(batch, len(x)),), generator=g).to(device)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x[idx], y[idx]), x[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    return losses


def nll_bits(model, bits, labels) -> float:
    """Mean negative log-likelihood per image, in bits (base 2)."""
    import torch

    dev = next(model.parameters()).device
    x = torch.as_tensor(np.asarray(bits), dtype=torch.float32).to(dev)
    with torch.no_grad():
        nats = torch.nn.functional.binary_cross_entropy_with_logits(model(x, one_hot(labels).to(dev)), x, reduction="sum")
    return float(nats) / len(x) / np.log(2)


def sample(model, labels, seed: int, table=None, ngram: int = 1, delta: float = 0.0, chunk: int = 2048,
           progress: str | None = None):
    """Bits (N, 256) sampled for the digit classes ``labels``; with ``delta`` > 0 the green bit of
    the keyed ``table`` gets +delta on its logit at every step (BitMark). ``progress``: a tqdm
    description (one bar over the bit positions of each chunk), or None for no bar."""
    import torch
    from tqdm import tqdm

    from .wm import bias_logits

    if delta and table is None:
        raise ValueError("ar.sample: a watermark (delta > 0) needs the green table")
    labels = np.asarray(labels)
    n_bits = model.out.out_features
    dev = next(model.parameters()).device
    g = torch.Generator().manual_seed(int(seed))           # uniforms drawn on the CPU: same samples on any device
    out = []
    with torch.no_grad():
        for s in range(0, len(labels), chunk):
            y = one_hot(labels[s:s + chunk]).to(dev)
            x = torch.zeros(len(y), n_bits, device=dev)
            prev = np.zeros((len(y), n_bits), np.int8)      # the bits so far, for the green table's context
            for i in tqdm(range(n_bits), desc=progress, disable=progress is None, mininterval=2):
                logit = model(x, y)[:, i]
                if delta:
                    logit = bias_logits(logit, prev, i, table, ngram, delta)
                bit = (torch.rand(len(y), generator=g).to(dev) < torch.sigmoid(logit))
                x[:, i] = bit.float()
                if delta:
                    prev[:, i] = bit.cpu().numpy()
            out.append(x.cpu().numpy().astype(np.int8))
    return np.concatenate(out) if out else np.zeros((0, n_bits), np.int8)


def sample_tokens(model, labels, seed: int, token_table, delta: float, chunk: int = 512):
    """The token-level baseline: pixels (N, 64) sampled one whole pixel (16 levels) at a time, with
    +delta on the logits of the green levels of ``token_table[j, previous level]`` (KGW on pixel
    tokens). The model's distribution over a pixel's 16 levels is the product of its 4 bit
    conditionals: one pass per candidate level gives all four (bit 4j+k sees only earlier bits)."""
    import torch

    from .wm import BITS_PER_PIXEL, LEVELS, N_PIXELS, encode

    labels = np.asarray(labels)
    dev = next(model.parameters()).device
    cand = torch.as_tensor(encode(np.arange(LEVELS)[:, None].repeat(N_PIXELS, 1))[:, :BITS_PER_PIXEL],
                           dtype=torch.float32, device=dev)                      # (16, 4): the bits of each level
    g = torch.Generator().manual_seed(int(seed))
    out = []
    with torch.no_grad():
        for s in range(0, len(labels), chunk):
            n = len(labels[s:s + chunk])
            y = one_hot(np.repeat(labels[s:s + chunk], LEVELS)).to(dev)
            x = torch.zeros(n * LEVELS, N_PIXELS * BITS_PER_PIXEL, device=dev)
            px = np.zeros((n, N_PIXELS), np.int64)
            for j in range(N_PIXELS):
                lo, hi = j * BITS_PER_PIXEL, (j + 1) * BITS_PER_PIXEL
                x[:, lo:hi] = cand.repeat(n, 1)
                logit = model(x, y)[:, lo:hi]
                logp = torch.nn.functional.logsigmoid((2 * x[:, lo:hi] - 1) * logit).sum(1).view(n, LEVELS)
                prev = px[:, j - 1] if j else np.zeros(n, np.int64)
                bias = torch.as_tensor(token_table[j, prev] * float(delta), dtype=logp.dtype, device=dev)
                p = torch.softmax(logp + bias, 1).cpu()
                u = torch.rand(n, 1, generator=g)
                v = torch.clamp((torch.cumsum(p, 1) < u).sum(1), max=LEVELS - 1).numpy()
                px[:, j] = v
                x[:, lo:hi] = cand[torch.as_tensor(v, device=dev)].repeat_interleave(LEVELS, 0)
            out.append(px)
    return np.concatenate(out) if out else np.zeros((0, N_PIXELS), np.int64)


def save_weights(model, path, config: dict) -> None:
    """The state dict (torch.save) beside a JSON config, both atomically."""
    import io as _io
    import json

    import torch

    from stages.common.io import write_bytes, write_text

    buf = _io.BytesIO()
    torch.save({k: v.cpu() for k, v in model.state_dict().items()}, buf)
    write_bytes(path, buf.getvalue())
    write_text(str(path) + ".json", json.dumps(config, sort_keys=True))


def load_weights(path, config_path=None, device=None):
    """(model, config) from :func:`save_weights`' files, on ``device`` (default CPU)."""
    import json

    import torch

    cfg = json.loads(open(config_path or str(path) + ".json").read())
    model = build(cfg["hidden"], cfg["layers"], cfg.get("seed", 0))
    model.load_state_dict(torch.load(path, weights_only=True, map_location="cpu"))
    model.eval()
    return model.to(device or "cpu"), cfg
