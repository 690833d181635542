"""2-D Gaussian splatting of an image, in torch, on the CPU: the renderer, the wavelet complexity map,
primitive density, and the two densification policies (ADC and CDC) with a shared training loop
that runs a batch of fits in lockstep (:class:`Fitter`, a leading fit dimension; each fit as alone).

Renderer (GaussianImage-style accumulated summation, no alpha compositing, no normalisation):

    I(p) = sum_i  c_i * o_i * exp(-0.5 * (p - mu_i)^T Sigma_i^{-1} (p - mu_i)),

with p the pixel centre (x = column + 0.5, y = row + 0.5, in pixels), mu_i the mean (pixels),
Sigma_i = R(theta_i) diag(s_i^2) R(theta_i)^T (scales s_i = exp(log_scale_i), rotation theta_i),
c_i the colour (one value per channel, unconstrained), o_i = sigmoid(opacity logit) the weight.
Dense evaluation (every primitive at every pixel): primitives x pixels, fine at 64x64 and ~10^3
primitives.

Densification (both policies share the optimiser, the schedule and the count at every event):
- ADC (3DGS adaptive density control): the image-space gradient of the loss with respect to each
  mean, its norm accumulated between events; the primitives with the largest mean norm are
  densified (clone when small, split into two when large), low-opacity ones pruned. The threshold
  of 3DGS is replaced by the event's budget (the count grows to the target on a fixed schedule),
  so both policies reach the same count.
- CDC (complexity-density consistency, after the paper's official code): each primitive's
  complexity (wavelet high-frequency energy of the pixels it renders) and density (1 / mean squared
  distance to its 3 nearest primitives) are z-scored; their product < 0 marks an inconsistency:
  complexity above the mean with density below it -> densify (sampled with probability ~ |product|),
  complexity below the mean with density above it -> prune (sampled with probability ~ 1 -
  opacity). The rest of the budget goes by gradient as in ADC, with the gradient threshold lowered
  for high-complexity primitives (the paper's frequency-adaptive threshold, as a rank weight).
  CDC runs on one of three maps (:data:`COMPLEXITY`): the wavelet complexity (the paper's prior),
  the same values shuffled over the pixels (no information: the control), or the loss-driven
  error map (the baseline whose only difference from CDC is the prior).
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass

import numpy as np
import torch

ATTRS = ("mu", "log_scale", "theta", "color", "opacity_logit")


# ----------------------------------------------------------------------------------------------
# renderer
# The exponent is clamped here before exp: exp(-80) = 1.8e-35 is far below a float32 ulp of any
# pixel value, and exp of a float32 below about -87 takes a slow path (measured 40x slower on
# AVX-512), which far primitives hit on most pixels.
EXP_FLOOR = -80.0


def pixel_grid(h: int, w: int) -> torch.Tensor:
    """(h*w, 2) pixel centres (x, y) in pixels, row-major."""
    ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32) + 0.5,
                            torch.arange(w, dtype=torch.float32) + 0.5, indexing="ij")
    return torch.stack([xs.reshape(-1), ys.reshape(-1)], dim=1)


def features(grid: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """((P, 6) monomials [x^2, xy, y^2, x, y, 1] of the pixel centres, centred on the image, and
    the centre (2,)): the pixel side of :func:`coefficients`."""
    centre = grid.mean(0)
    x, y = grid[:, 0] - centre[0], grid[:, 1] - centre[1]
    return torch.stack([x * x, x * y, y * y, x, y, torch.ones_like(x)], 1), centre


def coefficients(params: dict, centre: torch.Tensor) -> torch.Tensor:
    """(..., n, 6) per-primitive coefficients: the exponent -q/2 + log o at pixel p is
    ``features(p) @ coefficients``. With Sigma^{-1} = [[a, b], [b, d]] and p = (x, y),
    q = a x^2 + 2b xy + d y^2 - 2(a mx + b my) x - 2(b mx + d my) y + (a mx^2 + 2b mx my + d my^2).
    Coordinates are centred on the image to keep the float32 cancellation small (tested against
    the direct formula). ``params`` may carry a leading batch dimension (one slice per fit)."""
    mu, inv_s2 = params["mu"], torch.exp(-2 * params["log_scale"])
    c, sn = torch.cos(params["theta"]), torch.sin(params["theta"])
    a = c * c * inv_s2[..., 0] + sn * sn * inv_s2[..., 1]          # R diag(1/s^2) R^T
    b = c * sn * (inv_s2[..., 0] - inv_s2[..., 1])
    d = sn * sn * inv_s2[..., 0] + c * c * inv_s2[..., 1]
    mx, my = mu[..., 0] - centre[0], mu[..., 1] - centre[1]
    const = a * mx * mx + 2 * b * mx * my + d * my * my
    return torch.stack([-0.5 * a, -b, -0.5 * d, a * mx + b * my, b * mx + d * my,
                        -0.5 * const + torch.nn.functional.logsigmoid(params["opacity_logit"])], -1)


def _exp_weights(coef: torch.Tensor, feats: torch.Tensor) -> torch.Tensor:
    return torch.matmul(coef, feats.T).clamp_min_(EXP_FLOOR).exp_()


def _per_slice(op, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``op`` (a matrix product) on each slice of a leading batch dimension, so that each slice's
    sums run in the same order as in a fit alone (a batched product reduces in another order)."""
    if a.dim() == 2:
        return op(a, b)
    return torch.stack([op(x, y) for x, y in zip(a, b)])


