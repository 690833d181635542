"""The small transformer that stands in for the 7B LLM, its SFT loss, decoding and the FOARL step.

An encoder reads the description tokens once; a causal decoder writes the solution tokens over the
whole vocabulary (numbers and words, no feasibility mask), attending to the encoder's states. SFT is
teacher forcing on the solver's solution. FOARL follows the official code's GRPO (``rl_train.py``:
G samples per prompt, group-normalised advantages, a KL penalty to the SFT model with beta 0.05,
one policy update per batch so the PPO ratio is 1 and clipping is inert):
loss = -mean_t[A * log pi(a_t)] + beta * mean_t[k3(pi, pi_ref)].

Two options (``entities``, ``pointer``; both on in the default profile) give the from-scratch model
what a pre-trained LLM brings for looking things up in its prompt, read from the text's own
punctuation (an entity, a city or an item, is the ``label ( x , y ) ;`` after ``:`` or ``;``):

* **entity states**: an entity's seven encoder states, side by side, projected to one state; it is
  added to the memory of the entity's tokens, and to the decoder's input wherever the decoder
  writes the entity's label (so the decoder knows the coordinates of the node it just wrote);
* **pointer term**: each label token's logit gets the match (a scaled dot product) of the decoder
  state with that entity's state: the copy mechanism of pointer-generator networks. The decoder
  still writes over the whole vocabulary, unmasked.

Without them the model learns to write valid permutations and nothing of the geometry (its TSP-10
tours are as long as random ones: README, Calibration).
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .problems import EOS, NUM, PAD, SOL, TOK, VOCAB

ENTITY_OPENERS = (TOK[":"], TOK[";"])   # an entity (a city, an item) starts at the number after these
ENTITY_SLOTS = 7                        # an entity's tokens: label ( x , y ) ;


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

    def step(self, x, cache: dict, mem, mem_pad):
        """One new decoder position ``x`` (b, 1, d) given the keys and values of the earlier ones
        in ``cache`` (extended here); the cross-attention's keys and values are computed once."""
        q, k, v = self._split_qkv(self.ln1(x))
        cache["k"] = k if "k" not in cache else torch.cat([cache["k"], k], 2)
        cache["v"] = v if "v" not in cache else torch.cat([cache["v"], v], 2)
        x = x + self.o1(self._merge(F.scaled_dot_product_attention(q, cache["k"], cache["v"])))
        if "ck" not in cache:
            cache["ck"], cache["cv"] = (self._split(t) for t in self.kv2(mem).chunk(2, -1))
            cache["mask"] = None if mem_pad is None else ~mem_pad[:, None, None, :]
        q = self._split(self.q2(self.ln2(x)))
        x = x + self.o2(self._merge(F.scaled_dot_product_attention(q, cache["ck"], cache["cv"], attn_mask=cache["mask"])))
        return x + self.ff(self.ln3(x))


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


def entity_tables(src):
    """The description's entities (a city's or an item's tokens, from its label to its ``;``),
    read from the text's punctuation alone: an entity starts at a number token that follows ``:``
    or ``;``. Returns ``member`` (b, E, t), 1 where token t belongs to entity e; ``slots``
    (b, E, ENTITY_SLOTS), the positions of entity e's first ENTITY_SLOTS tokens (t, one past the
    end, where it has fewer); ``labels`` (b, E), each entity's label token (PAD where a row has
    fewer entities)."""
    b, t = src.shape
    prev = torch.cat([torch.full_like(src[:, :1], PAD), src[:, :-1]], 1)
    start = (src < NUM) & ((prev == ENTITY_OPENERS[0]) | (prev == ENTITY_OPENERS[1]))
    seg = start.long().cumsum(1) - 1                                       # -1 before the first entity
    inside = (seg >= 0) & (src != PAD) & (src != SOL)
    n_ent = max(int(start.sum(1).max()), 1)
    member = (seg[:, None, :] == torch.arange(n_ent, device=src.device)[None, :, None]) & inside[:, None, :]
    labels = torch.full((b, n_ent), PAD, dtype=torch.long, device=src.device)
    rows, cols = start.nonzero(as_tuple=True)
    labels[rows, seg[rows, cols]] = src[rows, cols]
    first = torch.full((b, n_ent), t, dtype=torch.long, device=src.device)
    first[rows, seg[rows, cols]] = cols
    slots = first[:, :, None] + torch.arange(ENTITY_SLOTS, device=src.device)
    ok = (slots < t) & member.gather(2, slots.clamp(max=t - 1))          # the slot is inside entity e
    return member.float(), torch.where(ok, slots, torch.full_like(slots, t)), labels


