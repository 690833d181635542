"""Saving the dynarend policy as an MLflow pyfunc folder, loading it back, and its predict."""
from __future__ import annotations


def example_frame(scenes: dict, cams_in, n: int = 3):
    """The policy's input example: the first ``n`` scenes of ``scenes`` (a split of scenes.npz, as
    loops.load_split gives it) as the DataFrame :func:`predict_place` takes: each input camera's
    exact RGB-D view (a list of floats) and the instruction's colour ids ``a``, ``b`` (int64)."""
    import numpy as np
    import pandas as pd

    from .loops import views_of

    sub = {k: v[:n] for k, v in scenes.items()}
    views = views_of(sub, cams_in)["views"]
    frame = pd.DataFrame({f"view_{c}": [v.flatten().tolist() for v in views[c]] for c in cams_in})
    frame["a"], frame["b"] = sub["instr"][:, 0].astype(np.int64), sub["instr"][:, 1].astype(np.int64)
    return frame


def save_policy(target, state: dict, grid, p, example) -> None:
    """Write the policy (a fine-tuned Model state dict) as an MLflow pyfunc model folder at ``target``
    (atomically): ``weights.pt``, ``config.json`` (sizes) and ``pyfunc.py`` (models from code), with
    the input example ``example`` (:func:`example_frame`), from which MLflow infers its signature."""
    import io
    import json
    import tempfile
    from pathlib import Path

    import torch

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights, config = Path(scratch) / "weights.pt", Path(scratch) / "config.json"
        buf = io.BytesIO()
        torch.save(state, buf)
        weights.write_bytes(buf.getvalue())
        config.write_text(json.dumps({"grid": [grid.x, grid.y, grid.z], "channels": p.channels,
                                      "cams_in": list(p.cams_in)}, sort_keys=True, indent=1))
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights, "config": config},
                    input_example=example)


def load_policy(weights: str, config: str):
    """(model, config) from the files :func:`save_policy` wrote (weights loaded with weights_only)."""
    import json

    import torch

    from .loops import new_model
    from .world import Grid

    cfg = json.loads(open(config).read())
    model = new_model(Grid(*cfg["grid"]), cfg["channels"], cfg["cams_in"], 0)
    model.load_state_dict(torch.load(weights, weights_only=True))
    return model.eval(), cfg


def predict_place(model, cfg, frame) -> list:
    """The place voxel [x, y, z] for each row of a DataFrame with columns ``view_<camera>`` (the
    camera's RGB-D view, channel-major, flattened), ``a`` and ``b`` (colour ids of "put a on b")."""
    import numpy as np
    import torch

    from .loops import N_COLOURS
    from .nets import instr_onehot
    from .render import image_shape

    gx, gy, gz = cfg["grid"]
    need = [f"view_{c}" for c in cfg["cams_in"]] + ["a", "b"]
    missing = sorted(set(need) - set(frame.columns))
    if missing:
        raise ValueError(f"dyna_rend policy: the input needs the columns {need}; missing {missing}")
    views = []
    for c in cfg["cams_in"]:
        w, h = image_shape(c, gx, gy, gz)
        arr = np.stack([np.asarray(v, dtype=np.float32) for v in frame[f"view_{c}"]])
        if arr.shape[1] != 4 * w * h:
            raise ValueError(f"dyna_rend policy: view_{c} needs {4 * w * h} values (4 x {w} x {h}), got {arr.shape[1]}")
        views.append(torch.as_tensor(arr).reshape(-1, 4, w, h))
    instr = instr_onehot(torch.as_tensor(frame[["a", "b"]].to_numpy(dtype=np.int64)), N_COLOURS)
    with torch.no_grad():
        vis = [torch.ones_like(v[:, :1]) for v in views]
        flat = model.logits(views, vis, instr).argmax(1).numpy()
    return [[int(i // (gy * gz)), int(i // gz % gy), int(i % gz)] for i in flat]
