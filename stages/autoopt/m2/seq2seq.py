"""M2 (learned): LaTeX -> Pyomo script, a small encoder-decoder transformer trained from scratch.

What the paper does and what we do instead
------------------------------------------
The paper (Sinha, Arora, Pujara, arXiv 2510.21436) fine-tunes DeepSeek-Coder-1.3B on 1,018 real
LaTeX/Pyomo pairs. That is out of reach on two CPU cores, so this is a workstation-sized
stand-in (the ledger labels it ``proxy``): a transformer encoder over the LaTeX tokens and a
transformer decoder over Pyomo tokens, trained from random initialisation on the generated
dataset's (LaTeX -> script) pairs by the m2-train stage. Everything below is our choice.

Tokens
------
* Source: the LaTeX tokens of part 1 (:func:`stages.autoopt.tokenizer.tokenize`; digits single).
* Target: :func:`py_tokenize`. The reference script's constant frame -- the import line, the
  two blank lines, ``def build_model():``, ``m = ConcreteModel()`` and ``return m`` -- and its
  docstring line are dropped: the frame is the same in every script, and the docstring names
  tags (problem type, complexities) that the LaTeX does not show. Each remaining line (all are
  indented four spaces) becomes its tokens, lines separated by ``<nl>``: a comment is one token,
  ``m.x[`` (a variable's name with ``m.`` and its opening bracket) is one token, other
  identifiers and keywords are whole, ``**``, ``<=``, ``>=``, ``==`` are one token each, every
  digit and every other character is its own token. Spaces are not tokens: :func:`py_detokenize`
  puts them back by rule (binary operators and ``for``/``in`` spaced, ``=`` spaced only outside
  brackets, no space inside brackets, a space after a comma, a unary minus before a digit
  unspaced) and re-adds the frame. ``py_detokenize(py_tokenize(s))`` equals ``s`` without its
  docstring line for every script of the dataset and of the generator (tests check it), so the
  text :func:`translate` returns is a full, runnable script: the evaluation runs it whole.
* Then byte-pair merges (:func:`learn_merges`, learned on the training scripts, ``merges`` in
  params): the most frequent adjacent pairs of base tokens become one token, never across a
  line, a digit or a comment, so numbers stay digit by digit (copied from the LaTeX one digit at
  a time) and only the code's fixed structure merges. On the default data 100 merges cut the
  mean target from 151 to 67 tokens (max 466 -> 218), which cuts training and decoding time.

Model
-----
Pre-norm transformer encoder (``nn.TransformerEncoder``) and our own pre-norm decoder layers
(causal self-attention with a key/value cache for decoding, cross-attention that ignores the
source's padding); fixed sinusoidal positions on both sides (no learned length limit);
the decoder's input embedding and output projection share weights. Decoding is batched greedy
with the cache; it stops at ``<eos>`` or the length limit. Training (m2/train.py): label
smoothing, AdamW with linear warm-up and cosine decay, gradient clipping, length-bucketed
batches.

API (what the m2-evaluate and end-to-end stages call)::

    load_checkpoint(path, device) -> (model, vocab)
    translate(model, vocab, latex_list, device, max_len=None, batch=64) -> list[str]

Checkpoints are ``torch.save`` of state dicts + config + both token lists (no pickled objects),
read back with ``torch.load(weights_only=True)``.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch
from torch import nn

from ..m1.model import DecoderLayer, sinusoids   # M1's pre-norm cached decoder layer and position encodings
from ..tokenizer import Vocab, tokenize
from .docstring import is_docstring_line

# --------------------------------------------------------------------------- Pyomo tokens
FRAME_HEAD = ("from pyomo.environ import *", "", "", "def build_model():", "    m = ConcreteModel()")
FRAME_TAIL = ("    return m",)
INDENT = "    "
NL = "<nl>"
_PY_TOKEN = re.compile(r"#[^\n]*|m\.[A-Za-z_]\w*\[|[A-Za-z_]\w*|\d|\*\*|<=|>=|==|\S")
_SPACED = frozenset({"*", "+", "/", "<=", ">=", "==", "for", "in"})


def py_tokenize(script: str) -> list[str]:
    """Pyomo script -> tokens of its body (frame and docstring dropped, lines joined by <nl>).

    Raises ValueError on a body line that is not indented four spaces (not a script of the
    dataset's shape)."""
    if not isinstance(script, str):
        raise TypeError(f"py_tokenize needs a str, got {type(script).__name__}")
    out: list[str] = []
    for k, line in enumerate(script.split("\n")):
        if line in FRAME_HEAD or line in FRAME_TAIL or is_docstring_line(line):
            continue
        if not line.startswith(INDENT) or not line.strip():
            raise ValueError(f"line {k + 1} of the script is not a body line indented four spaces: {line!r}")
        if out:
            out.append(NL)
        out += _PY_TOKEN.findall(line[len(INDENT):])
    return out


def _opens(t: str) -> bool:
    return t in ("(", "[") or (len(t) > 1 and t.endswith("["))


def _word(t: str) -> bool:
    return (t[:1].isalpha() or t[:1] == "_") and not t.endswith("[")


def _space(prev: str, tok: str, depth_before_prev: int, depth: int) -> bool:
    """Whether a space goes between ``prev`` and ``tok`` (depth: open brackets before tok)."""
    if _opens(prev) or prev == "." or prev == "**" or tok in (")", "]", ",", ".", "**"):
        return False
    if prev == ",":
        return True
    if tok == "=":
        return depth == 0                 # m.x = Var(...) but domain=Reals
    if prev == "=":
        return depth_before_prev == 0
    if tok in _SPACED or prev in _SPACED or tok == "-":
        return True
    if prev == "-":
        return not tok.isdigit()          # "- (3)" (a sign of a term) but "-3" (a negative number)
    return _word(prev) and _word(tok)     # for i in range


def _line(tokens: list[str]) -> str:
    text, depth, before, prev = "", 0, 0, None
    for t in tokens:
        if prev is not None and _space(prev, t, before, depth):
            text += " "
        before = depth
        text += t
        if _opens(t):
            depth += 1
        elif t in (")", "]"):
            depth -= 1
        prev = t
    return text


def py_detokenize(tokens: list[str]) -> str:
    """Body tokens (base or merged) -> a full script (frame re-added, spacing by rule). Empty
    lines are skipped."""
    lines: list[list[str]] = [[]]
    for t in tokens:
        if t == NL:
            lines.append([])
        else:
            lines[-1].append(t)
    body = [INDENT + _line(split_merged(toks)) for toks in lines if toks]
    return "\n".join((*FRAME_HEAD, *body, *FRAME_TAIL)) + "\n"


# --------------------------------------------------------------------------- merges (BPE)
JOIN = "\u2009"     # a thin space joins the base tokens of a merged token (no base token holds one)


def learn_merges(token_seqs, n_merges: int) -> list[tuple[str, str]]:
    """Byte-pair-encoding merges over base tokens, learned within lines (never across <nl>):
    repeatedly the most frequent adjacent pair (ties: the larger pair in string order) becomes
    one token. Pairs holding a digit are never merged, so numbers stay digit by digit and the
    decoder can copy them from the LaTeX one digit at a time; what merges is the code's fixed
    structure (``= Objective ( expr = (``, ``) ) )``, ...). Stops early when no pair occurs twice."""
    from collections import Counter

    if n_merges < 0:
        raise ValueError(f"learn_merges: n_merges must be >= 0, got {n_merges}")
    mergeable: dict[str, bool] = {}

    def ok(t: str) -> bool:
        if t not in mergeable:
            mergeable[t] = t != NL and not t.startswith("#") and not any(ch.isdigit() for ch in t)
        return mergeable[t]

    # a pair never spans a line break, a digit or a comment, so count the runs between them:
    # the same runs (") ) )", "= Objective ( expr = (") recur across lines, which keeps this fast
    runs: Counter = Counter()
    for seq in token_seqs:
        cur: list[str] = []
        for t in (*seq, NL):
            if ok(t):
                cur.append(t)
                continue
            if len(cur) > 1:
                runs[tuple(cur)] += 1
            cur = []
    words = [list(w) for w in runs]
    freq = list(runs.values())

    def pairs_of(w: list[str]):
        return [(a, b) for a, b in zip(w, w[1:]) if ok(a) and ok(b)]

    counts: Counter = Counter()
    where: dict[tuple[str, str], set[int]] = {}
    for k, (w, f) in enumerate(zip(words, freq)):
        for p in pairs_of(w):
            counts[p] += f
            where.setdefault(p, set()).add(k)
    merges: list[tuple[str, str]] = []
    while len(merges) < n_merges and counts:
        (a, b), count = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        if count < 2:
            break
        merges.append((a, b))
        for k in sorted(where.pop((a, b), ())):        # only the lines holding the pair change
            for p in pairs_of(words[k]):
                counts[p] -= freq[k]
                if counts[p] <= 0:
                    del counts[p]
            words[k] = _merge_pair(words[k], a, b)
            for p in pairs_of(words[k]):
                counts[p] += freq[k]
                where.setdefault(p, set()).add(k)
    return merges


def _merge_pair(w: list[str], a: str, b: str) -> list[str]:
    out, j = [], 0
    while j < len(w):
        if j < len(w) - 1 and w[j] == a and w[j + 1] == b:
            out.append(a + JOIN + b)
            j += 2
        else:
            out.append(w[j])
            j += 1
    return out


def apply_merges(tokens: list[str], merges) -> list[str]:
    """Apply learned merges to base tokens, lowest-ranked (earliest learned) pair first, as BPE does."""
    rank = {tuple(m): k for k, m in enumerate(merges)}
    w = list(tokens)
    while len(w) > 1:
        best = min(((rank[p], i) for i, p in enumerate(zip(w, w[1:])) if p in rank), default=None)
        if best is None:
            break
        a, b = merges[best[0]]
        w = _merge_pair(w, a, b)
    return w


def split_merged(tokens: list[str]) -> list[str]:
    """Merged tokens back to base tokens."""
    return [b for t in tokens for b in t.split(JOIN)]


def target_tokens(script: str, merges=()) -> list[str]:
    """The model's target tokens of a script: base tokens with the merges applied."""
    return apply_merges(py_tokenize(script), merges) if merges else py_tokenize(script)


def build_target_vocab(scripts, merges=()) -> Vocab:
    """Target vocabulary: every target token of the given scripts (sorted), after the specials."""
    kept = sorted({t for s in scripts for t in target_tokens(s, merges)})
    return Vocab(list(Vocab().tokens) + kept)


def build_source_vocab(latex) -> Vocab:
    return Vocab.build(latex)


def build_vocab(latex, scripts, n_merges: int) -> "M2Vocab":
    """Both vocabularies and ``n_merges`` target merges, from training pairs."""
    scripts = list(scripts)
    merges = tuple(learn_merges([py_tokenize(s) for s in scripts], n_merges))
    return M2Vocab(build_source_vocab(latex), build_target_vocab(scripts, merges), merges)


def encode(vocab: Vocab, tokens: list[str], max_len: int | None = None) -> list[int]:
    """<bos> ids <eos>, truncated to ``max_len`` ids (the <eos> kept); unknown tokens -> <unk>."""
    ids = [vocab.bos] + [vocab.index.get(t, vocab.unk) for t in tokens] + [vocab.eos]
    if max_len is not None and len(ids) > max_len:
        ids = ids[:max_len - 1] + [vocab.eos]
    return ids


def decode_tokens(vocab: Vocab, ids) -> list[str]:
    out = []
    for i in ids:
        i = int(i)
        if i == vocab.eos:
            break
        if i in (vocab.pad, vocab.bos):
            continue
        out.append(vocab.tokens[i] if 0 <= i < len(vocab) else "<unk>")
    return out


@dataclass(frozen=True)
class M2Vocab:
    """What a checkpoint needs besides weights: LaTeX source tokens, Pyomo target tokens, and
    the target side's learned merges."""
    src: Vocab
    tgt: Vocab
    merges: tuple[tuple[str, str], ...] = ()


# --------------------------------------------------------------------------- model
@dataclass(frozen=True)
class M2Config:
    src_vocab: int
    tgt_vocab: int
    d_model: int = 128
    heads: int = 4
    enc_layers: int = 2
    dec_layers: int = 2
    ff: int = 512
    dropout: float = 0.1
    max_src_len: int = 256
    max_tgt_len: int = 768


class M2(nn.Module):
    def __init__(self, cfg: M2Config):
        super().__init__()
        self.cfg = cfg
        d = cfg.d_model
        self.src_embed = nn.Embedding(cfg.src_vocab, d, padding_idx=0)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab, d, padding_idx=0)
        layer = nn.TransformerEncoderLayer(d, cfg.heads, cfg.ff, cfg.dropout, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, cfg.enc_layers, enable_nested_tensor=False)
        self.enc_norm = nn.LayerNorm(d)
        self.layers = nn.ModuleList(DecoderLayer(d, cfg.heads, cfg.ff, cfg.dropout) for _ in range(cfg.dec_layers))
        self.norm = nn.LayerNorm(d)
        self.out = nn.Linear(d, cfg.tgt_vocab, bias=False)
        self.out.weight = self.tgt_embed.weight                 # tied input / output embeddings
        self.register_buffer("src_pos", sinusoids(cfg.max_src_len, d), persistent=False)
        self.register_buffer("tgt_pos", sinusoids(cfg.max_tgt_len, d), persistent=False)
        self.drop = nn.Dropout(cfg.dropout)
        for emb in (self.src_embed, self.tgt_embed):     # unit-variance inputs after the sqrt(d) scale,
            nn.init.normal_(emb.weight, std=d ** -0.5)    # and small initial logits through the tied output
            with torch.no_grad():
                emb.weight[0].zero_()

    def encode(self, src: torch.Tensor):
        """src ids (B, S), 0-padded -> (per-layer memory keys/values, mask (B, 1, 1, S))."""
        src = src[:, : self.cfg.max_src_len]
        keep = src != 0
        x = self.drop(self.src_embed(src) * math.sqrt(self.cfg.d_model) + self.src_pos[: src.shape[1]])
        enc = self.enc_norm(self.encoder(x, src_key_padding_mask=~keep))
        return [layer.memory_kv(enc) for layer in self.layers], keep[:, None, None, :]

    def embed_tokens(self, tokens: torch.Tensor, start: int) -> torch.Tensor:
        return self.drop(self.tgt_embed(tokens) * math.sqrt(self.cfg.d_model)
                         + self.tgt_pos[start:start + tokens.shape[1]])

    def _run(self, x, mem, mask, caches=None):
        for k, layer in enumerate(self.layers):
            x = layer(x, mem[k], None if caches is None else caches[k], mem_mask=mask)
        return self.out(self.norm(x))

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        """Teacher forcing: logits (B, T-1, V) for tgt[:, 1:] given src and tgt[:, :-1]."""
        mem, mask = self.encode(src)
        return self._run(self.embed_tokens(tgt[:, :-1], 0), mem, mask)

    @torch.no_grad()
    def greedy(self, src: torch.Tensor, bos: int, eos: int, max_len: int) -> list[list[int]]:
        """Batched greedy decoding with a key/value cache; ids without <bos>/<eos>."""
        mem, mask = self.encode(src)
        b = src.shape[0]
        caches: list[dict] = [{} for _ in self.layers]
        tok = torch.full((b,), bos, dtype=torch.long, device=src.device)
        out, done = [], torch.zeros(b, dtype=torch.bool, device=src.device)
        for t in range(min(max_len, self.cfg.max_tgt_len) - 1):
            tok = self._run(self.embed_tokens(tok[:, None], t), mem, mask, caches)[:, -1].argmax(-1)
            tok = torch.where(done, torch.full_like(tok, eos), tok)
            out.append(tok)
            done |= tok == eos
            if bool(done.all()):
                break
        seqs = torch.stack(out, 1).tolist() if out else [[] for _ in range(b)]
        return [s[:s.index(eos)] if eos in s else s for s in seqs]


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# --------------------------------------------------------------------------- batches, API
def pad_batch(seqs: list[list[int]], device=None) -> torch.Tensor:
    width = max(1, max(len(s) for s in seqs))
    arr = torch.zeros(len(seqs), width, dtype=torch.long)
    for k, s in enumerate(seqs):
        arr[k, :len(s)] = torch.tensor(s, dtype=torch.long)
    return arr if device is None else arr.to(device)