class _Splat(torch.autograd.Function):
    """image = W^T @ colour with W = exp(max(coefficients @ features^T, EXP_FLOOR)), and its
    gradient by hand: two (n, P) tensors per step instead of autograd's half dozen (1.5x faster at
    200 primitives). The floor's zero gradient is not masked: where it acts the weight is exp(-80),
    so the term it leaves is below 1e-34 of the true one's scale."""

    @staticmethod
    def forward(ctx, coef, feats, color):
        w = _exp_weights(coef, feats)                                   # (..., n, P)
        ctx.save_for_backward(w, feats, color)
        return _per_slice(torch.mm, w.transpose(-1, -2), color)         # (..., P, channels)

    @staticmethod
    def backward(ctx, g):
        w, feats, color = ctx.saved_tensors
        grad_w = torch.matmul(color, g.transpose(-1, -2)).mul_(w)       # d image / d exponent
        return torch.matmul(grad_w, feats), None, _per_slice(torch.mm, w, g)


def weights(params: dict, grid: torch.Tensor) -> torch.Tensor:
    """(..., n, P) o_i * G_i(p): each primitive's weight at each pixel, as one matrix product of
    the monomials of the pixel centres with per-primitive coefficients (:func:`coefficients`):
    5.3x faster than the direct formula forward + backward at 200 primitives on 48x48, one loaded
    CPU thread (benchmarks/cdc_gs/renderer.py; 1.7x before the exponent floor)."""
    feats, centre = features(grid)
    return torch.exp(torch.matmul(coefficients(params, centre), feats.T).clamp_min(EXP_FLOOR))


def weights_direct(params: dict, grid: torch.Tensor) -> torch.Tensor:
    """:func:`weights` by the textbook formula, elementwise (the tests' reference)."""
    mu, s = params["mu"], torch.exp(params["log_scale"])
    c, sn = torch.cos(params["theta"]), torch.sin(params["theta"])
    dx = grid[None, :, 0] - mu[:, 0:1]                            # (n, P)
    dy = grid[None, :, 1] - mu[:, 1:2]
    u = (c[:, None] * dx + sn[:, None] * dy) / s[:, 0:1]           # R^T d, scaled
    v = (-sn[:, None] * dx + c[:, None] * dy) / s[:, 1:2]
    return torch.sigmoid(params["opacity_logit"])[:, None] * torch.exp(-0.5 * (u * u + v * v))


