"""What cdc_gs's pyfunc model (pyfunc.py) runs: reading the splats artifact, rendering rows."""
from __future__ import annotations


def load_splats(path: str) -> dict:
    """{(image, method): export dict} from the artifact train.save_model wrote."""
    import numpy as np

    out: dict = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            if key == "names":
                continue
            image, method, attr = key.split("|")
            out.setdefault((image, method), {})[attr] = z[key]
    return out


def render_rows(splats: dict, frame) -> list:
    """One rendered image (nested lists) per row of ``frame`` (columns image, method)."""
    from .splat import render_export

    missing = sorted({"image", "method"} - set(frame.columns))
    if missing:
        raise ValueError(f"cdc_gs-splats: the input needs the columns image and method; missing {missing}")
    out = []
    for image, method in zip(frame["image"], frame["method"]):
        if (image, method) not in splats:
            raise ValueError(f"cdc_gs-splats: no fit for image {image!r} and method {method!r}; "
                             f"fitted: {sorted(splats)}")
        out.append(render_export(splats[(image, method)])[..., 0].tolist())
    return out
