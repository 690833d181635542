"""gara_sam, open question 2 of the calibration draft: does GaRA beat LoRA at the same maximum rank
when the frozen segmenter is a ViT-tiny and the adapters are per token (on qkv and the MLP's first
layer, as in SAM's encoder)? One seed, a prototype, not a stage.

    nice -n 19 python -m benchmarks.gara_sam.vit_calibration --seed 1000

``--smoke`` runs it at tiny sizes in seconds (what CI runs): every arm, a few scenes, 3 steps each.

The same scenes and corruptions as the study (stages/gara_sam/scenes.py); a ViT on 4x4 patches
(dim 48, 4 blocks, 3 heads) with a per-token linear head to the patch's 16 pixels, pre-trained on
clean scenes and frozen; arms: frozen, peft LoRA (r=8) on every qkv and fc1, GaRA (r_max=8, a gate
per token: a linear map of the token to r logits, Gumbel-sigmoid with straight-through, rank
penalty lam, gate lr x10), full fine-tuning. Prints IoU clean / seen / unseen, the effective rank
per condition and the study's check values.
"""
from __future__ import annotations

import argparse
import copy
import math
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from stages.common.device import limit_threads
from stages.gara_sam.net import iou_per_image, train_loop
from stages.gara_sam.scenes import CONDITIONS, SEEN, UNSEEN, corrupt_batch, make_scenes


