"""M1's line recogniser: a CRNN (convolutions, then a bidirectional LSTM along the line) trained
with CTC, decoded greedily (best class per frame, repeats collapsed, blanks dropped).

A line crop (ink, ``height`` rows, any width) goes through four convolution blocks (two strided,
two followed by a height-only max-pool) that halve the height four times and the width twice, so a column of features covers 4 input columns; each
column emits ``subframes`` CTC frames (a linear layer to subframes x classes, reshaped), which
leaves room for LaTeX tokens that take little or no width (``_ { 1 }``, ``^ { 2 }``). Class 0 is
the CTC blank, which is also the vocabulary's ``<pad>`` (never a target).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

BLANK = 0
WIDTH_STRIDE = 4     # input columns per feature column


@dataclass(frozen=True)
class CRNNConfig:
    vocab_size: int
    height: int = 32
    channels: tuple[int, ...] = (32, 64, 128, 128)
    hidden: int = 128            # LSTM units per direction
    rnn_layers: int = 2
    subframes: int = 2           # CTC frames per feature column
    dropout: float = 0.1
    max_width: int = 2400        # widest line crop (pixels after scaling to ``height``)

    def __post_init__(self) -> None:
        if len(self.channels) != 4:
            raise ValueError(f"channels: four convolution widths are needed, got {list(self.channels)}")
        if self.height % 16:
            raise ValueError(f"height must be a multiple of 16, got {self.height}")
        if self.subframes < 1:
            raise ValueError(f"subframes must be >= 1, got {self.subframes}")


def _block(c_in: int, c_out: int, stride: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(c_out),
            nn.ReLU(inplace=True)]


class CRNN(nn.Module):
    def __init__(self, cfg: CRNNConfig):
        super().__init__()
        self.cfg = cfg
        c = cfg.channels
        # strided first convolutions: a 3x3 convolution + max-pool at full resolution cost 2.5x
        # more CPU time a step for the same output grid (measured on 32 x 224 lines)
        self.conv = nn.Sequential(
            *_block(1, c[0], 2),                                   # H/2, W/2
            *_block(c[0], c[1], 2),                                # H/4, W/4
            *_block(c[1], c[2]), nn.MaxPool2d((2, 1), (2, 1)),     # H/8
            *_block(c[2], c[3]), nn.MaxPool2d((2, 1), (2, 1)),     # H/16
        )
        feat = c[3] * (cfg.height // 16)
        self.proj = nn.Linear(feat, 2 * cfg.hidden)
        self.rnn = nn.LSTM(2 * cfg.hidden, cfg.hidden, num_layers=cfg.rnn_layers, bidirectional=True,
                           batch_first=True, dropout=cfg.dropout if cfg.rnn_layers > 1 else 0.0)
        self.drop = nn.Dropout(cfg.dropout)
        self.out = nn.Linear(2 * cfg.hidden, cfg.subframes * cfg.vocab_size)

    def frames(self, widths: torch.Tensor) -> torch.Tensor:
        """CTC frames of lines ``widths`` pixels wide."""
        return ((widths + WIDTH_STRIDE - 1) // WIDTH_STRIDE) * self.cfg.subframes

    def forward(self, images: torch.Tensor, widths: torch.Tensor) -> torch.Tensor:
        """images (B, 1, height, W) with W a multiple of 4, right-padded with 0 (no ink); widths
        (B,) the true widths -> log-probabilities (B, T, classes), T = W / 4 x subframes; frames past
        a line's own count are padding."""
        f = self.conv(images)                                   # (B, C, H/16, W/4)
        b, ch, h, w = f.shape
        f = self.drop(torch.relu(self.proj(f.permute(0, 3, 1, 2).reshape(b, w, ch * h))))
        cols = ((widths + WIDTH_STRIDE - 1) // WIDTH_STRIDE).clamp(1, w).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(f, cols, batch_first=True, enforce_sorted=False)
        f, _ = self.rnn(packed)
        f, _ = nn.utils.rnn.pad_packed_sequence(f, batch_first=True, total_length=w)
        logits = self.out(self.drop(f)).view(b, w * self.cfg.subframes, self.cfg.vocab_size)
        return torch.log_softmax(logits, -1)

    @torch.no_grad()
    def greedy(self, images: torch.Tensor, widths: torch.Tensor) -> list[list[int]]:
        logp = self(images, widths)
        return ctc_greedy(logp.argmax(-1).tolist(), self.frames(widths).tolist())


def ctc_greedy(best: list[list[int]], lengths: list[int] | None = None, blank: int = BLANK) -> list[list[int]]:
    """Greedy CTC decoding of per-frame best classes: within each sequence's first ``lengths``
    frames, collapse runs of the same class, then drop blanks (``[a, a, 0, a, b, b]`` -> ``[a, a, b]``)."""
    out = []
    for k, seq in enumerate(best):
        n = len(seq) if lengths is None else min(int(lengths[k]), len(seq))
        ids, prev = [], None
        for c in seq[:n]:
            if c != prev and c != blank:
                ids.append(int(c))
            prev = c
        out.append(ids)
    return out


def min_frames(target: list[int]) -> int:
    """The fewest CTC frames that can emit ``target``: one a token, plus a blank between two equal
    neighbours."""
    return len(target) + sum(1 for a, b in zip(target, target[1:]) if a == b)


def batch_images(lines: list, height: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Stack line crops (float arrays, ``height`` rows, any width) into (B, 1, height, W), W the
    widest rounded up to a multiple of 4, zero padded on the right, and their widths."""
    import numpy as np

    widths = [a.shape[1] for a in lines]
    w = -(-max(widths) // WIDTH_STRIDE) * WIDTH_STRIDE
    out = np.zeros((len(lines), 1, height, w), dtype=np.float32)
    for k, a in enumerate(lines):
        out[k, 0, :, :a.shape[1]] = a
    return torch.from_numpy(out), torch.tensor(widths, dtype=torch.long)


def load_crnn(blob: dict, device="cpu") -> CRNN:
    cfg = CRNNConfig(**{k: (tuple(v) if isinstance(v, list) else v) for k, v in blob["config"].items()})
    model = CRNN(cfg).to(device)
    model.load_state_dict(blob["state_dict"])
    model.eval()
    return model
