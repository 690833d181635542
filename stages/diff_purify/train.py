"""diff_purify train: the classifier, the score prior and the adversarial-perturbation score.

1. an MLP classifier on the training digits (Adam, cross-entropy);
2. the image prior: a noise-prediction MLP trained by denoising score matching on clean digits;
3. adversarial examples of the training set: PGD on the classifier at each radius of
   ``train.pert_eps`` (the paper's gen_adv_ex.py does this with AutoAttack at 2, 4, 8/255);
4. the perturbation score: the same kind of network trained on delta = x_adv - x of those examples
   and on zeros for the clean images (the paper's train_sc_diff_j.py mixes clean images in);
5. the control (``train.control``): a perturbation score trained on random sign noise of the same
   radii instead (the calibration's ablation of adversary awareness).

Outputs: data/diff_purify/weights.pt (every network's weights and sizes), data/diff_purify/model
(AAOpt purify-then-classify as an MLflow pyfunc model, registered) and reports/diff_purify/train.json.
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


def main() -> None:
    with stage("diff_purify", "train", PARAMS) as ctx:
        import io
        import json
        import time

        import numpy as np
        import torch

        from stages.common.device import limit_threads
        from stages.common.io import write_bytes, write_json, write_text
        from stages.common.mlmodel import save_pyfunc

        from .core import train_classifier, train_score

        limit_threads()        # one thread: small MLPs gain nothing from a second (shared) core
        d = np.load(ctx.path(DIGITS))
        p = ctx.params.train
        cpu = {}
        t0 = time.process_time()
        clf, clf_losses = train_classifier(d["x_train"], d["y_train"], p.clf_hidden, p.clf_steps, p.lr, p.batch,
                                           ctx.seed * 1000 + 1)
        cpu["classifier"] = time.process_time() - t0
        t0 = time.process_time()
        prior, prior_losses = train_score(d["x_train"], p.score_hidden, p.score_steps, p.lr, p.batch,
                                          *p.prior_sigmas, ctx.seed * 1000 + 2)
        cpu["prior"] = time.process_time() - t0
        x, y = torch.as_tensor(d["x_train"]), torch.as_tensor(d["y_train"])
        g = torch.Generator().manual_seed(ctx.seed * 1000 + 3)
        t0 = time.process_time()
        deltas = adversarial_deltas(clf, x, y, p.pert_eps, p.pert_pgd_steps, g)
        pert, pert_losses = train_score(deltas.numpy(), p.score_hidden, p.score_steps, p.lr, p.batch,
                                        *p.pert_sigmas, ctx.seed * 1000 + 4)
        cpu["perturbation"] = time.process_time() - t0
        nets = {"classifier": clf.state_dict(), "prior": prior.state_dict(), "pert": pert.state_dict()}
        if p.control:
            t0 = time.process_time()
            noise = random_sign_deltas(tuple(x.shape), p.pert_eps, g)
            pert_noise, _ = train_score(noise.numpy(), p.score_hidden, p.score_steps, p.lr, p.batch,
                                        *p.pert_sigmas, ctx.seed * 1000 + 4)
            nets["pert_noise"] = pert_noise.state_dict()
            cpu["control"] = time.process_time() - t0
        config = {"clf_hidden": p.clf_hidden, "score_hidden": p.score_hidden,
                  "purify": ctx.params.purify.model_dump(), "seed": ctx.seed}
        buf = io.BytesIO()
        torch.save({"config": config, "nets": nets}, buf)
        write_bytes(ctx.path(WEIGHTS), buf.getvalue())

        cfg_path = ctx.path("data/diff_purify/.model_config.json")
        write_text(cfg_path, json.dumps(config))
        save_pyfunc(ctx.path(MODEL), ctx.path("stages/diff_purify/pyfunc.py"),
                    {"weights": ctx.path(WEIGHTS), "config": cfg_path})
        cfg_path.unlink()
        ctx.run.log_model(ctx.path(MODEL), "aaopt", params={"rows": int(len(x)), **p.model_dump()})
        for name, losses in (("classifier", clf_losses), ("prior", prior_losses), ("pert", pert_losses)):
            ctx.run.log_curve(f"train.{name}_loss", losses)
        ctx.run.log_metrics({f"cpu_s.{k}": v for k, v in cpu.items()})   # timings: MLflow only
        with torch.no_grad():
            train_acc = float((clf(x).argmax(1) == y).float().mean())
        adv = deltas[len(x):]
        write_json(ctx.path(TRAIN_METRICS), {
            "classifier_train_accuracy": train_acc,
            "classifier_loss_last100": float(np.mean(clf_losses[-100:])),
            "prior_dsm_loss_last100": float(np.mean(prior_losses[-100:])),
            "pert_dsm_loss_last100": float(np.mean(pert_losses[-100:])),
            "adv_delta_mean_abs": float(adv.abs().mean()), "adv_delta_rows": int(len(adv))})
        print(f"  classifier train acc {train_acc:.3f}; DSM loss prior {np.mean(prior_losses[-100:]):.3f}, "
              f"perturbation {np.mean(pert_losses[-100:]):.3f}; CPU s: "
              + ", ".join(f"{k} {v:.1f}" for k, v in cpu.items()), flush=True)


if __name__ == "__main__":
    main()
