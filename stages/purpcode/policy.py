"""purpcode's code model: a tiny causal transformer over the template language, trained from
scratch; batched sampling (one forward per token for the whole batch), supervised fine-tuning and
GRPO with the shared policy-gradient core (stages/common/pg.py).
"""
from __future__ import annotations

import io

import torch
import torch.nn as nn

from . import codelang as cl
from stages.common.pg import clipped_surrogate, group_advantages, kl_k3, masked_mean, token_logp

SEQ = cl.PROMPT_LEN + cl.MAX_ANSWER


class CodeLM(nn.Module):
    def __init__(self, d_model: int = 48, layers: int = 2, heads: int = 4):
        super().__init__()
        self.config = {"d_model": d_model, "layers": layers, "heads": heads}
        self.tok = nn.Embedding(len(cl.VOCAB), d_model)
        self.pos = nn.Embedding(SEQ, d_model)
        self.blocks = nn.ModuleList([
            nn.TransformerEncoderLayer(d_model, heads, 2 * d_model, dropout=0.0, batch_first=True, norm_first=True)
            for _ in range(layers)])
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, len(cl.VOCAB))
        self.register_buffer("mask", torch.triu(torch.full((SEQ, SEQ), float("-inf")), 1), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[1]
        h = self.tok(x) + self.pos(torch.arange(n, device=x.device))
        for b in self.blocks:
            h = b(h, src_mask=self.mask[:n, :n], is_causal=True)
        return self.head(self.norm(h))


def make_model(cfg: dict, seed: int) -> CodeLM:
    torch.manual_seed(seed)
    return CodeLM(**cfg)


def state_bytes(model: CodeLM) -> bytes:
    buf = io.BytesIO()
    torch.save({"config": model.config, "state": model.state_dict()}, buf)
    return buf.getvalue()


def load_bytes(data: bytes) -> CodeLM:
    blob = torch.load(io.BytesIO(data), weights_only=True)
    model = CodeLM(**blob["config"])
    model.load_state_dict(blob["state"])
    return model


def encode_prompts(prompts: list[tuple]) -> torch.Tensor:
    return torch.tensor([cl.encode(cl.prompt_tokens(*p)) for p in prompts], dtype=torch.long)


def encode_answers(answers: list[list[str]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, mask) padded to MAX_ANSWER; the mask covers the tokens up to and with EOS."""
    ids = torch.full((len(answers), cl.MAX_ANSWER), cl.PAD, dtype=torch.long)
    mask = torch.zeros((len(answers), cl.MAX_ANSWER), dtype=torch.bool)
    for i, a in enumerate(answers):
        if len(a) > cl.MAX_ANSWER:
            raise ValueError(f"answer longer than {cl.MAX_ANSWER} tokens: {a}")
        ids[i, :len(a)] = torch.tensor(cl.encode(a))
        mask[i, :len(a)] = True
    return ids, mask


@torch.no_grad()
def sample(model: CodeLM, prompt_ids: torch.Tensor, gen: torch.Generator, temperature: float = 1.0):
    """Sample an answer for every prompt row at once; returns (answer ids, mask) where the mask
    covers each answer up to and with its EOS (an answer that never emits EOS keeps all tokens)."""
    model.eval()
    x = prompt_ids
    done = torch.zeros(len(x), dtype=torch.bool)
    out, mask = [], []
    for _ in range(cl.MAX_ANSWER):
        logits = model(x)[:, -1] / temperature
        tok = torch.multinomial(torch.softmax(logits, -1), 1, generator=gen)[:, 0]
        tok = torch.where(done, torch.full_like(tok, cl.PAD), tok)
        mask.append(~done)
        out.append(tok)
        done = done | (tok == cl.EOS)
        x = torch.cat([x, tok[:, None]], 1)
        if bool(done.all()):
            break
    ids = torch.stack(out, 1)
    m = torch.stack(mask, 1)
    pad = cl.MAX_ANSWER - ids.shape[1]
    if pad:
        ids = torch.cat([ids, torch.full((len(ids), pad), cl.PAD)], 1)
        m = torch.cat([m, torch.zeros((len(m), pad), dtype=torch.bool)], 1)
    return ids, m


def answer_logp(model: CodeLM, prompt_ids: torch.Tensor, ans_ids: torch.Tensor) -> torch.Tensor:
    """log pi(answer token | prompt, previous tokens), batch x MAX_ANSWER."""
    x = torch.cat([prompt_ids, ans_ids], 1)
    logits = model(x[:, :-1])[:, cl.PROMPT_LEN - 1:]
    return token_logp(logits, ans_ids)


def sft(model: CodeLM, pairs: list[tuple[tuple, list[str]]], steps: int, batch: int, lr: float,
        gen: torch.Generator, progress: str | None = None) -> list[float]:
    """Supervised fine-tuning on (prompt, answer) pairs: masked next-token cross-entropy."""
    from tqdm import tqdm

    from stages.common.optim import Adam

    if not pairs:
        raise ValueError("sft needs at least one (prompt, answer) pair")
    P = encode_prompts([p for p, _ in pairs])
    A, M = encode_answers([a for _, a in pairs])
    opt = Adam(model.parameters(), lr=lr)
    losses = []
    model.train()
    for _ in tqdm(range(steps), desc=progress, disable=progress is None, mininterval=2):
        idx = torch.randint(len(P), (min(batch, len(P)),), generator=gen)
        loss = -masked_mean(answer_logp(model, P[idx], A[idx]), M[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    return losses


def decode_answers(ids: torch.Tensor, mask: torch.Tensor) -> list[list[str]]:
    return [cl.decode(row[m]) for row, m in zip(ids, mask)]


def grpo(model: CodeLM, prompts: list[tuple], oracle, reward_fn, p, gen: torch.Generator,
         progress: str | None = None) -> list[dict]:
    """GRPO: each iteration samples ``p.prompts`` training prompts, ``p.group`` answers each; the
    oracle scores them (``reward_fn(verdict)``); group-relative advantages; ``p.epochs`` clipped
    surrogate steps per batch with a k3 KL penalty to the starting policy. Returns per-iteration
    stats."""
    import copy

    from tqdm import tqdm

    from stages.common.optim import Adam

    ref = copy.deepcopy(model).eval()
    for q in ref.parameters():
        q.requires_grad_(False)
    opt = Adam(model.parameters(), lr=p.lr)
    hist = []
    for _ in tqdm(range(p.iterations), desc=progress, disable=progress is None, mininterval=2):
        pick = torch.randint(len(prompts), (p.prompts,), generator=gen).tolist()
        batch = [prompts[i] for i in pick for _ in range(p.group)]
        groups = torch.tensor([g for g in range(p.prompts) for _ in range(p.group)])
        P = encode_prompts(batch)
        A, M = sample(model, P, gen, p.temperature)
        verdicts = oracle.judge(batch, decode_answers(A, M))
        r = torch.tensor([reward_fn(v) for v in verdicts], dtype=torch.float32)
        adv = group_advantages(r, groups)
        with torch.no_grad():
            old = answer_logp(model, P, A)
            ref_lp = answer_logp(ref, P, A)
        model.train()
        for _ in range(p.epochs):
            new = answer_logp(model, P, A)
            loss = clipped_surrogate(new, old, adv, p.clip, mask=M) + p.kl * kl_k3(new, ref_lp, M)
            opt.zero_grad()
            loss.backward()
            opt.step()
        hist.append({"reward": float(r.mean()),
                     "refusal": sum(v.refused for v in verdicts) / len(verdicts),
                     "insecure": sum(v.insecure for v in verdicts) / len(verdicts)})
    return hist


@torch.no_grad()
def greedy(model: CodeLM, prompt_ids: torch.Tensor) -> torch.Tensor:
    """The most likely answer token by token (argmax), for every prompt row at once."""
    model.eval()
    x = prompt_ids
    for _ in range(cl.MAX_ANSWER):
        x = torch.cat([x, model(x)[:, -1].argmax(-1, keepdim=True)], 1)
    return x[:, cl.PROMPT_LEN:]


def greedy_answers(model: CodeLM, prompts: list[tuple]) -> list[str]:
    """"<rule> | <source>" or "<rule> | REFUSE" (rule empty when none) of each prompt's greedy answer;
    an answer that is neither code nor a refusal gives "<rule> | MALFORMED"."""
    out = []
    for row in greedy(model, encode_prompts(prompts)):
        rule, body = cl.split_answer(cl.decode(row))
        src = cl.render(body)
        text = "REFUSE" if cl.is_refusal(body) else (src if src is not None else "MALFORMED")
        out.append(f"{rule or ''} | {text}")
    return out


def save_mlflow(target, model: CodeLM, prompts: list) -> None:
    """The model as an MLflow pyfunc folder at ``target`` (stages/purpcode/pyfunc.py), with
    ``prompts`` ((task, ctx1, ctx2) triples) as its input example, from which MLflow infers its
    signature."""
    import tempfile
    from pathlib import Path

    import pandas as pd

    from stages.common.mlmodel import save_pyfunc

    with tempfile.TemporaryDirectory() as scratch:
        weights = Path(scratch) / "weights.pt"
        weights.write_bytes(state_bytes(model))
        example = pd.DataFrame([list(q) for q in prompts], columns=["task", "ctx1", "ctx2"])
        save_pyfunc(target, Path(__file__).with_name("pyfunc.py"), {"weights": weights}, input_example=example)
