"""purpcode calibration: the whole experiment at candidate sizes in one process, with CPU times.
Run: python benchmarks/purpcode/calibration.py [seed] [key=value ...]
--smoke (anywhere among the arguments) runs it at tiny sizes in seconds (what CI runs)."""
import sys
import time
from types import SimpleNamespace as NS

import numpy as np
import torch

from stages.common.device import limit_threads
from stages.purpcode import codelang as cl
from stages.purpcode import data, oracle as orc, policy as pol


# --smoke: a tiny model, a few steps, one RL iteration, few test prompts (key=value still applies on top)
SMOKE = dict(d_model=16, layers=1, heads=2, per_prompt=1, sft_steps=2, sft_batch=8, rule_frac=0.05, rule_steps=1,
             tries=1, rl_iters=1, rl_prompts=2, group=2, epochs=1, n_eval=1, test_frac=0.02)


def main() -> None:
    limit_threads(1)
    smoke = "--smoke" in sys.argv[1:]
    argv = [sys.argv[0]] + [x for x in sys.argv[1:] if x != "--smoke"]
    seed = int(argv[1]) if len(argv) > 1 else 0
    cfg = dict(d_model=48, layers=2, heads=4, per_prompt=4, sft_steps=400, sft_batch=64, sft_lr=3e-3,
               rule_frac=0.25, rule_steps=150, rule_lr=1e-3, tries=8, rl_iters=60, rl_prompts=16, group=8,
               rl_lr=1e-3, clip=0.2, kl=0.02, epochs=2, temp=1.0, n_eval=4, test_frac=0.25, scope="safety")
    if smoke:
        cfg.update(SMOKE)
        print("smoke: tiny sizes (figures meaningless)")
    for kv in argv[2:]:
        k, v = kv.split("=")
        cfg[k] = type(cfg[k])(v)
    print(cfg)
    teacher = NS(refuse=0.03, refuse_security=0.3, buggy=0.15, insecure=0.2, insecure_tempting=0.7,
                 mal_refuse=0.6, mal_refuse_security=0.3)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    t0 = time.process_time()
    train, test = data.split_prompts(rng, cfg["test_frac"])
    o = orc.Oracle(("B404", "B403", "B603"))
    base_data = data.sft_set(train, cfg["per_prompt"], teacher, rng)
    pool = [p for p in train if cfg["scope"] == "all" or cl.is_malicious(p[0]) or cl.is_tempting(p)]
    k = int(round(cfg["rule_frac"] * len(pool)))
    rule_prompts = [pool[i] for i in sorted(rng.permutation(len(pool))[:k])]
    rule_data, info = data.rule_set(rule_prompts, teacher, o, rng, cfg["tries"], lambda v: orc.reward(v, "multi") == 1.0)
    safe_data, sinfo = data.rule_set(rule_prompts, teacher, o, rng, cfg["tries"], lambda v: orc.reward(v, "safety") == 1.0)
    print(sinfo)
    print("prepare", time.process_time() - t0, info, len(train), len(test))

    def evaluate(model, name):
        P = pol.encode_prompts([p for p in test for _ in range(cfg["n_eval"])])
        g = torch.Generator().manual_seed(1000 + seed)
        A, M = pol.sample(model, P, g)
        prompts = [p for p in test for _ in range(cfg["n_eval"])]
        vs = o.judge(prompts, pol.decode_answers(A, M))
        r = orc.rates(prompts, vs)
        print(f"{name:10s} " + " ".join(f"{k}={v:.3f}" for k, v in r.items()), flush=True)
        return r

    mc = dict(d_model=cfg["d_model"], layers=cfg["layers"], heads=cfg["heads"])
    t = time.process_time()
    base = pol.make_model(mc, seed)
    losses = pol.sft(base, base_data, cfg["sft_steps"], cfg["sft_batch"], cfg["sft_lr"], gen)
    print("base sft", time.process_time() - t, "s; loss", losses[0], np.mean(losses[-20:]), "steps/s", cfg["sft_steps"] / (time.process_time() - t))
    res = {"base": evaluate(base, "base")}
    import copy
    rule = copy.deepcopy(base)
    t = time.process_time()
    pol.sft(rule, rule_data, cfg["rule_steps"], cfg["sft_batch"], cfg["rule_lr"], gen)
    print("rule sft", time.process_time() - t)
    res["rule"] = evaluate(rule, "rule")
    srule = copy.deepcopy(base)
    pol.sft(srule, safe_data, cfg["rule_steps"], cfg["sft_batch"], cfg["rule_lr"], gen)
    res["srule"] = evaluate(srule, "safe-rule")
    rl = NS(iterations=cfg["rl_iters"], prompts=cfg["rl_prompts"], group=cfg["group"], lr=cfg["rl_lr"], clip=cfg["clip"],
            kl=cfg["kl"], epochs=cfg["epochs"], temperature=cfg["temp"])
    for kind, start in (("multi", rule), ("safety", srule), ("utility", base)):
        m = copy.deepcopy(start)
        t = time.process_time()
        h = pol.grpo(m, train, o, lambda v, kind=kind: orc.reward(v, kind), rl, gen)
        dt = time.process_time() - t
        print(f"rl {kind}: {dt:.1f}s ({rl.iterations / dt:.2f} it/s); reward {h[0]['reward']:.3f} -> {np.mean([x['reward'] for x in h[-5:]]):.3f}")
        res[kind] = evaluate(m, kind)
    print("total CPU", time.process_time() - t0, "bandit calls", o.bandit_calls, "sandbox", o.sandbox_calls, "cached", len(o.findings))
    b, p, s = res["base"], res["multi"], res["safety"]
    print("M1 insecure drop", b["insecure_rate"] - p["insecure_rate"], "| utility delta", p["pass_rate"] - b["pass_rate"],
          "| overrefusal delta", p["overrefusal"] - b["overrefusal"])
    print("safety-only: utility delta", s["pass_rate"] - b["pass_rate"], "overrefusal delta", s["overrefusal"] - b["overrefusal"])
    print("utility-only: insecure drop", b["insecure_rate"] - res["utility"]["insecure_rate"])


if __name__ == "__main__":
    main()
