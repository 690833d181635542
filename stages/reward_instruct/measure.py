"""What the judge says of a set of generated digits: accuracy and mean log-probability of the
asked class (the held-out reward), the Fréchet distance of its penultimate features to the real
digits' (the quality bound, through stages.common.samples) and the per-class diversity."""
from __future__ import annotations


def judge_metrics(judge, x, c, real_feats) -> dict:
    """x (N, 64) generated images of classes c (N,); ``real_feats``: the judge's features of the
    real digits (numpy). Returns accuracy, logp, fd, diversity (mean over classes of the mean
    pairwise pixel distance within the class)."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    from stages.common.samples import frechet_from_features, mean_pairwise_distance

    x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
    c = torch.as_tensor(np.asarray(c), dtype=torch.long)
    with torch.no_grad():
        logits = judge(x)
        feats = judge[:-1](x).double().numpy()
    logp = F.log_softmax(logits, 1).gather(1, c[:, None])
    xn, cn = x.double().numpy(), c.numpy()
    div = [mean_pairwise_distance(xn[cn == k]) for k in np.unique(cn) if (cn == k).sum() >= 2]
    return {"accuracy": float((logits.argmax(1) == c).float().mean()), "logp": float(logp.mean()),
            "fd": frechet_from_features(feats, real_feats), "diversity": float(np.mean(div))}
