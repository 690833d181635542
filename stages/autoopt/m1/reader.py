"""One way to read images with a saved M1, whatever its design: ``load_reader(checkpoint)``
returns a reader whose ``read(grey images) -> LaTeX strings`` does greedy decoding (the page
design: the whole image fitted into the encoder's input; the line design: segmented lines, each
read by the CRNN, joined with ``\\\\``). The stages, the MLflow pyfunc model and ``solve`` use it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Reader:
    design: str
    model: Any
    vocab: Any
    max_width: int = 0

    def read(self, images: list[np.ndarray], device="cpu", batch: int = 64) -> list[str]:
        """Greedy LaTeX for grey uint8 images (white paper, dark ink)."""
        if self.design == "lines":
            from .line_model import split_lines

            per_image = split_lines(images, self.model.cfg.height, self.max_width)
            return self.read_lines(per_image, device, batch)
        import torch

        from ..data.render import to_input

        cfg = self.model.cfg
        out: list[str] = []
        for s in range(0, len(images), batch):
            x = torch.from_numpy(np.stack([to_input(a, cfg.height, cfg.width) for a in images[s:s + batch]]))
            ids = self.model.greedy(x.unsqueeze(1).to(device), self.vocab.bos, self.vocab.eos, cfg.max_len)
            out += [self.vocab.decode(i) for i in ids]
        return out

    def read_lines(self, per_image: list[list[np.ndarray]], device="cpu", batch: int = 64) -> list[str]:
        from .line_model import recognise

        return recognise(self.model, self.vocab, per_image, device, batch)


def load_reader(path, device="cpu") -> Reader:
    import torch

    from ..tokenizer import Vocab

    blob = torch.load(path, map_location=device, weights_only=True)
    design = blob.get("extra", {}).get("design", "page")
    if design == "lines":
        from .crnn import load_crnn

        model = load_crnn(blob, device)
        return Reader("lines", model, Vocab(list(blob["vocab"])), int(model.cfg.max_width))
    from .model import load_checkpoint

    model, vocab = load_checkpoint(path, device)
    return Reader("page", model, vocab)