def render(params: dict, h: int, w: int, grid: torch.Tensor | None = None) -> torch.Tensor:
    """(..., h, w, channels) accumulated-summation image of the primitives ``params`` (a leading
    batch dimension gives one image per slice)."""
    grid = pixel_grid(h, w) if grid is None else grid
    feats, centre = features(grid)
    img = _Splat.apply(coefficients(params, centre), feats, params["color"])
    return img.reshape(*img.shape[:-2], h, w, img.shape[-1])


def covariance(log_scale: torch.Tensor, theta: torch.Tensor) -> torch.Tensor:
    """(n, 2, 2) Sigma = R diag(s^2) R^T."""
    s2 = torch.exp(2 * log_scale)
    c, sn = torch.cos(theta), torch.sin(theta)
    r = torch.stack([torch.stack([c, -sn], -1), torch.stack([sn, c], -1)], -2)
    return r @ torch.diag_embed(s2) @ r.transpose(1, 2)


# ----------------------------------------------------------------------------------------------
# complexity and density
def wavelet_energy(img: np.ndarray, wavelet: str = "haar", levels: int = 2) -> np.ndarray:
    """(h, w) high-frequency energy per pixel: the squared detail coefficients of
    ``pywt.wavedec2`` (every level, horizontal + vertical + diagonal, summed over channels), each
    spread evenly over the pixels its coefficient covers, summed over levels. For an orthonormal
    wavelet (haar) and a side divisible by 2**levels, the map sums to the image's energy less that
    of the coarsest approximation (Parseval)."""
    import pywt

    img = np.asarray(img, dtype=np.float64)
    if img.ndim == 2:
        img = img[..., None]
    if img.ndim != 3:
        raise ValueError(f"wavelet_energy: the image must be (h, w) or (h, w, channels), got {img.shape}")
    h, w = img.shape[:2]
    energy = np.zeros((h, w))
    for ch in range(img.shape[2]):
        coeffs = pywt.wavedec2(img[..., ch], wavelet, level=levels)
        for details in coeffs[1:]:
            e = sum(d ** 2 for d in details)
            fh, fw = math.ceil(h / e.shape[0]), math.ceil(w / e.shape[1])
            up = np.kron(e, np.ones((fh, fw)))[:h, :w] / (fh * fw)   # energy per pixel
            energy[: up.shape[0], : up.shape[1]] += up
    return energy


def wavelet_complexity(img: np.ndarray, wavelet: str = "haar", levels: int = 2) -> np.ndarray:
    """(h, w) complexity map in [0, 1]: :func:`wavelet_energy` divided by its 99th percentile and
    clipped at 1 (all zero for an image without detail)."""
    return unit_map(wavelet_energy(img, wavelet, levels))


def unit_map(energy: np.ndarray) -> np.ndarray:
    """``energy`` divided by its 99th percentile and clipped at 1 (all zero when it has none)."""
    scale = np.percentile(energy, 99)
    if scale <= 1e-12:
        return np.zeros_like(energy)
    return np.clip(energy / scale, 0.0, 1.0)


def primitive_complexity(w: torch.Tensor, cmap: torch.Tensor) -> torch.Tensor:
    """(n,) each primitive's complexity: the mean of the pixel complexity ``cmap`` (P,) over the
    pixels it renders, weighted by its weight there (``w``: (n, P))."""
    return (w @ cmap) / w.sum(1).clamp_min(1e-12)


def knn_density(mu: torch.Tensor, k: int = 3) -> torch.Tensor:
    """(n,) 1 / mean squared distance to the ``k`` nearest other primitives (the paper's density,
    simple-knn's distCUDA2 with k = 3)."""
    from scipy.spatial import cKDTree

    pts = mu.detach().cpu().numpy().astype(np.float64)
    k_eff = min(k, len(pts) - 1)
    if k_eff < 1:
        raise ValueError(f"knn_density needs at least 2 primitives, got {len(pts)}")
    d, _ = cKDTree(pts).query(pts, k=k_eff + 1)                   # the first neighbour is itself
    d2 = np.maximum((d[:, 1:] ** 2).mean(1), 1e-7)
    return torch.as_tensor(1.0 / d2, dtype=torch.float32)


