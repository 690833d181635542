"""mpo's experiment: dataset draws for every setting, the beta grids selected on validation draws,
the CMA-ES search over the loss family, held-out test scores, and the figures the claims read.
The stages (prepare / train / evaluate) and benchmarks/mpo/calibration.py call these functions.
"""
from __future__ import annotations

import numpy as np

from . import po

STATE_POOL_P_RANDOM = 0.5      # the prompts: states visited by an expert that acts at random half the time


def setting_names(flips: list[float]) -> list[str]:
    return [f"flip{f:g}" for f in flips] + ["mixed"]


def build_reference(p, seed: int):
    """The reference (SFT) policy: behaviour cloning on noisy-expert labels (its state_dict)."""
    rng = np.random.default_rng([seed, 1])
    _, states = po.rollout(po.noisy_expert(STATE_POOL_P_RANDOM, rng), 16, rng, collect=True)
    s = states[rng.choice(len(states), p.ref_states, replace=False)]
    a = po.noisy_expert(p.ref_p_random, rng)(s)
    pol = po.behaviour_clone(s, a, p.hidden, p.ref_steps, 3e-3, seed)
    return {k: v.detach().clone() for k, v in pol.state_dict().items()}


def build_draws(p, ref_state: dict, seed: int) -> dict[str, np.ndarray]:
    """Every dataset draw, flat: ``{setting}/{split}{k}/{s,w,lo,true}``. Within a split and draw the
    noise settings share prompts and pairs (matched points); flips are nested (a pair flipped at
    rate 0.2 is flipped at 0.3 too). The mixed set has clean labels."""
    import torch

    ref = po.make_policy(p.hidden)
    ref.load_state_dict(ref_state)
    out = {}
    for split, n_draws, tag in (("val", p.val_draws, 2), ("test", p.test_draws, 3)):
        for k in range(n_draws):
            rng = np.random.default_rng([seed, tag, k])
            _, pool = po.rollout(po.noisy_expert(STATE_POOL_P_RANDOM, rng), 8, rng, collect=True)
            s = pool[rng.choice(len(pool), p.pairs, replace=False)]
            with torch.no_grad():
                probs = torch.softmax(ref(torch.from_numpy(s)), 1).double().numpy()
            for f in p.flips:
                pr = po.make_prefs(s, probs, f, 0.0, np.random.default_rng([seed, tag, k, 1]))
                _put(out, f"flip{f:g}/{split}{k}", pr)
            pr = po.make_prefs(s, probs, 0.0, p.mixed, np.random.default_rng([seed, tag, k, 2]))
            _put(out, f"mixed/{split}{k}", pr)
    return out


def _put(out: dict, key: str, pr: po.Prefs) -> None:
    out[f"{key}/s"], out[f"{key}/w"], out[f"{key}/lo"], out[f"{key}/true"] = pr.s, pr.w, pr.lo, pr.true_w


def get_prefs(data, key: str) -> po.Prefs:
    return po.Prefs(data[f"{key}/s"], data[f"{key}/w"], data[f"{key}/lo"], data[f"{key}/true"])


def score_bounds(seed: int, episodes: int) -> tuple[float, float]:
    """Mean returns of the uniform-random policy and of the expert (the 0 and 1 of the score)."""
    rng = np.random.default_rng([seed, 7])
    lo, _ = po.rollout(lambda o: rng.integers(0, po.N_ACTIONS, len(o)), episodes, rng)
    hi, _ = po.rollout(po.expert_action, episodes, np.random.default_rng([seed, 8]))
    return float(lo.mean()), float(hi.mean())


class Scorer:
    """Trains a policy with loss parameters ``theta`` on one draw and scores it: the mean normalised
    return of the sampled policy over ``episodes`` episodes, seeded per (split, draw)."""

    def __init__(self, p, t, ref_state, data, seed: int, bounds):
        self.p, self.t, self.ref, self.data, self.seed, self.bounds = p, t, ref_state, data, seed, bounds
        self.fits = 0

    def train(self, theta: dict, key: str):
        return po.train_po(self.ref, get_prefs(self.data, key), theta, self.p.hidden, self.t.steps, self.t.lr)

    def score_policy(self, pol, split: str, k: int) -> float:
        rng = np.random.default_rng([self.seed, 11 if split == "val" else 13, k])
        ret, _ = po.rollout(po.sampler(pol, rng), self.t.episodes, rng)
        return float(po.normalised(ret.mean(), *self.bounds))

    def score(self, theta: dict, setting: str, split: str) -> list[float]:
        n = self.p.val_draws if split == "val" else self.p.test_draws
        out = []
        for k in range(n):
            self.fits += 1
            out.append(self.score_policy(self.train(theta, f"{setting}/{split}{k}"), split, k))
        return out


def baseline_grid(t) -> dict[str, dict]:
    """The hand-designed baselines: name -> loss parameters."""
    grid = {f"dpo_b{b:g}": po.dpo(b) for b in t.dpo_betas}
    grid.update({f"cdpo_b{b:g}": po.cdpo(b, t.cdpo_eps) for b in t.dpo_betas})
    grid.update({f"orpo_b{b:g}": po.orpo(b) for b in t.orpo_betas})
    return grid


