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
        return self.score_many([(theta, setting, split)])[0]

    def score_many(self, jobs: list[tuple[dict, str, str]], chunk: int = 48) -> list[list[float]]:
        """Each job (loss parameters, setting, split) trained on every draw of its split and scored
        there; all (job, draw) fits run as members of stacked networks (``po.train_po_batch``, up to
        ``chunk`` at a time). The same as calling ``score`` per job, up to float rounding."""
        members = []
        for j, (theta, setting, split) in enumerate(jobs):
            n = self.p.val_draws if split == "val" else self.p.test_draws
            members += [(j, theta, f"{setting}/{split}{k}", split, k) for k in range(n)]
        out: list[list[float]] = [[] for _ in jobs]
        for i in range(0, len(members), chunk):
            part = members[i:i + chunk]
            pols = po.train_po_batch(self.ref, [get_prefs(self.data, m[2]) for m in part],
                                     [m[1] for m in part], self.p.hidden, self.t.steps, self.t.lr)
            self.fits += len(part)
            for (j, _, _, split, k), pol in zip(part, pols):
                out[j].append(self.score_policy(pol, split, k))
        return out


def baseline_grid(t) -> dict[str, dict]:
    """The hand-designed baselines: name -> loss parameters."""
    grid = {f"dpo_b{b:g}": po.dpo(b) for b in t.dpo_betas}
    grid.update({f"cdpo_b{b:g}": po.cdpo(b, t.cdpo_eps) for b in t.dpo_betas})
    grid.update({f"orpo_b{b:g}": po.orpo(b) for b in t.orpo_betas})
    return grid


CORNER_COORDS = (0, 4, 5)   # log beta, eps, lam: the DPO / cDPO (+ NLL of the chosen) corner of the family


def run_search(scorer: Scorer, setting: str, t, seed: int, progress=None, sign: float = 1.0,
               coords: tuple[int, ...] | None = None):
    """CMA-ES (pycma) over the family's search coordinates from DPO(beta=1); fitness = the mean
    validation score on ``setting``. ``coords`` restricts the search to those coordinates of
    ``po.theta_from_vector`` (the others stay at DPO's values): ``CORNER_COORDS`` is the same search
    over the known losses only (the control). ``sign=-1`` is the broken-search control (it
    minimises the score). Returns (best theta, history of (generation, best fitness))."""
    import cma

    dim = len(po.FAMILY_KEYS)
    coords = tuple(range(dim)) if coords is None else tuple(coords)

    def full(x):
        v = np.zeros(dim)
        v[list(coords)] = x
        return v
    es = cma.CMAEvolutionStrategy(np.zeros(len(coords)), t.es_sigma,
                                  {"popsize": t.es_popsize, "seed": int(seed) + 1, "verbose": -9,
                                   "maxiter": t.es_generations})
    history, best = [], (-np.inf, None)
    for g in range(t.es_generations):
        xs = es.ask()
        fit = [float(np.mean(v)) for v in
               scorer.score_many([(po.theta_from_vector(full(np.asarray(x))), setting, "val") for x in xs])]
        for x, v in zip(xs, fit):
            if best[1] is None or sign * v > sign * best[0]:
                best = (v, np.asarray(x))
        es.tell(xs, [-sign * v for v in fit])
        history.append((g, float(max(fit) if sign > 0 else min(fit))))
        if progress:
            progress(g, history[-1][1])
    return po.theta_from_vector(full(best[1])), history


def run_all(scorer: Scorer, p, t, seed: int, progress=None, sign: float = 1.0) -> dict:
    """Every setting: the baselines' validation scores, the best config per method family, test
    scores of DPO(beta=1) and the selected configs; the search over the whole family at the target
    flip rate and the same search over the DPO/cDPO corner only (the control, same budget); the
    test scores of both searched losses (and of the discovered loss's projection on the corner) in
    every setting."""
    grid = baseline_grid(t)
    settings = setting_names(p.flips)
    res: dict = {}
    for s in settings:
        names = list(grid)
        val = dict(zip(names, scorer.score_many([(grid[n], s, "val") for n in names])))
        sel = {pre: select(val, pre) for pre in ("dpo_", "cdpo_", "orpo_")}
        res[s] = {"val": val, "selected": sel, "test": {}}
        tested = sorted({"dpo_b1", *sel.values()})
        res[s]["test"].update(zip(tested, scorer.score_many([(grid[n], s, "test") for n in tested])))
        if progress:
            progress(f"grid {s}")
    tgt = f"flip{p.target_flip:g}"
    say = (lambda what: (lambda g, v: progress(f"{what} gen {g}: best val {v:.3f}"))) if progress else (lambda w: None)
    theta, history = run_search(scorer, tgt, t, seed, sign=sign, progress=say("es"))
    theta_c, history_c = run_search(scorer, tgt, t, seed, sign=sign, progress=say("corner es"),
                                    coords=CORNER_COORDS)
    corner = po.cdpo(theta["beta"], theta["eps"])     # the discovered loss projected on the DPO/cDPO corner
    arms = {"discovered": theta, "corner": corner, "corner_search": theta_c}
    jobs = [(a, s) for s in settings for a in arms]
    for (a, s), v in zip(jobs, scorer.score_many([(arms[a], s, "test") for a, s in jobs])):
        res[s]["test"][a] = v
    return {"results": res, "discovered": theta, "corner_search": theta_c, "es_history": history,
            "corner_es_history": history_c, "fits": scorer.fits}


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
    # 4. the headline (must): the discovered loss against the best baseline at the target flip rate,
    # the best of DPO(beta=1) and each family's validation-selected config, by their test scores
    # (the baseline side takes the best on the test draws: generous to the baselines). Control: the
    # same CMA-ES budget over the DPO/cDPO corner only, against the same baseline.
    best_base = max(test(tgt, "dpo_b1"), tuned(tgt, "dpo_"), tuned(tgt, "cdpo_"), tuned(tgt, "orpo_"))
    m["best_baseline_target"] = best_base
    m["discovered_score_target"] = test(tgt, "discovered")
    m["corner_search_score_target"] = test(tgt, "corner_search")
    m["discovered_over_best_baseline_target"] = test(tgt, "discovered") / max(best_base, 1e-9)
    m["corner_search_over_best_baseline_target"] = test(tgt, "corner_search") / max(best_base, 1e-9)
    m["discovered_minus_corner_search_target"] = test(tgt, "discovered") - test(tgt, "corner_search")
    m["corner_search_over_tuned_dpo_min"] = min(test(s, "corner_search") / max(tuned(s, "dpo_"), 1e-9)
                                                for s in noisy)
    m["corner_search_minus_dpo1_min"] = min(test(s, "corner_search") - test(s, "dpo_b1") for s in noisy)
    # the audit's question: validation-selected DPO against DPO(beta=1) on the test draws, per noisy rate
    m["tuned_minus_dpo1_test"] = {s: tuned(s, "dpo_") - test(s, "dpo_b1") for s in res if s != "mixed"}
    return m


def seed_run(p, t, seed: int, sign: float = 1.0, progress=None) -> dict:
    """One seed from scratch, as the stages run it (reference, draws, bounds, grids, searches):
    ``run_all``'s output with the score ``bounds``. Everything it draws is seeded by ``seed``."""
    ref = build_reference(p, seed)
    data = build_draws(p, ref, seed)
    bounds = score_bounds(seed, max(t.episodes, 16))
    return {"bounds": bounds, **run_all(Scorer(p, t, ref, data, seed, bounds), p, t, seed, progress=progress,
                                        sign=sign)}
