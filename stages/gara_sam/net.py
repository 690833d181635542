"""The segmenter, the gated-rank adapter and the training loops of gara_sam (torch; peft imported lazily).

``UNet``: a small U-Net (GroupNorm, width w) whose six encoder 3x3 convs (``ADAPTED``) carry the
adapters. ``GatedLoRAConv2d``: the GaRA stand-in. The update of a frozen conv W is
``scaling * B diag(g(x)) A`` with A a k x k conv C_in -> r and B a 1x1 conv r -> C_out (peft's Conv2d
LoRA layout, B zero-initialised), i.e. a sum of r rank-1 components b_i a_i^T, each switched on or
off per image by the gate g(x) in {0, 1}^r: a linear map of the layer input's per-channel statistics (``gate_features``), relaxed in training with a Gumbel-sigmoid and a straight-through estimator. The
loss adds ``lam * mean(sigmoid(gate logits))``, the expected fraction of components switched on. With
the gate forced open (``gate_mode="open"``) the layer is LoRA: a test checks it equals peft's LoRA
for the same weights. ``gate_mode="const"`` feeds the gate a zero vector: the rank is then learned
but the same for every input (the input-aware check's ablation).
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

ADAPTED = ("enc1.c1", "enc1.c2", "enc2.c1", "enc2.c2", "mid.c1", "mid.c2")
GATE_MODES = ("gumbel", "open", "const")


class Block(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.n1 = nn.GroupNorm(4, cout)
        self.c2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.n2 = nn.GroupNorm(4, cout)

    def forward(self, x):
        x = F.relu(self.n1(self.c1(x)))
        return F.relu(self.n2(self.c2(x)))


class UNet(nn.Module):
    def __init__(self, width: int = 8):
        super().__init__()
        w = width
        self.enc1, self.enc2, self.mid = Block(3, w), Block(w, 2 * w), Block(2 * w, 4 * w)
        self.dec2, self.dec1 = Block(4 * w + 2 * w, 2 * w), Block(2 * w + w, w)
        self.head = nn.Conv2d(w, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        m = self.mid(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([F.interpolate(m, scale_factor=2.0), e2], 1))
        d1 = self.dec1(torch.cat([F.interpolate(d2, scale_factor=2.0), e1], 1))
        return self.head(d1)


def gate_features(x: torch.Tensor) -> torch.Tensor:
    """What the gate sees of a layer input (n, C, H, W): per channel the mean, the log standard deviation
    and the log high-frequency energy (mean |x - its 3x3 local mean|), (n, 3C). Noise raises the last,
    blur lowers it, low light lowers the mean, low contrast the deviation."""
    hf = (x - F.avg_pool2d(x, 3, 1, 1, count_include_pad=False)).abs().mean((2, 3))
    return torch.cat([x.mean((2, 3)), torch.log(x.std((2, 3)) + 1e-3), torch.log(hf + 1e-3)], 1)


class GatedLoRAConv2d(nn.Module):
    """A frozen conv plus a gated low-rank update (see the module docstring)."""

    def __init__(self, base: nn.Conv2d, r: int, alpha: float, gate_mode: str = "gumbel", tau: float = 1.0,
                 gate_bias: float = 1.0):
        super().__init__()
        if r < 1:
            raise ValueError(f"rank r must be >= 1, got {r}")
        if gate_mode not in GATE_MODES:
            raise ValueError(f"gate_mode must be one of {GATE_MODES}, got {gate_mode!r}")
        self.base, self.r, self.scaling, self.gate_mode, self.tau = base, r, alpha / r, gate_mode, tau
        for p in self.base.parameters():
            p.requires_grad_(False)
        cin, cout = base.in_channels, base.out_channels
        self.lora_A = nn.Conv2d(cin, r, base.kernel_size, base.stride, base.padding, bias=False)
        self.lora_B = nn.Conv2d(r, cout, 1, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))      # peft's default init
        nn.init.zeros_(self.lora_B.weight)
        self.gate = nn.Linear(3 * cin, r)
        nn.init.normal_(self.gate.weight, 0.0, 0.01)
        nn.init.constant_(self.gate.bias, gate_bias)
        self.last_soft = None          # sigmoid(logits) of the last forward, for the rank penalty
        self.last_gate = None          # the gate values used in the last forward (n, r)

    def logits(self, x):
        feats = gate_features(x)
        if self.gate_mode == "const":
            feats = torch.zeros_like(feats)
        return self.gate(feats)

    def forward(self, x):
        out = self.base(x)
        if self.gate_mode == "open":
            g = torch.ones(x.shape[0], self.r, dtype=x.dtype, device=x.device)
            self.last_soft = g
        else:
            z = self.logits(x)
            self.last_soft = torch.sigmoid(z)
            if self.training:
                u = torch.rand_like(z).clamp(1e-6, 1 - 1e-6)
                soft = torch.sigmoid((z + torch.log(u) - torch.log1p(-u)) / self.tau)
                g = (soft > 0.5).to(z.dtype) + soft - soft.detach()
            else:
                g = (z > 0).to(z.dtype)
        self.last_gate = g.detach()
        return out + self.scaling * self.lora_B(self.lora_A(x) * g[:, :, None, None])


def get_module(model: nn.Module, name: str) -> nn.Module:
    for part in name.split("."):
        model = getattr(model, part)
    return model


def _set(model: nn.Module, name: str, module: nn.Module) -> None:
    *parents, last = name.split(".")
    setattr(get_module(model, ".".join(parents)) if parents else model, last, module)


def add_gated(model: UNet, r: int, alpha: float, gate_mode: str = "gumbel", tau: float = 1.0,
              gate_bias: float = 1.0, targets=ADAPTED) -> list[GatedLoRAConv2d]:
    """Freeze ``model`` and wrap each target conv in a GatedLoRAConv2d (in place); returns the layers."""
    for p in model.parameters():
        p.requires_grad_(False)
    layers = []
    for name in targets:
        layer = GatedLoRAConv2d(get_module(model, name), r, alpha, gate_mode, tau, gate_bias)
        _set(model, name, layer)
        layers.append(layer)
    return layers


def peft_lora(model: UNet, r: int, alpha: float, targets=ADAPTED):
    """peft's LoRA (the baseline library) on the same convs; returns the PeftModel."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=r, lora_alpha=alpha, target_modules=list(targets), lora_dropout=0.0, bias="none")
    return get_peft_model(model, cfg)