class Block(nn.Module):
    def __init__(self, d: int, heads: int):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)
        self.heads = heads

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class ViTSeg(nn.Module):
    def __init__(self, size=32, patch=4, d=48, depth=4, heads=3):
        super().__init__()
        self.p, self.g = patch, size // patch
        self.embed = nn.Linear(3 * patch * patch, d)
        self.pos = nn.Parameter(torch.randn(1, self.g * self.g, d) * 0.02)
        self.blocks = nn.ModuleList([Block(d, heads) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, patch * patch)

    def forward(self, img):
        b, p, g = img.shape[0], self.p, self.g
        x = img.unfold(2, p, p).unfold(3, p, p).permute(0, 2, 3, 1, 4, 5).reshape(b, g * g, 3 * p * p)
        x = self.embed(x) + self.pos
        for blk in self.blocks:
            x = blk(x)
        y = self.head(self.norm(x)).view(b, g, g, p, p).permute(0, 1, 3, 2, 4).reshape(b, 1, g * p, g * p)
        return y


class GatedLoRALinear(nn.Module):
    """Frozen Linear + scaling * B diag(g(token)) A, a gate per token (see the module docstring)."""

    def __init__(self, base: nn.Linear, r: int, alpha: float, tau: float = 1.0, gate_bias: float = 1.0):
        super().__init__()
        self.base, self.r, self.scaling, self.tau = base, r, alpha / r, tau
        for q in base.parameters():
            q.requires_grad_(False)
        self.lora_A, self.lora_B = nn.Linear(base.in_features, r, bias=False), nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.gate = nn.Linear(base.in_features, r)
        nn.init.normal_(self.gate.weight, 0, 0.01)
        nn.init.constant_(self.gate.bias, gate_bias)
        self.last_soft = self.last_gate = None

    def forward(self, x):
        z = self.gate(x)
        self.last_soft = torch.sigmoid(z)
        if self.training:        # Gumbel-sigmoid = torch's relaxed Bernoulli; hard gate, straight-through
            soft = torch.distributions.RelaxedBernoulli(torch.tensor(self.tau), logits=z).rsample()
            g = (soft > 0.5).to(z.dtype) + soft - soft.detach()
        else:
            g = (z > 0).to(z.dtype)
        self.last_gate = g.detach()
        return self.base(x) + self.scaling * self.lora_B(self.lora_A(x) * g)


TARGETS = [f"blocks.{i}.{m}" for i in range(4) for m in ("qkv", "fc1")]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1000, help="a calibration seed (>= 1000)")
    ap.add_argument("--pre-steps", type=int, default=1500)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lam", type=float, default=0.05)
    ap.add_argument("--r", type=int, default=8)
    ap.add_argument("--gate-lr-mult", type=float, default=10.0)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.seed < 1000:
        raise SystemExit("benchmarks use calibration seeds >= 1000 only (the verdict seeds are below 1000)")
    n_pre, n_adapt, n_clean, n_test = 2000, 400, 200, 200
    if a.smoke:
        a.pre_steps, a.steps = 3, 3
        n_pre, n_adapt, n_clean, n_test = 16, 8, 4, 4
    limit_threads(1)
    rng = np.random.default_rng(a.seed)
    torch.manual_seed(a.seed)
    xp, yp = make_scenes(n_pre, 32, rng)
    xa, ya = make_scenes(n_adapt, 32, rng, shapes=("ellipse", "rect"))
    xa = corrupt_batch(xa, [SEEN[i] for i in rng.integers(3, size=n_adapt)], rng)
    xc, yc = make_scenes(n_clean, 32, rng, shapes=("ellipse", "rect"))
    XA, YA = torch.from_numpy(np.concatenate([xa, xc])), torch.from_numpy(np.concatenate([ya, yc]))
    xt, yt = make_scenes(n_test, 32, rng)
    test = {c: torch.from_numpy(corrupt_batch(xt, [c] * n_test, rng)) for c in CONDITIONS}
    base = ViTSeg()
    t0 = time.process_time()
    L = train_loop(base, list(base.parameters()), torch.from_numpy(xp), torch.from_numpy(yp), a.pre_steps, 32, 2e-3,
                   torch.Generator().manual_seed(a.seed), desc="vit pretrain")
    dt = time.process_time() - t0
    print(f"pretrain {dt:.1f} CPU s ({a.pre_steps / dt:.1f} steps/s) loss {L[0]:.3f} -> {np.mean(L[-20:]):.3f}", flush=True)

    @torch.no_grad()
    def evaluate(model, gated=()):
        model.eval()
        iou, rank = {}, {}
        for c in CONDITIONS:
            p = torch.sigmoid(model(test[c])).numpy()
            iou[c] = float(iou_per_image(p > 0.5, yt).mean())
            if gated:
                rank[c] = float(torch.stack([g.last_gate.sum(-1).mean() for g in gated]).mean())
        return iou, rank

    res, ranks = {"frozen": evaluate(base)[0]}, {}
    for arm in ("lora", "gara", "full"):
        m = copy.deepcopy(base)
        gen = torch.Generator().manual_seed(a.seed + 1)
        torch.manual_seed(a.seed + 1)
        t0 = time.process_time()
        if arm == "lora":
            from peft import LoraConfig, get_peft_model

            pm = get_peft_model(m, LoraConfig(r=a.r, lora_alpha=a.r, target_modules=TARGETS, lora_dropout=0.0))
            train_loop(pm, [q for q in pm.parameters() if q.requires_grad], XA, YA, a.steps, 32, 3e-3, gen, desc=arm)
            res[arm] = evaluate(pm.merge_and_unload())[0]
        elif arm == "gara":
            for q in m.parameters():
                q.requires_grad_(False)
            gated = []
            for name in TARGETS:
                blk, attr = name.rsplit(".", 1)
                parent = m.get_submodule(blk)
                layer = GatedLoRALinear(getattr(parent, attr), a.r, float(a.r))
                setattr(parent, attr, layer)
                gated.append(layer)
            train_loop(m, [q for q in m.parameters() if q.requires_grad], XA, YA, a.steps, 32, 3e-3, gen, lam=a.lam,
                       gated=gated, desc=arm, gate_lr_mult=a.gate_lr_mult)
            res[arm], ranks[arm] = evaluate(m, gated)
        else:
            train_loop(m, list(m.parameters()), XA, YA, a.steps, 32, 1e-3, gen, desc=arm)
            res[arm] = evaluate(m)[0]
        print(f"{arm}: {time.process_time() - t0:.1f} CPU s", flush=True)
    f = res["frozen"]
    for arm, d in res.items():
        seen, unseen = np.mean([d[c] for c in SEEN]), np.mean([d[c] for c in UNSEEN])
        print(f"{arm:7s} clean {d['clean']:.3f} seen {seen:.3f} unseen {unseen:.3f} corrupt {(seen + unseen) / 2:.3f} | "
              f"gains: seen {seen - np.mean([f[c] for c in SEEN]):+.3f} clean {d['clean'] - f['clean']:+.3f}")
    rk = ranks["gara"]
    print("gara rank: " + " ".join(f"{c[:7]}={v:.2f}" for c, v in rk.items())
          + f"  max/min {max(rk.values()) / max(min(rk.values()), 1e-3):.3f}")
    g, lo = res["gara"], res["lora"]
    cg = (np.mean([g[c] for c in SEEN]) + np.mean([g[c] for c in UNSEEN])) / 2
    cl = (np.mean([lo[c] for c in SEEN]) + np.mean([lo[c] for c in UNSEEN])) / 2
    print(f"GaRA - LoRA: corrupt {cg - cl:+.3f}, clean {g['clean'] - lo['clean']:+.3f}")


if __name__ == "__main__":
    main()
