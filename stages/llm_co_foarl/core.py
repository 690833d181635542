"""The experiment's steps, shared by the stages and the benchmarks: data with optima, augmented
SFT batches, SFT (with its learning curve), FOARL (GRPO), the equal-compute SFT control, and
evaluation without a feasibility mask. :func:`train_seed` and :func:`evaluate_seed` are one verdict
seed's work: every draw comes from that seed's own generators, so a seed's figures do not depend on
which other seeds run beside it."""
from __future__ import annotations

import math
import time

import numpy as np

from . import problems as P

SYMMETRIES = 8   # the square's rotations and reflections keep every distance
MODEL_NAMES = ("sft", "foarl", "sft_more")   # SFT only, SFT + FOARL, SFT + equal-compute SFT (the control)


# ---------------------------------------------------------------- data
def make_instances(problem: str, n: int, count: int, rng: np.random.Generator) -> list:
    if problem == "tsp":
        return [P.random_tsp(rng, n) for _ in range(count)]
    return [P.random_kp(rng, n) for _ in range(count)]


def solve_dataset(size: dict, n_train: int, n_test: int, workers: int, data_seed: int) -> dict:
    """``{problem: {train, test}}``: instances drawn from ``[data_seed, k]`` (k the problem's index),
    each with its OR-Tools optimum (one spawn of the workers per problem)."""
    out = {}
    for k, prob in enumerate(P.PROBLEMS):
        rng = np.random.default_rng([data_seed, k])
        insts = make_instances(prob, size[prob], n_train, rng) + make_instances(prob, size[prob], n_test, rng)
        solved = with_optima(prob, insts, workers)
        out[prob] = {"train": solved[:n_train], "test": solved[n_train:]}
    return out


def sizes(data: dict) -> dict:
    """Nodes or items per instance, per problem, read from the data."""
    return {prob: len(d["train"][0]["pts"] if prob == "tsp" else d["train"][0]["items"]) for prob, d in data.items()}


def with_optima(problem: str, instances: list, workers: int) -> list[dict]:
    """Each instance with its OR-Tools optimal solution and objective (rows of plain lists)."""
    from .solvers import solve_all

    if problem == "tsp":
        sols = solve_all("tsp", [p.tolist() for p in instances], workers)
        return [{"pts": p.tolist(), "tour": t, "opt": P.tour_length(p, t)} for p, (t, _) in zip(instances, sols)]
    sols = solve_all("kp", [(it.tolist(), cap) for it, cap in instances], workers)
    return [{"items": it.tolist(), "cap": cap, "chosen": ch, "opt": float(v)}
            for (it, cap), (ch, v, _) in zip(instances, sols)]


def augment(problem: str, row: dict, rng: np.random.Generator) -> dict:
    """A randomly relabelled (and, for TSP, rotated/reflected) copy of a solved instance: the
    optimum carries over exactly, so the solver is not called again."""
    if problem == "tsp":
        pts = np.array(row["pts"])
        n = len(pts)
        s = int(rng.integers(SYMMETRIES))
        x, y = pts[:, 0], pts[:, 1]
        if s & 1:
            x = P.COORD_MAX - x
        if s & 2:
            y = P.COORD_MAX - y
        if s & 4:
            x, y = y, x
        perm = rng.permutation(n)             # old node i -> new label perm[i]
        new = np.empty_like(pts)
        new[perm] = np.stack([x, y], 1)
        return {"pts": new.tolist(), "tour": [int(perm[t]) for t in row["tour"]], "opt": row["opt"]}
    items = np.array(row["items"])
    perm = rng.permutation(len(items))
    new = np.empty_like(items)
    new[perm] = items
    return {"items": new.tolist(), "cap": row["cap"], "chosen": [int(perm[i]) for i in row["chosen"]],
            "opt": row["opt"]}


def target(problem: str, row: dict) -> list[int]:
    return P.target_tsp(row["tour"]) if problem == "tsp" else P.target_kp(row["chosen"])


def describe(problem: str, row: dict) -> list[int]:
    if problem == "tsp":
        return P.describe_tsp(np.array(row["pts"]))
    return P.describe_kp(np.array(row["items"]), row["cap"])


def judge(problem: str, seq, row: dict) -> dict:
    if problem == "tsp":
        return P.judge_tsp(seq, np.array(row["pts"]), row["opt"])
    return P.judge_kp(seq, np.array(row["items"]), row["cap"], row["opt"])


def pad(seqs: list[list[int]]):
    import torch

    width = max(len(s) for s in seqs)
    return torch.tensor([s + [P.PAD] * (width - len(s)) for s in seqs], dtype=torch.long)


