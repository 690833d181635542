"""diff_purify train: the classifier, the score prior and the adversarial-perturbation score.

1. an MLP classifier on the training digits (Adam, cross-entropy);
2. the image prior: a noise-prediction MLP trained by denoising score matching on clean digits;
3. adversarial examples of the training set: PGD on the classifier at each radius of
   ``train.pert_eps`` (the paper's gen_adv_ex.py does this with AutoAttack at 2, 4, 8/255);
4. the perturbation score: the same kind of network trained on delta = x_adv - x of those examples
   and on zeros for the clean images (the paper's train_sc_diff_j.py mixes clean images in);
5. the control (``train.control``): a perturbation score trained on random sign noise of the same
   radii instead (the calibration's ablation of adversary awareness).

Every verdict seed (``ctx.seeds``) trains its own networks on its own split; the seeds' networks
are trained together as batched models with a model dimension (``train_seeds``), each the same bit
for bit as trained alone (benchmarks/diff_purify/seeds.py measures the two ways: README,
"Calibration").

Outputs: data/diff_purify/weights.pt (every seed's networks and their sizes), data/diff_purify/model
(AAOpt purify-then-classify with the first seed's networks, as an MLflow pyfunc model, registered) and
reports/diff_purify/train.json (per seed).
"""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import DIGITS, MODEL, TRAIN_METRICS, WEIGHTS


def adversarial_deltas(clf, x, y, eps_list, steps: int, generator):
    """Zeros (the clean images) followed by x_adv - x of L_inf PGD (step eps / 4) at each radius."""
    import torch

    from .core import pgd

    out = [torch.zeros_like(x)]
    for eps in eps_list:
        out.append(pgd(clf, x, y, eps, eps / 4, steps, generator) - x)
    return torch.cat(out)


def random_sign_deltas(shape, eps_list, generator):
    """The control's data: zeros followed by eps * random signs at each radius (same counts)."""
    import torch

    out = [torch.zeros(shape)]
    for eps in eps_list:
        out.append(eps * (2 * torch.randint(0, 2, shape, generator=generator).float() - 1))
    return torch.cat(out)


def train_seeds(splits: dict, p, log=print) -> tuple[dict, dict]:
    """Every seed's networks (``splits``: seed -> (x_train, y_train); ``p``: the train step's
    params), trained as batched models with a leading model dimension (batched.train_classifiers,
    batched.train_scores: the classifiers of all seeds in one, then every seed's score prior,
    perturbation score and control in one), each exactly the network it gets trained alone:
    every draw comes from generators seeded by its seed. Returns ({seed: {"nets", "losses",
    "metrics"}}, CPU seconds per part for all seeds)."""
    import time

    import numpy as np
    import torch

    from .batched import train_classifiers, train_scores

    seeds = list(splits)
    cpu = {}
    t0 = time.process_time()
    clfs, clf_losses = train_classifiers([splits[s][0] for s in seeds], [splits[s][1] for s in seeds], p.clf_hidden,
                                         p.clf_steps, p.lr, p.batch, [s * 1000 + 1 for s in seeds])
    cpu["classifier"] = time.process_time() - t0
    log(f"    classifiers of seeds {seeds}: {cpu['classifier']:.1f} CPU s")
    t0 = time.process_time()
    jobs = []                 # (seed, name, data, (sigma_min, sigma_max), seed of its init and draws)
    deltas = {}
    for s, clf in zip(seeds, clfs):
        x, y = torch.as_tensor(splits[s][0]), torch.as_tensor(splits[s][1])
        g = torch.Generator().manual_seed(s * 1000 + 3)
        deltas[s] = adversarial_deltas(clf, x, y, p.pert_eps, p.pert_pgd_steps, g)
        jobs += [(s, "prior", splits[s][0], tuple(p.prior_sigmas), s * 1000 + 2),
                 (s, "pert", deltas[s].numpy(), tuple(p.pert_sigmas), s * 1000 + 4)]
        if p.control:
            noise = random_sign_deltas(tuple(x.shape), p.pert_eps, g)
            jobs.append((s, "pert_noise", noise.numpy(), tuple(p.pert_sigmas), s * 1000 + 4))
    cpu["perturbation_data"] = time.process_time() - t0
    log(f"    PGD perturbations of the training digits: {cpu['perturbation_data']:.1f} CPU s")
    t0 = time.process_time()
    nets, losses = train_scores([j[2] for j in jobs], p.score_hidden, p.score_steps, p.lr, p.batch,
                                [j[3] for j in jobs], [j[4] for j in jobs])
    cpu["scores"] = time.process_time() - t0
    log(f"    {len(jobs)} score networks ({len(jobs) // len(seeds)} a seed): {cpu['scores']:.1f} CPU s")
    out = {s: {"nets": {"classifier": clf}, "losses": {"classifier": cl}} for s, clf, cl in zip(seeds, clfs, clf_losses)}
    for (s, name, *_), net, ls in zip(jobs, nets, losses):
        out[s]["nets"][name] = net
        out[s]["losses"][name] = ls
    for s in seeds:
        r, (x, y) = out[s], (torch.as_tensor(splits[s][0]), torch.as_tensor(splits[s][1]))
        with torch.no_grad():
            train_acc = float((r["nets"]["classifier"](x).argmax(1) == y).float().mean())
        adv = deltas[s][len(x):]
        r["metrics"] = {"classifier_train_accuracy": train_acc,
                        "classifier_loss_last100": float(np.mean(r["losses"]["classifier"][-100:])),
                        "prior_dsm_loss_last100": float(np.mean(r["losses"]["prior"][-100:])),
                        "pert_dsm_loss_last100": float(np.mean(r["losses"]["pert"][-100:])),
                        "adv_delta_mean_abs": float(adv.abs().mean()), "adv_delta_rows": int(len(adv))}
        if p.control:
            r["metrics"]["control_dsm_loss_last100"] = float(np.mean(r["losses"]["pert_noise"][-100:]))
    return out, cpu