def zscore(x: torch.Tensor) -> torch.Tensor:
    return (x - x.mean()) / (x.std() + 1e-6)


def adaptive_threshold(freq: torch.Tensor, lo: float = 0.00015, hi: float = 0.0002, k: float = 6.0) -> torch.Tensor:
    """The paper's gradient threshold, lowered for high-complexity primitives: lo + (hi - lo) *
    (1 - 2 (sigmoid(k f) - 1/2)), f clipped to [0, 1] (its official code's defaults)."""
    f = freq.clamp(0.0, 1.0)
    return lo + (hi - lo) * (1.0 - (torch.sigmoid(k * f) - 0.5) * 2)


def consistency_picks(freq: torch.Tensor, density: torch.Tensor, opacity: torch.Tensor, n_densify: int,
                      n_prune: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Indices to densify and to prune by complexity-density consistency (see the module docstring)."""
    fz, dz = zscore(freq), zscore(density)
    score = fz * dz
    dens_c = torch.where((score < 0) & (fz > 0))[0]
    prune_c = torch.where((score < 0) & (fz < 0))[0]
    dens = _sample(dens_c, score[dens_c].abs(), n_densify, gen)
    prune = _sample(prune_c, (1.0 - opacity[prune_c]).clamp_min(0.0), n_prune, gen)
    return dens, prune


def _sample(cands: torch.Tensor, w: torch.Tensor, n: int, gen: torch.Generator) -> torch.Tensor:
    n = min(n, int(cands.numel()))
    if n <= 0:
        return cands[:0]
    if float(w.sum()) <= 0:
        w = torch.ones_like(w)
    return cands[torch.multinomial(w / w.sum(), n, replacement=False, generator=gen)]


# ----------------------------------------------------------------------------------------------
# the fit
@dataclass(frozen=True)
class FitConfig:
    n_target: int                 # the final primitive count (every policy)
    init_fraction: float          # the count at the start, as a fraction of n_target
    steps: int
    densify_from: int
    densify_every: int
    densify_until: int
    lr_mu: float
    lr_scale: float
    lr_theta: float
    lr_color: float
    lr_opacity: float
    clone_max_scale: float        # pixels: clone when the larger scale is at most this, else split
    min_opacity: float            # prune below this opacity (every policy)
    cdc_densify_fraction: float   # per event, share of the count densified by consistency (CDC)
    cdc_prune_fraction: float     # per event, share of the count pruned by consistency (CDC)
    adc_rule: str = "plain"           # ADC's prune-and-respawn (ADC_RULES; calibration's variants)
    adc_prune_fraction: float = 0.0   # per event, share of the count it prunes (and respawns)
    wavelet: str = "haar"
    wavelet_levels: int = 2


# ADC's prune-and-respawn variants (benchmarks/cdc_gs/calibration.py), besides 3DGS's opacity
# threshold (min_opacity) and densifying the largest gradients: "plain" none (the study's ADC);
# "contribution" / "opacity" prune the adc_prune_fraction least contributing (|c| o s_x s_y) /
# least opaque primitives per event, their budget respawned by gradient; "gradient_density" runs
# CDC's consistency picks (adc_prune_fraction densified and pruned) on the accumulated gradient
# instead of the complexity.
ADC_RULES = ("plain", "contribution", "opacity", "gradient_density")
# A fit's complexity map: "wavelet" (the paper's prior), "shuffled" (the same values at random
# pixels: no information, the control) or "error" (the loss-driven map: each pixel's squared error
# at the event, scaled as the complexity; CDC on it is the baseline whose only difference from CDC
# is the prior).
COMPLEXITY = ("wavelet", "shuffled", "error")


def event_steps(cfg: FitConfig) -> list[int]:
    return [t for t in range(cfg.densify_from, cfg.densify_until + 1, cfg.densify_every) if 0 < t < cfg.steps]


def target_count(cfg: FitConfig, event: int, n_events: int) -> int:
    """The count after event ``event`` (0-based): linear from the start to n_target at the last."""
    n0 = max(4, int(round(cfg.init_fraction * cfg.n_target)))
    return int(round(n0 + (cfg.n_target - n0) * (event + 1) / n_events))


def init_params(img: torch.Tensor, n: int, gen: torch.Generator) -> dict:
    """``n`` primitives at uniform random positions, isotropic with scale ~ the mean spacing, the
    image's colour at their position, opacity 0.1 (3DGS's initial opacity)."""
    h, w, _ = img.shape
    mu = torch.rand(n, 2, generator=gen) * torch.tensor([w, h], dtype=torch.float32)
    spacing = math.sqrt(h * w / n)
    ix = mu[:, 0].long().clamp(0, w - 1)
    iy = mu[:, 1].long().clamp(0, h - 1)
    color = img[iy, ix, :].clone()
    return {"mu": mu, "log_scale": torch.full((n, 2), math.log(0.5 * spacing)),
            "theta": torch.rand(n, generator=gen) * math.pi, "color": color,
            "opacity_logit": torch.full((n,), math.log(0.1 / 0.9))}


def contribution(p: dict) -> torch.Tensor:
    """(n,) each primitive's share of the image: the integral of its term, |c| o 2 pi s_x s_y
    (less the constant 2 pi), summed over channels."""
    return (p["color"].abs().sum(-1) * torch.sigmoid(p["opacity_logit"])
            * torch.exp(p["log_scale"].sum(-1)))


@dataclass(frozen=True)
class FitJob:
    """One fit: its target image ((h, w) or (h, w, channels)), policy (``adc`` or ``cdc``), seed
    (the start and every draw), and CDC's map (:data:`COMPLEXITY`; ADC uses none)."""
    img: np.ndarray
    method: str
    seed: int
    complexity: str = "wavelet"