def sft_batch(data: dict, batch: int, rng: np.random.Generator, device="cpu"):
    """``batch`` augmented examples, split evenly over the problems."""
    srcs, tgts = [], []
    probs = list(data)
    for k in range(batch):
        prob = probs[k % len(probs)]
        rows = data[prob]
        row = augment(prob, rows[int(rng.integers(len(rows)))], rng)
        srcs.append(describe(prob, row))
        tgts.append(target(prob, row))
    return pad(srcs).to(device), pad(tgts).to(device)


def max_len(problem: str, size: int) -> int:
    """Tokens a solution may take: a closed tour and EOS, or every item and EOS (+1 slack)."""
    return size + 3 if problem == "tsp" else size + 2


# ---------------------------------------------------------------- training
def make_model(cfg):
    from .model import Seq2Seq

    return Seq2Seq(d=cfg.d_model, heads=cfg.heads, enc_layers=cfg.enc_layers, dec_layers=cfg.dec_layers,
                   rope=getattr(cfg, "rope", False), shift=getattr(cfg, "shift", False),
                   small_init=getattr(cfg, "small_init", False), entities=getattr(cfg, "entities", False),
                   pointer=getattr(cfg, "pointer", False))


def train_sft(model, data: dict, steps: int, batch: int, lr: float, rng, progress: str = "sft",
              curve: list | None = None, device="cpu", every: int = 0, on_every=None, decay: bool = False):
    """Teacher forcing on augmented copies of the solved instances; CPU seconds spent. The learning
    rate warms up over 50 steps, then stays (``decay`` False) or follows a cosine to 0 at the last
    step. With ``every`` > 0, ``on_every(step)`` is called after each ``every``-th step (its time
    not counted)."""
    import torch
    from tqdm import tqdm

    from .model import sft_loss

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50) * (
        0.5 * (1 + math.cos(math.pi * s / steps)) if decay else 1.0))
    model.train()
    t0 = time.process_time()
    for step in tqdm(range(steps), desc=progress, mininterval=5, disable=steps < 50):
        src, tgt = sft_batch(data, batch, rng, device)
        loss = sft_loss(model, src, tgt)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if curve is not None:
            curve.append(float(loss.detach()))
        if every and on_every is not None and (step + 1) % every == 0:
            t1 = time.process_time()
            on_every(step + 1)
            model.train()
            t0 += time.process_time() - t1
    return time.process_time() - t0


