"""The small transformer that stands in for the 7B LLM, its SFT loss, decoding and the FOARL step.

An encoder reads the description tokens once; a causal decoder writes the solution tokens over the
whole vocabulary (numbers and words: no pointer head, no feasibility mask), attending to the
encoder's states. SFT is teacher forcing on the solver's solution. FOARL follows the official code's
GRPO (``rl_train.py``: G samples per prompt, group-normalised advantages, a KL penalty to the SFT
model with beta 0.05, one policy update per batch so the PPO ratio is 1 and clipping is inert):
loss = -mean_t[A * log pi(a_t)] + beta * mean_t[k3(pi, pi_ref)].
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .problems import EOS, NUM, PAD, SOL, VOCAB


class Block(nn.Module):
    def __init__(self, d: int, heads: int, cross: bool, rope: bool = False):
        super().__init__()
        self.heads, self.rope = heads, rope
        self.ln1, self.qkv, self.o1 = nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.cross = cross
        if cross:
            self.ln2, self.q2, self.kv2, self.o2 = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(d, 2 * d), nn.Linear(d, d)
        self.ln3 = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def _split(self, x):
        b, t, d = x.shape
        return x.view(b, t, self.heads, d // self.heads).transpose(1, 2)

    def _merge(self, x):
        b, h, t, e = x.shape
        return x.transpose(1, 2).reshape(b, t, h * e)

    def forward(self, x, causal: bool, key_pad=None, mem=None, mem_pad=None):
        q, k, v = self._split_qkv(self.ln1(x))
        if self.rope:
            q, k = rotary(q), rotary(k)
        mask = None if key_pad is None else ~key_pad[:, None, None, :]
        x = x + self.o1(self._merge(F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal and mask is None)))
        if self.cross:
            q = self._split(self.q2(self.ln2(x)))
            k, v = (self._split(t) for t in self.kv2(mem).chunk(2, -1))
            mask = None if mem_pad is None else ~mem_pad[:, None, None, :]
            x = x + self.o2(self._merge(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)))
        return x + self.ff(self.ln3(x))

    def _split_qkv(self, x):
        return (self._split(t) for t in self.qkv(x).chunk(3, -1))


def rotary(x, base: float = 100.0):
    """Rotary position embedding of (b, h, t, e) queries or keys: attention scores then depend on
    relative offsets (e.g. "the token two to the right"), the same for every city's block."""
    t, e = x.shape[-2], x.shape[-1]
    inv = base ** (-torch.arange(0, e, 2, device=x.device, dtype=torch.float) / e)
    ang = torch.arange(t, device=x.device, dtype=torch.float)[:, None] * inv[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1).flatten(-2)


def number_features(tokens, freqs: int = 8):
    """Fixed sinusoidal features of a number token's value (zeros for word tokens): the from-scratch
    stand-in's substitute for the number sense a pre-trained LLM brings (periods 4 .. 1024)."""
    is_num = (tokens < NUM).float()[..., None]
    v = tokens.clamp(max=NUM - 1).float()[..., None]
    w = 2 * torch.pi / (4.0 * 2.0 ** torch.arange(freqs, device=tokens.device, dtype=torch.float))
    return torch.cat([torch.sin(v * w), torch.cos(v * w)], -1) * is_num


