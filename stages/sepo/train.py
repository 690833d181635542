"""sepo train: pre-train the masked discrete diffusion model on the Markov sequences, then fine-tune
it towards the motif reward with SEPO (and, as a control, SEPO on shuffled rewards) and with
reward-weighted fine-tuning (RWFT) at each temperature. Every fine-tuned model's exact (KL to the
pre-trained model, mean reward) is computed from its exact output distribution; SEPO's at every
``eval_every`` steps (its curve), RWFT's at the end of each temperature (its curve).

Outputs: data/sepo/pretrained and data/sepo/sepo_model (MLflow pyfunc folders, logged and
registered), data/sepo/curves.json (the curves and the pre-trained distribution) and
reports/sepo/train.json.
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import CURVES, DATA, FINETUNED, PRETRAINED, TRAIN_METRICS


def main() -> None:
    with stage("sepo", "train", PARAMS) as ctx:
        import time

        import numpy as np
        import torch
        from tqdm import tqdm

        from stages.common.device import limit_threads
        from stages.common.io import write_json

        from .dd import all_sequences, exact_distribution, kl, markov_probs, motif_reward, sample, save_model
        from .runs import pretrain, rwft, sepo

        limit_threads()        # one thread: an MLP of 128 units gains nothing from two
        d = np.load(ctx.path(DATA))
        pp, p = ctx.params.prepare, ctx.params.train
        reward = lambda s: motif_reward(s, pp.motif, pp.partial_weight)  # noqa: E731
        r_all = reward(all_sequences(pp.length))
        cpu = {}

        t0 = time.process_time()
        pre, losses = pretrain(d["x"], p.pretrain.hidden, p.pretrain.layers, p.pretrain.steps, p.pretrain.batch,
                               p.pretrain.lr, ctx.seed * 1000 + 1, progress=True)
        cpu["pretrain_cpu_s"] = time.process_time() - t0
        ctx.run.log_curve("pretrain.loss", losses)
        p_pre = exact_distribution(pre)
        p_data = markov_probs(pp.length, d["start"], d["trans"])

        s = p.sepo
        kw = dict(steps=s.steps, groups=s.groups, group_size=s.group_size, inner=s.inner, lr=s.lr, clip=s.clip,
                  per_group=s.per_group, eval_every=s.eval_every, include_self=False, objective="score", progress=True)
        t0 = time.process_time()
        model, sepo_curve = sepo(pre, reward, p_pre, r_all, seed=ctx.seed * 1000 + 2, **kw)
        cpu["sepo_cpu_s"] = time.process_time() - t0
        _, control_curve = sepo(pre, reward, p_pre, r_all, seed=ctx.seed * 1000 + 2, shuffle=True, **kw)
        ctx.run.log_curve("sepo.exact_reward", [c["reward"] for c in sepo_curve])
        ctx.run.log_curve("sepo.exact_kl", [c["kl"] for c in sepo_curve])
        ctx.run.log_curve("control.exact_reward", [c["reward"] for c in control_curve])

        t0 = time.process_time()
        rp = p.rwft
        smp = sample(pre, rp.samples, torch.Generator().manual_seed(ctx.seed * 1000 + 3)).numpy()
        rs = reward(smp)
        rwft_curve = [{"temperature": None, "kl": 0.0, "reward": float(p_pre @ r_all)}]
        for tau in tqdm(rp.temperatures, desc="sepo: RWFT", mininterval=2):
            q = exact_distribution(rwft(pre, smp, rs, tau, steps=rp.steps, batch=rp.batch, lr=rp.lr,
                                        seed=ctx.seed * 1000 + 4))
            rwft_curve.append({"temperature": tau, "kl": kl(q, p_pre), "reward": float(q @ r_all)})
        cpu["rwft_cpu_s"] = time.process_time() - t0

        t0 = time.process_time()
        for target, m, name, metrics in ((PRETRAINED, pre, "pretrained", {"exact_mean_reward": sepo_curve[0]["reward"]}),
                                          (FINETUNED, model, "sepo", {"exact_mean_reward": sepo_curve[-1]["reward"],
                                                                       "exact_kl_to_pretrained": sepo_curve[-1]["kl"]})):
            save_model(ctx.path(target), m, name)
            ctx.run.log_model(ctx.path(target), f"sepo-{name}", params={"length": pp.length, **p.pretrain.model_dump(), **metrics})
        cpu["save_cpu_s"] = time.process_time() - t0
        ctx.run.log_metrics(cpu)      # timings vary run to run: MLflow only, not the metrics file

        write_json(ctx.path(CURVES), {"p_pre": p_pre.tolist(), "r_all": r_all.tolist(), "sepo": sepo_curve,
                                      "control": control_curve, "rwft": rwft_curve})
        write_json(ctx.path(TRAIN_METRICS), {
            "pretrain_loss_first": losses[0], "pretrain_loss_last100_mean": float(np.mean(losses[-100:])),
            "kl_data_to_pretrained": kl(p_data, p_pre), "pretrained_exact_sum": float(p_pre.sum()),
            "sepo_final": sepo_curve[-1], "control_final": control_curve[-1]})
        print(f"  pre-trained reward {sepo_curve[0]['reward']:.3f}; SEPO {sepo_curve[-1]['reward']:.3f} "
              f"(KL {sepo_curve[-1]['kl']:.2f}); control {control_curve[-1]['reward']:.3f}; CPU s "
              + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