def translate_tokens(model: M2, vocab: M2Vocab, latex_list: list[str], device, max_len: int | None = None,
                     batch: int = 64) -> list[list[str]]:
    """Greedy target tokens for each LaTeX string (input order kept; sources sorted by length
    into batches so a batch pads little)."""
    if batch < 1:
        raise ValueError(f"translate: batch must be >= 1, got {batch}")
    limit = model.cfg.max_tgt_len if max_len is None else int(max_len)
    if limit < 2:
        raise ValueError(f"translate: max_len must be >= 2, got {max_len}")
    src = [encode(vocab.src, tokenize(s), model.cfg.max_src_len) for s in latex_list]
    order = sorted(range(len(src)), key=lambda k: len(src[k]))
    out: list[list[str] | None] = [None] * len(src)
    was_training = model.training
    model.eval()
    try:
        for s in range(0, len(order), batch):
            idx = order[s:s + batch]
            ids = model.greedy(pad_batch([src[k] for k in idx], device), vocab.tgt.bos, vocab.tgt.eos, limit)
            for k, seq in zip(idx, ids):
                out[k] = decode_tokens(vocab.tgt, seq)
    finally:
        model.train(was_training)
    return out  # type: ignore[return-value]


def translate(model: M2, vocab: M2Vocab, latex_list: list[str], device, max_len: int | None = None,
              batch: int = 64) -> list[str]:
    """Full Pyomo scripts (text, frame included) for each LaTeX string, greedy decoding.
    ``max_len`` caps the target length in tokens (<bos> and <eos> included; default: the
    model's max_tgt_len). The text is untrusted: run it only in a sandbox."""
    return [py_detokenize(t) for t in translate_tokens(model, vocab, latex_list, device, max_len, batch)]