class Seq2Seq(nn.Module):
    """Encoder-decoder transformer over the shared token vocabulary; a number token's embedding is
    its learned row plus a learned projection of fixed features of its value."""

    def __init__(self, d: int = 128, heads: int = 4, enc_layers: int = 3, dec_layers: int = 2, max_len: int = 256,
                 rope: bool = False, shift: bool = False, small_init: bool = False):
        super().__init__()
        self.rope, self.shift = rope, shift
        self.emb = nn.Embedding(VOCAB, d)
        if shift:
            self.prev = nn.Embedding(VOCAB, d)
        self.num = nn.Linear(16, d)
        self.pos_enc = nn.Embedding(max_len, d)
        self.pos_dec = nn.Embedding(max_len, d)
        self.enc = nn.ModuleList(Block(d, heads, cross=False, rope=rope) for _ in range(enc_layers))
        self.dec = nn.ModuleList(Block(d, heads, cross=True, rope=rope) for _ in range(dec_layers))
        self.ln_e, self.ln_d = nn.LayerNorm(d), nn.LayerNorm(d)
        self.head = nn.Linear(d, VOCAB)
        if small_init:   # GPT-style 0.02: a number's value features are not drowned by its random row
            for e in (self.emb, self.pos_enc, self.pos_dec) + ((self.prev,) if shift else ()):
                nn.init.normal_(e.weight, std=0.02)

    def _embed(self, tokens):
        x = self.emb(tokens) + self.num(number_features(tokens))
        if self.shift:   # the previous token's own embedding table: "a number after '('" is an x
            x = x + self.prev(torch.cat([torch.full_like(tokens[:, :1], PAD), tokens[:, :-1]], 1))
        return x

    def encode(self, src):
        pad = src == PAD
        x = self._embed(src)
        if not self.rope:
            x = x + self.pos_enc(torch.arange(src.shape[1], device=src.device))
        for b in self.enc:
            x = b(x, causal=False, key_pad=pad)
        return self.ln_e(x), pad

    def decode(self, tgt_in, mem, mem_pad):
        x = self._embed(tgt_in)
        if not self.rope:
            x = x + self.pos_dec(torch.arange(tgt_in.shape[1], device=tgt_in.device))
        for b in self.dec:
            x = b(x, causal=True, mem=mem, mem_pad=mem_pad)
        return self.head(self.ln_d(x))

    def forward(self, src, tgt_in):
        mem, pad = self.encode(src)
        return self.decode(tgt_in, mem, pad)


def shift_right(tgt):
    """Decoder input: SOL then the target without its last token."""
    return torch.cat([torch.full_like(tgt[:, :1], SOL), tgt[:, :-1]], 1)


def sft_loss(model, src, tgt):
    """Teacher-forced cross-entropy on the solution tokens (PAD ignored)."""
    logits = model(src, shift_right(tgt))
    return F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)


@torch.no_grad()
def generate(model, src, max_len: int, greedy: bool, generator=None, temperature: float = 1.0):
    """Write up to ``max_len`` tokens per row (greedy or sampled), stopping rows at EOS; the rest is PAD."""
    mem, pad = model.encode(src)
    b = src.shape[0]
    sol = torch.full((b, 1), SOL, dtype=torch.long, device=src.device)
    out = sol[:, :0]
    done = torch.zeros(b, dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        logits = model.decode(torch.cat([sol, out], 1), mem, pad)[:, -1]
        if greedy:
            nxt = logits.argmax(-1)
        else:
            probs = torch.softmax(logits / temperature, -1)
            nxt = torch.multinomial(probs, 1, generator=generator).squeeze(1)
        nxt = torch.where(done, torch.full_like(nxt, PAD), nxt)
        out = torch.cat([out, nxt[:, None]], 1)
        done |= nxt == EOS
        if bool(done.all()):
            break
    return out


def seq_logprobs(model, src, seq):
    """Per-token log pi(seq_t | src, seq_<t), and the mask of real tokens (through the first EOS)."""
    logits = model(src, shift_right(seq))
    logp = torch.log_softmax(logits, -1).gather(-1, seq.clamp(max=VOCAB - 1)[..., None]).squeeze(-1)
    return logp, seq != PAD


def grpo_loss(model, ref, src, seq, rewards, group: int, beta: float):
    """GRPO loss for ``group`` samples per prompt (rows grouped consecutively)."""
    r = rewards.view(-1, group)
    adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)
    logp, mask = seq_logprobs(model, src, seq)
    with torch.no_grad():
        ref_logp, _ = seq_logprobs(ref, src, seq)
    kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1.0
    per_tok = -(adv[:, None] * logp) + beta * kl
    m = mask.float()
    loss = ((per_tok * m).sum(1) / m.sum(1).clamp(min=1)).mean()
    return loss, float((kl.detach() * m).sum() / m.sum())