class Seq2Seq(nn.Module):
    """Encoder-decoder transformer over the shared token vocabulary; a number token's embedding is
    its learned row plus a learned projection of fixed features of its value. ``entities`` and
    ``pointer``: see the module docstring; ``rope``, ``shift`` and ``small_init`` are the variants
    benchmarks/llm_co_foarl/tsp_diagnosis.py tried (off in every profile)."""

    def __init__(self, d: int = 128, heads: int = 4, enc_layers: int = 3, dec_layers: int = 2, max_len: int = 256,
                 rope: bool = False, shift: bool = False, small_init: bool = False, entities: bool = False,
                 pointer: bool = False):
        super().__init__()
        if pointer and not entities:
            raise ValueError("the pointer term needs the entity states (entities=True)")
        self.rope, self.shift, self.entities, self.pointer = rope, shift, entities, pointer
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
        if entities:   # an entity's state: its tokens' encoder states, one weight block per offset
            self.ent_slot = nn.Linear(ENTITY_SLOTS * d, d)
            self.ent_mem, self.ent_in = nn.Linear(d, d), nn.Linear(d, d)
        if pointer:    # a label's logit gets the match of the decoder state with its entity's state
            self.ptr = nn.Linear(d, d, bias=False)
        if small_init:   # GPT-style 0.02: a number's value features are not drowned by its random row
            for e in (self.emb, self.pos_enc, self.pos_dec) + ((self.prev,) if shift else ()):
                nn.init.normal_(e.weight, std=0.02)

    def _embed(self, tokens):
        x = self.emb(tokens) + self.num(number_features(tokens))
        if self.shift:   # the previous token's own embedding table: "a number after '('" is an x
            x = x + self.prev(torch.cat([torch.full_like(tokens[:, :1], PAD), tokens[:, :-1]], 1))
        return x

    def encode(self, src):
        """(memory, its padding mask, the entity states and labels or None)."""
        pad = src == PAD
        x = self._embed(src)
        if not self.rope:
            x = x + self.pos_enc(torch.arange(src.shape[1], device=src.device))
        for b in self.enc:
            x = b(x, causal=False, key_pad=pad)
        mem = self.ln_e(x)
        if not self.entities:
            return mem, pad, None
        member, slots, labels = entity_tables(src)
        b, t, d = mem.shape
        # entity e's tokens (label, "(", x, ",", y, ")", ";") side by side, absent slots zero
        padded = torch.cat([mem, mem.new_zeros(b, 1, d)], 1)
        tokens = padded.gather(1, slots.view(b, -1, 1).expand(-1, -1, d)).view(b, slots.shape[1], -1)
        state = self.ent_slot(tokens)                                           # (b, E, d)
        mem = mem + self.ent_mem(member.transpose(1, 2) @ state)               # each token + its entity's state
        return mem, pad, (state, labels)

    def encode_repeated(self, src, repeat: int = 1):
        """:meth:`encode` of each prompt once, each result repeated ``repeat`` times (consecutive rows)."""
        mem, pad, ents = self.encode(src)
        if repeat == 1:
            return mem, pad, ents
        rep = lambda t: t.repeat_interleave(repeat, 0)   # noqa: E731
        return rep(mem), rep(pad), None if ents is None else tuple(rep(t) for t in ents)

    def _dec_input(self, tokens, positions, ents):
        x = self._embed(tokens)
        if ents is not None:   # a written label (a node, an item) brings its entity's state
            state, labels = ents
            match = ((tokens[:, :, None] == labels[:, None, :]) & (tokens < NUM)[:, :, None]).float()
            x = x + self.ent_in(match @ state)
        if not self.rope:
            x = x + self.pos_dec(positions)
        return x

    def _logits(self, x, ents):
        h = self.ln_d(x)
        logits = self.head(h)
        if self.pointer and ents is not None:
            state, labels = ents
            match = (self.ptr(h) @ state.transpose(1, 2)) / h.shape[-1] ** 0.5          # (b, t, E)
            match = match.masked_fill(labels[:, None, :] == PAD, 0.0)
            logits = logits.scatter_add(-1, labels[:, None, :].expand_as(match), match)
        return logits

    def decode(self, tgt_in, mem, mem_pad, ents=None):
        x = self._dec_input(tgt_in, torch.arange(tgt_in.shape[1], device=tgt_in.device), ents)
        for b in self.dec:
            x = b(x, causal=True, mem=mem, mem_pad=mem_pad)
        return self._logits(x, ents)

    def can_cache(self) -> bool:
        """Whether :meth:`decode_step` applies (not with the diagnosis' rotary or shift variants)."""
        return not (self.rope or self.shift)

    def decode_step(self, token, pos: int, mem, mem_pad, ents, caches: list):
        """The next-token logits (b, VOCAB) after writing ``token`` (b, 1) at position ``pos``,
        with each decoder layer's keys and values of the earlier positions in ``caches`` (one
        dict per layer, empty at the first step; extended here): the numbers of :meth:`decode`'s
        last position, up to rounding."""
        x = self._dec_input(token, torch.full((1,), pos, dtype=torch.long, device=token.device), ents)
        for b, cache in zip(self.dec, caches):
            x = b.step(x, cache, mem, mem_pad)
        return self._logits(x, ents)[:, -1]

    def forward(self, src, tgt_in, repeat: int = 1):
        """Logits for ``tgt_in``; with ``repeat`` > 1, ``src`` holds each prompt once and
        ``tgt_in`` ``repeat`` rows per prompt (grouped consecutively): the prompt is encoded once."""
        return self.decode(tgt_in, *self.encode_repeated(src, repeat))