def save_checkpoint(path, model: M2, vocab: M2Vocab, extra: dict | None = None) -> None:
    import dataclasses

    from stages.common.io import atomic_path

    blob = {"state_dict": {k: v.detach().cpu() for k, v in model.state_dict().items()
                           if k != "out.weight"},                       # tied to tgt_embed.weight
            "config": dataclasses.asdict(model.cfg),
            "src_vocab": list(vocab.src.tokens), "tgt_vocab": list(vocab.tgt.tokens),
            "merges": [list(m) for m in vocab.merges],
            "extra": extra or {}}
    with atomic_path(path) as tmp:
        torch.save(blob, tmp)


def load_checkpoint(path, device="cpu") -> tuple[M2, M2Vocab]:
    """(model in eval mode, vocab) from a checkpoint; tensors and plain containers only."""
    blob = torch.load(path, map_location=device, weights_only=True)
    model = M2(M2Config(**blob["config"])).to(device)
    state = dict(blob["state_dict"])
    state["out.weight"] = state["tgt_embed.weight"]
    model.load_state_dict(state)
    model.eval()
    return model, M2Vocab(Vocab(list(blob["src_vocab"])), Vocab(list(blob["tgt_vocab"])),
                          tuple((str(a), str(b)) for a, b in blob["merges"]))


def seq2seq_checkpoint(out_dir, seed: int):
    """The learned translator of verdict seed ``seed`` (a pathlib.Path under ``out_dir``)."""
    return out_dir / f"seq2seq_{seed}.pt"