def main() -> None:
    with stage("diff_purify", "train", PARAMS) as ctx:
        import io
        import json

        import numpy as np
        import pandas as pd
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json, write_text
        from stages.common.mlmodel import save_pyfunc
        from stages.common.seeds import per_seed_metrics

        from .core import D_IN
        from .data import seed_split

        limit_threads()        # one thread: small MLPs gain nothing from a second (shared) core
        d = np.load(ctx.path(DIGITS))
        p = ctx.params.train

        out, cpu = train_seeds({s: seed_split(d, s)[:2] for s in ctx.seeds}, p)
        model_seed = ctx.seeds[0]
        config = {"clf_hidden": p.clf_hidden, "score_hidden": p.score_hidden,
                  "purify": ctx.params.purify.model_dump(), "seeds": list(ctx.seeds), "model_seed": model_seed}
        state = {str(s): {k: net.state_dict() for k, net in r["nets"].items()} for s, r in out.items()}
        buf = io.BytesIO()
        torch.save({"config": config, "nets": state}, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())

        # the registered model: AAOpt with the first seed's networks (its weights alone)
        model_cfg = {**config, "seeds": [model_seed]}
        buf = io.BytesIO()
        torch.save({"config": model_cfg, "nets": {str(model_seed): state[str(model_seed)]}}, buf)
        w_path, cfg_path = ctx.path("data/diff_purify/.model_weights.pt"), ctx.path("data/diff_purify/.model_config.json")
        write_bytes(w_path, buf.getvalue())
        write_text(cfg_path, json.dumps(model_cfg))
        # its input example: the first three test digits of the model's seed, as float64 (the
        # signature's double then takes float32 and float64 pixels alike; float would refuse float64)
        example = pd.DataFrame(seed_split(d, model_seed)[2][:3].astype(np.float64), columns=[f"p{i}" for i in range(D_IN)])
        save_pyfunc(ctx.path(MODEL), ctx.path("stages/diff_purify/pyfunc.py"), {"weights": w_path, "config": cfg_path},
                    input_example=example)
        w_path.unlink()
        cfg_path.unlink()
        ctx.run.log_model(ctx.path(MODEL), "aaopt", params={"rows": int(len(seed_split(d, model_seed)[0])),
                                                            "seed": model_seed, **p.model_dump()})
        for s, r in out.items():     # every 10th step of each loss curve
            for name, losses in r["losses"].items():
                ctx.run.log_curve(f"train.seed{s}.{name}_loss", losses[::10], range(0, len(losses), 10))
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})
        write_json(ctx.path(TRAIN_METRICS), per_seed_metrics({s: r["metrics"] for s, r in out.items()}))
        for s, r in out.items():
            m = r["metrics"]
            print(f"  seed {s}: classifier train acc {m['classifier_train_accuracy']:.3f}; DSM loss prior "
                  f"{m['prior_dsm_loss_last100']:.3f}, perturbation {m['pert_dsm_loss_last100']:.3f}", flush=True)
        print("  CPU s (all seeds): " + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