def shift_right(tgt):
    """Decoder input: SOL then the target without its last token."""
    return torch.cat([torch.full_like(tgt[:, :1], SOL), tgt[:, :-1]], 1)


def sft_loss(model, src, tgt):
    """Teacher-forced cross-entropy on the solution tokens (PAD ignored)."""
    logits = model(src, shift_right(tgt))
    return F.cross_entropy(logits.reshape(-1, VOCAB), tgt.reshape(-1), ignore_index=PAD)


@torch.no_grad()
def generate(model, src, max_len: int, greedy: bool, generator=None, temperature: float = 1.0, repeat: int = 1):
    """Write up to ``max_len`` tokens per row (greedy or sampled), stopping rows at EOS; the rest is
    PAD. ``repeat`` rows per prompt of ``src`` (consecutive), each prompt encoded once; one new
    position a step with the earlier keys and values kept (``decode_step``) where the model allows."""
    mem, pad, ents = model.encode_repeated(src, repeat)
    b = mem.shape[0]
    sol = torch.full((b, 1), SOL, dtype=torch.long, device=src.device)
    out = sol[:, :0]
    done = torch.zeros(b, dtype=torch.bool, device=src.device)
    caches = [{} for _ in model.dec] if model.can_cache() else None
    for i in range(max_len):
        if caches is None:
            logits = model.decode(torch.cat([sol, out], 1), mem, pad, ents)[:, -1]
        else:
            logits = model.decode_step(sol if i == 0 else out[:, -1:], i, mem, pad, ents, caches)
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


def seq_logprobs(model, src, seq, repeat: int = 1):
    """Per-token log pi(seq_t | src, seq_<t), and the mask of real tokens (through the first EOS);
    ``repeat`` rows of ``seq`` per prompt of ``src``."""
    logits = model(src, shift_right(seq), repeat)
    logp = torch.log_softmax(logits, -1).gather(-1, seq.clamp(max=VOCAB - 1)[..., None]).squeeze(-1)
    return logp, seq != PAD


def grpo_loss(model, ref, src, seq, rewards, group: int, beta: float):
    """GRPO loss for ``group`` samples per prompt: ``src`` holds each prompt once, ``seq`` and
    ``rewards`` its ``group`` samples (rows grouped consecutively)."""
    r = rewards.view(-1, group)
    adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1)
    logp, mask = seq_logprobs(model, src, seq, group)
    with torch.no_grad():
        ref_logp, _ = seq_logprobs(ref, src, seq, group)
    kl = torch.exp(ref_logp - logp) - (ref_logp - logp) - 1.0
    per_tok = -(adv[:, None] * logp) + beta * kl
    m = mask.float()
    loss = ((per_tok * m).sum(1) / m.sum(1).clamp(min=1)).mean()
    return loss, float((kl.detach() * m).sum() / m.sum())