@contextlib.contextmanager
def flush_denormal():
    """Denormal floats flushed to zero (this thread, then back to IEEE's default): products of a
    far primitive's weight (down to exp(-80)) with small gradients are denormal, and every op on
    them takes a slow path (a batch of 10 fits ran 7-9x slower with them)."""
    torch.set_flush_denormal(True)
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


class _Slice:
    """What one fit of a batch keeps for itself: target, complexity map, generator, history."""

    def __init__(self, job: FitJob, cfg: FitConfig, dev: torch.device):
        if job.method not in ("adc", "cdc"):
            raise ValueError(f"method must be 'adc' or 'cdc', got {job.method!r}")
        if job.complexity not in COMPLEXITY:
            raise ValueError(f"complexity must be one of {COMPLEXITY}, got {job.complexity!r}")
        arr = np.asarray(job.img, dtype=np.float32)
        if arr.ndim == 2:
            arr = arr[..., None]
        if arr.ndim != 3 or min(arr.shape[:2]) < 4:
            raise ValueError(f"the image must be (h, w) or (h, w, channels) with h, w >= 4, got {arr.shape}")
        self.method, self.complexity, self.arr = job.method, job.complexity, arr
        # every random draw is made on the CPU (self.gen), so a fit is the same on any device
        self.gen = torch.Generator().manual_seed(job.seed)
        cmap = torch.as_tensor(wavelet_complexity(arr, cfg.wavelet, cfg.wavelet_levels).reshape(-1),
                               dtype=torch.float32)
        if job.complexity == "shuffled":       # the ablation: the same values at random pixels
            cmap = cmap[torch.randperm(cmap.numel(), generator=torch.Generator().manual_seed(job.seed + 1))]
        self.cmap = cmap.to(dev)
        self.history: list[dict] = []