def seg_loss(logits, masks):
    """BCE + soft Dice (per image, averaged)."""
    bce = F.binary_cross_entropy_with_logits(logits, masks)
    p = torch.sigmoid(logits)
    inter = (p * masks).sum((1, 2, 3))
    dice = 1 - (2 * inter + 1) / (p.sum((1, 2, 3)) + masks.sum((1, 2, 3)) + 1)
    return bce + dice.mean()


def iou_per_image(pred: torch.Tensor | "np.ndarray", masks) -> "np.ndarray":  # noqa: F821
    """IoU of binary predictions and masks, one value per image; 1 where both are empty."""
    import numpy as np

    p = np.asarray(pred, bool).reshape(len(pred), -1)
    m = np.asarray(masks, bool).reshape(len(masks), -1)
    inter, union = (p & m).sum(1), (p | m).sum(1)
    return np.where(union == 0, 1.0, inter / np.maximum(union, 1))


def train_loop(model: nn.Module, params, images, masks, steps: int, batch: int, lr: float, gen: torch.Generator,
               lam: float = 0.0, gated: list[GatedLoRAConv2d] | None = None, desc: str = "", progress: bool = True,
               gate_lr_mult: float = 1.0):
    """Adam on ``params`` for ``steps`` mini-batches of ``batch`` drawn (with ``gen``) from the tensors;
    adds ``lam`` x the mean expected gate of ``gated``, whose gate weights learn at ``gate_lr_mult`` x
    ``lr``. Returns the loss curve."""
    from tqdm import tqdm

    from stages.common.optim import Adam

    gate_ids = {id(q) for g in (gated or []) for q in g.gate.parameters()}
    rest = [q for q in params if id(q) not in gate_ids]
    opts = [Adam(rest, lr=lr)]
    if gate_ids:
        opts.append(Adam([q for q in params if id(q) in gate_ids], lr=lr * gate_lr_mult))
    model.train()
    losses = []
    n = len(images)
    for _ in tqdm(range(steps), desc=desc, disable=not progress, mininterval=2, leave=False):
        idx = torch.randint(0, n, (batch,), generator=gen)
        loss = seg_loss(model(images[idx]), masks[idx])
        if gated and lam > 0:
            loss = loss + lam * torch.stack([g.last_soft.mean() for g in gated]).mean()
        for opt in opts:
            opt.zero_grad()
        loss.backward()
        for opt in opts:
            opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


@torch.no_grad()
def predict(model: nn.Module, images, batch: int = 256, gated: list[GatedLoRAConv2d] | None = None):
    """(probabilities (n, 1, H, W) as numpy, effective rank per image or None): the mean over the
    gated layers of the number of components switched on."""
    import numpy as np

    model.eval()
    probs, ranks = [], []
    for i in range(0, len(images), batch):
        probs.append(torch.sigmoid(model(images[i:i + batch])).numpy())
        if gated:
            ranks.append(torch.stack([g.last_gate.sum(1) for g in gated]).mean(0).numpy())
    return np.concatenate(probs), (np.concatenate(ranks) if gated else None)


ARMS = ("frozen", "lora", "gara", "gara_const", "full")
GATED_ARMS = {"gara": "gumbel", "gara_const": "const"}


def build_arm(arm: str, width: int, rank: int, alpha: float, tau: float = 1.0, gate_bias: float = 1.0):
    """An untrained model with the layout of ``arm``'s saved state dict, and its gated layers (or []).
    LoRA is saved merged (peft's merge_and_unload), so it loads into a plain U-Net like frozen and full."""
    if arm not in ARMS:
        raise ValueError(f"unknown arm {arm!r}; expected one of {ARMS}")
    model = UNet(width)
    gated = add_gated(model, rank, alpha, GATED_ARMS[arm], tau, gate_bias) if arm in GATED_ARMS else []
    return model, gated


def state_arrays(model: nn.Module, prefix: str) -> dict:
    """``model``'s state dict as float32 numpy arrays keyed ``prefix/name``."""
    return {f"{prefix}/{k}": v.detach().cpu().numpy() for k, v in model.state_dict().items()}


def load_arrays(model: nn.Module, arrays, prefix: str) -> nn.Module:
    """Load the ``prefix/*`` arrays of ``arrays`` (e.g. an opened weights.npz) into ``model``."""
    keys = [k for k in arrays.keys() if k.startswith(prefix + "/")]
    if not keys:
        raise KeyError(f"no weights saved for arm {prefix!r}")
    model.load_state_dict({k[len(prefix) + 1:]: torch.from_numpy(arrays[k]) for k in keys})
    return model.eval()


def to_tensor(a, image: bool = False) -> torch.Tensor:
    """A float32 tensor of the stored uint8 array ``a``: images as value / 255, masks as 0/1."""
    import numpy as np

    return torch.from_numpy(np.asarray(a, dtype=np.float32) / (255.0 if image else 1.0))