def run_search(scorer: Scorer, setting: str, t, seed: int, progress=None, sign: float = 1.0):
    """CMA-ES (pycma) over the family's search coordinates from DPO(beta=1); fitness = the mean
    validation score on ``setting``. ``sign=-1`` is the broken-search control (it minimises the
    score). Returns (best theta, history of (generation, best fitness))."""
    import cma

    es = cma.CMAEvolutionStrategy(np.zeros(len(po.FAMILY_KEYS)), t.es_sigma,
                                  {"popsize": t.es_popsize, "seed": int(seed) + 1, "verbose": -9,
                                   "maxiter": t.es_generations})
    history, best = [], (-np.inf, None)
    for g in range(t.es_generations):
        xs = es.ask()
        fit = []
        for x in xs:
            v = float(np.mean(scorer.score(po.theta_from_vector(np.asarray(x)), setting, "val")))
            fit.append(v)
            if best[1] is None or sign * v > sign * best[0]:
                best = (v, np.asarray(x))
        es.tell(xs, [-sign * v for v in fit])
        history.append((g, float(max(fit) if sign > 0 else min(fit))))
        if progress:
            progress(g, history[-1][1])
    return po.theta_from_vector(best[1]), history


def run_all(scorer: Scorer, p, t, seed: int, progress=None, sign: float = 1.0) -> dict:
    """Every setting: the baselines' validation scores, the best config per method family, test
    scores of DPO(beta=1) and the selected configs; the search at the target flip rate; the
    discovered loss's test scores in every setting."""
    grid = baseline_grid(t)
    settings = setting_names(p.flips)
    res: dict = {}
    for s in settings:
        val = {n: scorer.score(th, s, "val") for n, th in grid.items()}
        sel = {pre: select(val, pre) for pre in ("dpo_", "cdpo_", "orpo_")}
        res[s] = {"val": val, "selected": sel, "test": {}}
        for n in sorted({"dpo_b1", *sel.values()}):
            res[s]["test"][n] = scorer.score(grid[n], s, "test")
        if progress:
            progress(f"grid {s}")
    theta, history = run_search(scorer, f"flip{p.target_flip:g}", t, seed, sign=sign,
                                progress=(lambda g, v: progress(f"es gen {g}: best val {v:.3f}")) if progress else None)
    corner = po.cdpo(theta["beta"], theta["eps"])     # the discovered loss projected on the DPO/cDPO corner
    for s in settings:
        res[s]["test"]["discovered"] = scorer.score(theta, s, "test")
        res[s]["test"]["corner"] = scorer.score(corner, s, "test")
    return {"results": res, "discovered": theta, "es_history": history, "fits": scorer.fits}


def select(val: dict[str, list[float]], prefix: str) -> str:
    """The config of a method family (name prefix) with the best mean validation score."""
    names = [n for n in val if n.startswith(prefix)]
    return max(names, key=lambda n: (np.mean(val[n]), n))


def claim_metrics(res: dict, flips: list[float], target: float) -> dict:
    """The figures claims.yaml reads, from the results (per setting: val/test scores per config)."""
    def test(setting, name):
        return float(np.mean(res[setting]["test"][name]))

    def tuned(setting, prefix):
        return test(setting, res[setting]["selected"][prefix])

    tgt = f"flip{target:g}"
    clean = "flip0"
    m: dict = {"scores": {}}
    for s in res:
        m["scores"][s] = {n: test(s, n) for n in res[s]["test"]}
        m["scores"][s]["dpo_tuned"] = tuned(s, "dpo_")
        m["scores"][s]["cdpo_tuned"] = tuned(s, "cdpo_")
        m["scores"][s]["orpo_tuned"] = tuned(s, "orpo_")
    noisy = [f"flip{f:g}" for f in flips if f >= target]
    # 1. the suite detects noise: DPO(beta=1) at each noise rate >= target, relative to clean labels
    ratios = {s: test(s, "dpo_b1") / max(test(clean, "dpo_b1"), 1e-9) for s in noisy}
    m["noise_dpo1_ratio_max"] = max(ratios.values())
    m["control_noise_dpo1_ratio_clean"] = 1.0
    low = [f"flip{f:g}" for f in flips if 0 < f < target]
    if low:
        m["control_noise_dpo1_ratio_low"] = test(low[0], "dpo_b1") / max(test(clean, "dpo_b1"), 1e-9)
    # 2. mixed quality hurts ORPO (tuned) relative to DPO (better of beta=1 and tuned)
    dpo_mixed = max(test("mixed", "dpo_b1"), tuned("mixed", "dpo_"))
    m["mixed_orpo_over_dpo"] = tuned("mixed", "orpo_") / max(dpo_mixed, 1e-9)
    m["control_clean_orpo_over_dpo"] = tuned(clean, "orpo_") / max(max(test(clean, "dpo_b1"),
                                                                       tuned(clean, "dpo_")), 1e-9)
    # 3. discovered loss vs beta-tuned DPO at every noise rate >= target; and vs DPO(beta=1) at target
    m["discovered_over_tuned_dpo_min"] = min(test(s, "discovered") / max(tuned(s, "dpo_"), 1e-9) for s in noisy)
    m["discovered_minus_dpo1_min"] = min(test(s, "discovered") - test(s, "dpo_b1") for s in noisy)
    m["control_discovered_minus_dpo1_clean"] = test(clean, "discovered") - test(clean, "dpo_b1")
    m["corner_over_discovered_target"] = test(tgt, "corner") / max(test(tgt, "discovered"), 1e-9)
    # 4. should: discovered beats the best tuned baseline at the target noise rate by 10 %
    best_base = max(tuned(tgt, "dpo_"), tuned(tgt, "cdpo_"), tuned(tgt, "orpo_"))
    m["discovered_over_best_tuned_target"] = test(tgt, "discovered") / max(best_base, 1e-9)
    return m