class Fitter:
    """A batch of fits of one config run in lockstep: the parameters (a leading fit dimension, one
    slice per :class:`FitJob`), one Adam and its moments, and the densification statistics.

    Each slice is the fit its job would give alone: the loss is the sum of the slices' losses, so
    each slice gets its own gradient; Adam is elementwise; every draw comes from the slice's own
    generator; densification runs slice by slice. Every slice reaches the same count at every
    event (the schedule's), so the slices stay stacked. A batch of one is a single fit."""

    def __init__(self, jobs: FitJob | list[FitJob], cfg: FitConfig, device: str | torch.device = "cpu"):
        jobs = [jobs] if isinstance(jobs, FitJob) else list(jobs)
        if not jobs:
            raise ValueError("Fitter: no job")
        if cfg.adc_rule not in ADC_RULES:
            raise ValueError(f"adc_rule must be one of {ADC_RULES}, got {cfg.adc_rule!r}")
        self.cfg = cfg
        self.dev = torch.device(device)
        self.slices = [_Slice(j, cfg, self.dev) for j in jobs]
        shapes = {s.arr.shape for s in self.slices}
        if len(shapes) > 1:
            raise ValueError(f"Fitter: every image of a batch has the same shape, got {sorted(shapes)}")
        self.h, self.w, _ = self.slices[0].arr.shape
        self.target = torch.as_tensor(np.stack([s.arr for s in self.slices])).to(self.dev)   # (B, h, w, ch)
        self.grid = pixel_grid(self.h, self.w).to(self.dev)
        self._feats, self._centre = features(self.grid)
        self._grad_scale = torch.tensor([self.w, self.h], dtype=torch.float32, device=self.dev) / 2
        n0 = max(4, int(round(cfg.init_fraction * cfg.n_target)))
        starts = [init_params(torch.as_tensor(s.arr), n0, s.gen) for s in self.slices]
        self.params = {k: torch.stack([st[k] for st in starts]).to(self.dev).requires_grad_(True) for k in ATTRS}
        self.lrs = {"mu": cfg.lr_mu, "log_scale": cfg.lr_scale, "theta": cfg.lr_theta,
                    "color": cfg.lr_color, "opacity_logit": cfg.lr_opacity}
        self._new_optimizer()
        self.grad_accum = torch.zeros(len(jobs), n0, device=self.dev)
        self.denom = 0

    @property
    def n(self) -> int:
        """The count of every slice."""
        return int(self.params["mu"].shape[1])

    @property
    def history(self) -> list[list[dict]]:
        return [s.history for s in self.slices]

    # ---- optimiser surgery (Adam's moments kept for survivors, zero for newborns, as 3DGS does)
    def _new_optimizer(self, state: dict | None = None) -> None:
        self.opt = torch.optim.Adam([{"params": [self.params[k]], "lr": self.lrs[k], "name": k} for k in ATTRS],
                                    eps=1e-15)
        if state:
            for k in ATTRS:
                self.opt.state[self.params[k]] = state[k]

    def _rebuild(self, keeps: list[torch.Tensor], news: list[dict]) -> None:
        """Slice b keeps its primitives ``keeps[b]`` (indices) and appends ``news[b]``."""
        sizes = {len(k) + len(nw["mu"]) for k, nw in zip(keeps, news)}
        if len(sizes) != 1:
            raise RuntimeError(f"the fits of a batch ended an event at different counts {sorted(sizes)}: "
                               f"too few candidates to reach the schedule's count")
        state = {}
        for k in ATTRS:
            old = self.params[k]
            st = self.opt.state.get(old, {})
            data = torch.stack([torch.cat([old.detach()[b][keep], nw[k]], 0)
                                for b, (keep, nw) in enumerate(zip(keeps, news))])
            if st:
                st = {"step": st["step"], **{m: torch.stack([torch.cat([st[m][b][keep], torch.zeros_like(nw[k])], 0)
                                                             for b, (keep, nw) in enumerate(zip(keeps, news))])
                                             for m in ("exp_avg", "exp_avg_sq")}}
            self.params[k] = data.requires_grad_(True)
            state[k] = st
        self._new_optimizer(state)
        self.grad_accum = torch.zeros(len(keeps), sizes.pop(), device=self.dev)
        self.denom = 0

    def render(self) -> torch.Tensor:
        """(B, h, w, channels): every slice's image."""
        img = _Splat.apply(coefficients(self.params, self._centre), self._feats, self.params["color"])
        return img.reshape(len(self.slices), self.h, self.w, -1)

    def step(self) -> torch.Tensor:
        """One Adam step of every slice; (B,) the losses (mean squared error) before it."""
        self.opt.zero_grad(set_to_none=True)
        loss = torch.mean((self.render() - self.target) ** 2, dim=(1, 2, 3))
        loss.sum().backward()
        # image-space positional gradient, in units of the image size (like 3DGS's NDC gradient)
        self.grad_accum += (self.params["mu"].grad.detach() * self._grad_scale).norm(dim=-1)
        self.denom += 1
        self.opt.step()
        with torch.no_grad():
            self.params["log_scale"].clamp_(math.log(0.3), math.log(max(self.h, self.w)))
        return loss.detach()

    # ---- densification
    def densify_and_prune(self, n_after: int) -> list[dict]:
        """One event on every slice: each reaches ``n_after`` primitives."""
        with torch.no_grad():
            grads = self.grad_accum / max(self.denom, 1)
            picks = [self._picks(b, grads[b], n_after) for b in range(len(self.slices))]
            keeps, news = zip(*picks)
            n_before = self.n
            self._rebuild(list(keeps), list(news))
            return [s.history[-1] | {"n_before": n_before, "n_after": self.n} for s in self.slices]

    def _picks(self, b: int, grads: torch.Tensor, n_after: int) -> tuple[torch.Tensor, dict]:
        """Slice b's event: (indices kept, new primitives); its history gets the counts."""
        cfg, sl = self.cfg, self.slices[b]
        p = {k: v.detach()[b] for k, v in self.params.items()}
        n = len(grads)
        opacity = torch.sigmoid(p["opacity_logit"])
        prune = opacity < cfg.min_opacity
        cdc_dens = torch.empty(0, dtype=torch.long, device=self.dev)
        rank = grads.clone()
        if sl.method == "cdc":
            cmap = sl.cmap
            if sl.complexity == "error":      # the loss-driven map: each pixel's squared error now
                err = ((render(p, self.h, self.w, self.grid) - self.target[b]) ** 2).sum(-1).reshape(-1)
                cmap = torch.as_tensor(unit_map(err.cpu().numpy()), dtype=torch.float32, device=self.dev)
            freq = primitive_complexity(weights(p, self.grid), cmap)
            dens = knn_density(p["mu"])
            cdc_dens, cdc_prune = consistency_picks(freq.cpu(), dens, opacity.cpu(), int(cfg.cdc_densify_fraction * n),
                                                    int(cfg.cdc_prune_fraction * n), sl.gen)
            cdc_dens, cdc_prune = cdc_dens.to(self.dev), cdc_prune.to(self.dev)
            prune[cdc_prune] = True
            # the frequency-adaptive threshold as a rank weight: grad / threshold(freq)
            rank = grads / adaptive_threshold(freq)
        elif cfg.adc_rule == "gradient_density":
            # CDC's consistency rule on ADC's own, loss-driven signal: the accumulated gradient
            # takes the place of the wavelet complexity (densify where it is high and density
            # low, prune where it is low and density high)
            k = int(cfg.adc_prune_fraction * n)
            cdc_dens, cdc_prune = consistency_picks(grads.cpu(), knn_density(p["mu"]), opacity.cpu(), k, k, sl.gen)
            cdc_dens, cdc_prune = cdc_dens.to(self.dev), cdc_prune.to(self.dev)
            prune[cdc_prune] = True
        elif cfg.adc_rule in ("contribution", "opacity"):
            # prune-and-respawn: the least contributing primitives (or the least opaque) go, their
            # budget is densified by gradient (3DGS's opacity reset and pruning, as a budget)
            score = contribution(p) if cfg.adc_rule == "contribution" else opacity
            k = int(cfg.adc_prune_fraction * n)
            prune[torch.argsort(score, stable=True)[:k]] = True
        if int(prune.sum()) > n - 4:
            prune[:] = False
        budget = max(0, n_after - (n - int(prune.sum())))
        chosen = torch.zeros(n, dtype=torch.bool, device=self.dev)
        cdc_dens = cdc_dens[~prune[cdc_dens]][:budget]
        chosen[cdc_dens] = True
        rest = budget - int(chosen.sum())
        if rest > 0:
            order = torch.argsort(torch.where(chosen | prune, torch.tensor(-1.0, device=self.dev), rank), descending=True)
            chosen[order[:rest]] = True
        chosen &= ~prune
        new, removed = self._children(p, chosen, sl.gen)
        keep = torch.where(~(prune | removed))[0]
        sl.history.append({"pruned": int(prune.sum()), "densified": int(chosen.sum()),
                           "by_consistency": int(len(cdc_dens))})
        return keep, new

    def _children(self, p: dict, chosen: torch.Tensor, gen: torch.Generator) -> tuple[dict, torch.Tensor]:
        """New primitives for the ``chosen``: a copy each when small (clone, the parent stays), two
        samples from the parent with scales / 1.6 when large (split, the parent is removed)."""
        big = torch.exp(p["log_scale"]).max(1).values > self.cfg.clone_max_scale
        clone, split = torch.where(chosen & ~big)[0], torch.where(chosen & big)[0]
        new = {k: [p[k][clone]] for k in ATTRS}
        if len(split):
            s = torch.exp(p["log_scale"][split]).repeat(2, 1)
            th = p["theta"][split].repeat(2)
            z = torch.randn(tuple(s.shape), generator=gen).to(self.dev) * s
            c, sn = torch.cos(th), torch.sin(th)
            off = torch.stack([c * z[:, 0] - sn * z[:, 1], sn * z[:, 0] + c * z[:, 1]], 1)
            new["mu"].append(p["mu"][split].repeat(2, 1) + off)
            new["log_scale"].append(p["log_scale"][split].repeat(2, 1) - math.log(1.6))
            new["theta"].append(th)
            new["color"].append(p["color"][split].repeat(2, 1))
            new["opacity_logit"].append(p["opacity_logit"][split].repeat(2))
        removed = torch.zeros(len(chosen), dtype=torch.bool, device=self.dev)
        removed[split] = True
        return {k: torch.cat(v, 0) for k, v in new.items()}, removed

    def fit(self, progress=None) -> np.ndarray:
        """Every step and event of the schedule; (steps, B) the losses. Denormal floats are
        flushed to zero meanwhile (:func:`flush_denormal`)."""
        cfg = self.cfg
        events = event_steps(cfg)
        losses = []
        with flush_denormal():
            for t in range(cfg.steps):
                losses.append(self.step())
                if t in events:
                    self.densify_and_prune(target_count(cfg, events.index(t), len(events)))
                if progress is not None:
                    progress(len(self.slices))
        return torch.stack(losses).cpu().numpy()

    def export(self, b: int = 0) -> dict[str, np.ndarray]:
        """Slice b's primitives (numpy) and image shape."""
        out = {k: v.detach()[b].cpu().numpy().copy() for k, v in self.params.items()}
        out["shape"] = np.array([self.h, self.w, self.target.shape[-1]])
        return out


def render_export(d: dict) -> np.ndarray:
    """(h, w, channels) image of an :meth:`Fitter.export` dict (numpy in, numpy out)."""
    h, w, _ = (int(x) for x in d["shape"])
    params = {k: torch.as_tensor(np.asarray(d[k]), dtype=torch.float32) for k in ATTRS}
    with torch.no_grad():
        return render(params, h, w).numpy()
