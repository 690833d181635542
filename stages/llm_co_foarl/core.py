"""The experiment's steps, shared by the stages and the calibration script: data with optima,
augmented SFT batches, SFT, FOARL (GRPO), and evaluation without a feasibility mask."""
from __future__ import annotations

import math
import time

import numpy as np

from . import problems as P

SYMMETRIES = 8   # the square's rotations and reflections keep every distance


# ---------------------------------------------------------------- data
def make_instances(problem: str, n: int, count: int, rng: np.random.Generator) -> list:
    if problem == "tsp":
        return [P.random_tsp(rng, n) for _ in range(count)]
    return [P.random_kp(rng, n) for _ in range(count)]


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
                   small_init=getattr(cfg, "small_init", False))


def train_sft(model, data: dict, steps: int, batch: int, lr: float, rng, progress: str = "sft",
              curve: list | None = None, device="cpu"):
    import torch
    from tqdm import tqdm

    from .model import sft_loss

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50))
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
            src = pad([describe(prob, r) for r in rows_b]).to(device).repeat_interleave(group, 0)
            model.eval()
            seq = generate(model, src, max_len(prob, size[prob]), greedy=False, generator=gen)
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


# ---------------------------------------------------------------- evaluation
def evaluate(model, rows: list[dict], problem: str, size: int, samples: int, seed: int, chunk: int = 256,
             device="cpu") -> dict:
    """Greedy, one sample (T=1) and best of ``samples`` (T=1), no mask. Per decode: the feasible
    rate, the mean gap over feasible solutions (the official code's averaging) and the mean gap
    with each infeasible solution counted as a 100% gap."""
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
        sm = generate(model, src.repeat_interleave(samples, 0), max_len(problem, size), greedy=False, generator=gen)
        js = [judge(problem, s.tolist(), part[k // samples]) for k, s in enumerate(sm.cpu())]
        for i in range(len(part)):
            grp = js[i * samples:(i + 1) * samples]
            per["sample"].append(grp[0])
            feas = [j for j in grp if j["feasible"]]
            per["best_of"].append(min(feas, key=lambda j: j["gap"]) if feas else grp[0])
    return {k: summarise(v) for k, v in per.items()}


def summarise(judged: list[dict]) -> dict:
    feas = [j for j in judged if j["feasible"]]
    gaps = [j["gap"] for j in feas]
    return {"feasible_rate": len(feas) / len(judged),
            "gap_feasible": float(np.mean(gaps)) if gaps else math.nan,
            "gap_all": float(np.mean([j["gap"] if j["feasible"] else 1.0 for j in judged])),
            "n": len(judged)}