def train_foarl(model, data: dict, size: dict, steps: int, prompts: int, group: int, lr: float, beta: float,
                rng, seed: int, curve: list | None = None, device="cpu"):
    """GRPO with the FOARL reward, from (a copy of) the SFT model; ``ref`` is the frozen SFT model."""
    import copy

    import torch
    from tqdm import tqdm

    from .model import generate, grpo_loss

    ref = copy.deepcopy(model).eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator(device=device).manual_seed(seed)
    t0 = time.process_time()
    for step in tqdm(range(steps), desc="foarl", mininterval=5, disable=steps < 20):
        for prob, rows in data.items():
            rows_b = [augment(prob, rows[i], rng) for i in rng.integers(len(rows), size=prompts)]
            src = pad([describe(prob, r) for r in rows_b]).to(device)
            model.eval()
            seq = generate(model, src, max_len(prob, size[prob]), greedy=False, generator=gen, repeat=group)
            model.train()
            judged = [judge(prob, s.tolist(), rows_b[k // group]) for k, s in enumerate(seq.cpu())]
            rewards = torch.tensor([j["reward"] for j in judged], dtype=torch.float, device=device)
            loss, kl = grpo_loss(model, ref, src, seq, rewards, group, beta)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if curve is not None:
                curve.append({"step": step, "problem": prob, "reward": float(rewards.mean()),
                              "feasible": float(np.mean([j["feasible"] for j in judged])), "kl": kl})
    return time.process_time() - t0


# ---------------------------------------------------------------- one verdict seed
def train_seed(data: dict, p, seed: int, device="cpu", log=print) -> dict:
    """SFT from a model initialised under ``seed``, FOARL from it, and the equal-compute SFT control
    from it: ``{"models": {name: model}, "metrics": {...}}``. The SFT learning curve (greedy gap and
    feasible rate on the first ``p.curve_instances`` test instances of each problem, before the
    first step and every ``p.curve_every`` steps) is ``metrics["sft_curve"]``; no setting is chosen
    on it. Draws: the seed's streams 10 (SFT batches), 11 (FOARL prompts) and 12 (control batches);
    FOARL's samples from a torch generator seeded with ``seed``."""
    import copy

    import torch

    torch.manual_seed(seed)
    train = {prob: d["train"] for prob, d in data.items()}
    size = sizes(data)
    model = make_model(p).to(device)
    losses: list = []
    learn: list = []
    probe = {prob: d["test"][:p.curve_instances] for prob, d in data.items()}

    def point(step: int) -> None:
        row = {"step": step, "loss": float(np.mean(losses[-p.curve_every:])) if losses else math.nan}
        for prob, rows in probe.items():
            g = evaluate(model, rows, prob, size[prob], 0, seed, device=device)["greedy"]
            row[f"{prob}_gap_pct"] = 100 * g["gap_feasible"]
            row[f"{prob}_feasible"] = g["feasible_rate"]
        learn.append(row)
        log(f"    seed {seed} SFT step {step}: loss {row['loss']:.3f}, " + ", ".join(
            f"{prob} greedy feasible {row[f'{prob}_feasible']:.2f} gap {row[f'{prob}_gap_pct']:.1f}%" for prob in probe))

    if p.curve_every:
        point(0)
    sft_cpu = train_sft(model, train, p.sft_steps, p.batch, p.lr, np.random.default_rng([seed, 10]), curve=losses,
                        device=device, every=p.curve_every, on_every=point, decay=p.sft_decay)
    rl = copy.deepcopy(model)
    rl_curve: list = []
    rl_cpu = train_foarl(rl, train, size, p.rl_steps, p.rl_prompts, p.rl_group, p.rl_lr, p.beta,
                         np.random.default_rng([seed, 11]), seed, rl_curve, device=device)
    ctrl = copy.deepcopy(model)
    ctrl_steps = p.rl_steps * len(train)
    ctrl_losses: list = []
    ctrl_cpu = train_sft(ctrl, train, ctrl_steps, p.rl_prompts * p.rl_group, p.control_lr,
                         np.random.default_rng([seed, 12]), progress="sft control", curve=ctrl_losses, device=device)
    log(f"    seed {seed}: SFT {p.sft_steps} steps {sft_cpu:.1f} s CPU (final loss {np.mean(losses[-20:]):.3f}), "
        f"FOARL {p.rl_steps} steps {rl_cpu:.1f} s, control {ctrl_steps} steps of {p.rl_prompts * p.rl_group} "
        f"{ctrl_cpu:.1f} s")
    return {"models": {"sft": model, "foarl": rl, "sft_more": ctrl},
            "metrics": {"cpu_s": {"sft": round(sft_cpu, 2), "foarl": round(rl_cpu, 2), "sft_control": round(ctrl_cpu, 2)},
                        "sft_final_loss": float(np.mean(losses[-20:])),
                        "control_final_loss": float(np.mean(ctrl_losses[-5:])),
                        "control_updates": ctrl_steps, "foarl_updates": p.rl_steps * len(train),
                        "sft_curve": learn, "foarl_curve": rl_curve, "sft_loss": losses}}


def evaluate_seed(models: dict, data: dict, samples: int, seed: int, device="cpu", log=print) -> dict:
    """One verdict seed's three models on the held-out instances (greedy, one sample and best of
    ``samples`` at T = 1, no mask; sampling from a generator seeded with ``seed``), the claim
    figures, and the ladder (random and heuristic solutions; the random ones from the seed's
    stream 20)."""
    from .ladder import heuristic_gaps

    size = sizes(data)
    res = {}
    for name in MODEL_NAMES:
        res[name] = {}
        for prob, d in data.items():
            res[name][prob] = evaluate(models[name], d["test"], prob, size[prob], samples, seed, device=device)
            g = res[name][prob]["greedy"]
            log(f"    seed {seed} {name:8s} {prob}: greedy feasible {g['feasible_rate']:.3f}, gap (feasible) "
                f"{100 * g['gap_feasible']:.2f}%, gap (infeasible = 100%) {100 * g['gap_all']:.2f}%")
    ladder = {}
    for k, (prob, d) in enumerate(data.items()):
        ladder[prob] = {**{f"{key}_gap_pct": 100 * v for key, v in
                           heuristic_gaps(prob, d["test"], np.random.default_rng([seed, 20, k])).items()},
                        **{f"{m}_greedy_gap_pct": 100 * res[m][prob]["greedy"]["gap_feasible"] for m in MODEL_NAMES},
                        **{f"{m}_greedy_feasible": res[m][prob]["greedy"]["feasible_rate"] for m in MODEL_NAMES}}
    return {"claim": claim_figures(res, list(data)), "ladder": ladder, "results": res}


def claim_figures(res: dict, problems) -> dict:
    """The figures claims.yaml reads. Pooled figures average the two single-solution decodings
    (greedy and one sample at T = 1) over both problems (``*_mean``) or over the two decodings of
    one problem (``*_mean_<problem>``); ``control_*`` is the same figure with the equal-compute SFT
    control in place of FOARL. Per-problem figures without ``mean`` are greedy. Gaps in %."""
    c = {}
    single = ("greedy", "sample")

    def g(model, p, d, key):
        return res[model][p][d][key]

    def mean_over(fn, probs):
        return sum(fn(p, d) for p in probs for d in single) / (len(probs) * len(single))

    def change(arm, key, scale=1.0, sign=1.0):   # arm minus SFT (sign 1) or SFT minus arm (sign -1)
        return lambda p, d: scale * sign * (g(arm, p, d, key) - g("sft", p, d, key))

    for suffix, probs in (("", list(problems)), *((f"_{p}", [p]) for p in problems)):
        for arm, prefix in (("foarl", ""), ("sft_more", "control_")):
            c[f"{prefix}feasible_gain_mean{suffix}"] = mean_over(change(arm, "feasible_rate"), probs)
            c[f"{prefix}gap_drop_mean{suffix}_pct"] = mean_over(change(arm, "gap_feasible", 100, -1), probs)
            c[f"{prefix}gap_all_drop_mean{suffix}_pct"] = mean_over(change(arm, "gap_all", 100, -1), probs)
    c["feasible_gain_vs_control_mean"] = mean_over(
        lambda p, d: g("foarl", p, d, "feasible_rate") - g("sft_more", p, d, "feasible_rate"), problems)
    c["gap_all_drop_vs_control_mean_pct"] = mean_over(
        lambda p, d: 100 * (g("sft_more", p, d, "gap_all") - g("foarl", p, d, "gap_all")), problems)
    for p in problems:
        s_, r = res["sft"][p]["greedy"], res["foarl"][p]["greedy"]
        c[f"feasible_gain_{p}"] = r["feasible_rate"] - s_["feasible_rate"]
        c[f"gap_drop_{p}_pct"] = 100 * (s_["gap_feasible"] - r["gap_feasible"])
        c[f"gap_all_drop_{p}_pct"] = 100 * (s_["gap_all"] - r["gap_all"])
        c[f"sft_gap_{p}_pct"] = 100 * s_["gap_feasible"]
        c[f"sft_feasible_{p}"] = s_["feasible_rate"]
        c[f"foarl_gap_{p}_pct"] = 100 * r["gap_feasible"]
        c[f"foarl_feasible_{p}"] = r["feasible_rate"]
        c[f"control_gap_{p}_pct"] = 100 * res["sft_more"][p]["greedy"]["gap_feasible"]
        c[f"control_feasible_{p}"] = res["sft_more"][p]["greedy"]["feasible_rate"]
        c[f"foarl_best_of_gap_{p}_pct"] = 100 * res["foarl"][p]["best_of"]["gap_feasible"]
        c[f"foarl_best_of_feasible_{p}"] = res["foarl"][p]["best_of"]["feasible_rate"]
    return c


# ---------------------------------------------------------------- evaluation
def evaluate(model, rows: list[dict], problem: str, size: int, samples: int, seed: int, chunk: int = 256,
             device="cpu") -> dict:
    """Greedy, one sample (T=1) and best of ``samples`` (T=1; greedy alone when 0), no mask. Per
    decode: the feasible rate, the mean gap over feasible solutions (the official code's averaging)
    and the mean gap with each infeasible solution counted as a 100% gap."""
    import torch

    from .model import generate

    model.eval()
    gen = torch.Generator(device=device).manual_seed(seed)
    per = {"greedy": [], "sample": [], "best_of": []}
    for a in range(0, len(rows), chunk):
        part = rows[a:a + chunk]
        src = pad([describe(problem, r) for r in part]).to(device)
        g = generate(model, src, max_len(problem, size), greedy=True)
        per["greedy"] += [judge(problem, s.tolist(), r) for s, r in zip(g.cpu(), part)]
        if not samples:
            continue
        sm = generate(model, src, max_len(problem, size), greedy=False, generator=gen, repeat=samples)
        js = [judge(problem, s.tolist(), part[k // samples]) for k, s in enumerate(sm.cpu())]
        for i in range(len(part)):
            grp = js[i * samples:(i + 1) * samples]
            per["sample"].append(grp[0])
            feas = [j for j in grp if j["feasible"]]
            per["best_of"].append(min(feas, key=lambda j: j["gap"]) if feas else grp[0])
    return {k: summarise(v) for k, v in per.items() if v}


def summarise(judged: list[dict]) -> dict:
    feas = [j for j in judged if j["feasible"]]
    gaps = [j["gap"] for j in feas]
    return {"feasible_rate": len(feas) / len(judged),
            "gap_feasible": float(np.mean(gaps)) if gaps else math.nan,
            "gap_all": float(np.mean([j["gap"] if j["feasible"] else 1.0 for j in judged])),
            "n": len(judged)}
