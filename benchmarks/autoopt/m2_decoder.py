"""autoopt M2: our transformer decoder (stages.autoopt.m2.seq2seq.DecoderLayer, batched greedy
decoding with a key/value cache) against torch's own ``nn.TransformerDecoder`` carrying the
same weights, decoding the usual library way (the whole prefix recomputed every step, causal
mask). Checks first that the two give the same teacher-forced logits and the same greedy
tokens, then prints both decoding times and their ratio.

    python benchmarks/autoopt/m2_decoder.py [--rows 64] [--src 110] [--steps 80] [--d 64]

``--smoke`` runs it at tiny sizes in seconds (what CI runs).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch import nn

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def library_decoder(model) -> nn.TransformerDecoder:
    """nn.TransformerDecoder (pre-norm, GELU) with the weights of ``model``'s decoder layers."""
    cfg = model.cfg
    layer = nn.TransformerDecoderLayer(cfg.d_model, cfg.heads, cfg.ff, 0.0, activation="gelu",
                                       batch_first=True, norm_first=True)
    dec = nn.TransformerDecoder(layer, cfg.dec_layers, enable_nested_tensor=False) \
        if "enable_nested_tensor" in nn.TransformerDecoder.__init__.__code__.co_varnames \
        else nn.TransformerDecoder(layer, cfg.dec_layers)
    with torch.no_grad():
        for ours, lib in zip(model.layers, dec.layers):
            lib.self_attn.in_proj_weight.copy_(ours.qkv.weight)
            lib.self_attn.in_proj_bias.copy_(ours.qkv.bias)
            lib.self_attn.out_proj.weight.copy_(ours.o1.weight)
            lib.self_attn.out_proj.bias.copy_(ours.o1.bias)
            lib.multihead_attn.in_proj_weight.copy_(torch.cat([ours.q2.weight, ours.kv2.weight]))
            lib.multihead_attn.in_proj_bias.copy_(torch.cat([ours.q2.bias, ours.kv2.bias]))
            lib.multihead_attn.out_proj.weight.copy_(ours.o2.weight)
            lib.multihead_attn.out_proj.bias.copy_(ours.o2.bias)
            lib.linear1.weight.copy_(ours.ff[0].weight)
            lib.linear1.bias.copy_(ours.ff[0].bias)
            lib.linear2.weight.copy_(ours.ff[3].weight)
            lib.linear2.bias.copy_(ours.ff[3].bias)
            for k, n in enumerate((ours.n1, ours.n2, ours.n3), 1):
                getattr(lib, f"norm{k}").load_state_dict(n.state_dict())
    return dec.eval()


def encoder_output(model, src):
    import math

    keep = src != 0
    x = model.src_embed(src) * math.sqrt(model.cfg.d_model) + model.src_pos[: src.shape[1]]
    return model.enc_norm(model.encoder(x, src_key_padding_mask=~keep)), ~keep


def library_logits(model, dec, src, tgt_in):
    mem, pad = encoder_output(model, src)
    t = tgt_in.shape[1]
    mask = nn.Transformer.generate_square_subsequent_mask(t)
    h = dec(model.embed_tokens(tgt_in, 0), mem, tgt_mask=mask, tgt_is_causal=True, memory_key_padding_mask=pad)
    return model.out(model.norm(h))


@torch.no_grad()
def library_greedy(model, dec, src, bos, steps):
    """Greedy decoding without a cache: every step reruns the decoder on the whole prefix."""
    mem, pad = encoder_output(model, src)
    seq = torch.full((src.shape[0], 1), bos, dtype=torch.long)
    for _ in range(steps):
        mask = nn.Transformer.generate_square_subsequent_mask(seq.shape[1])
        h = dec(model.embed_tokens(seq, 0), mem, tgt_mask=mask, tgt_is_causal=True, memory_key_padding_mask=pad)
        nxt = model.out(model.norm(h[:, -1])).argmax(-1)
        seq = torch.cat([seq, nxt[:, None]], 1)
    return seq[:, 1:]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=64)
    ap.add_argument("--src", type=int, default=110, help="source length (tokens)")
    ap.add_argument("--steps", type=int, default=80, help="decoded tokens (the default profile's mean target is ~65)")
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script still runs (CI)")
    a = ap.parse_args()
    if a.smoke:
        a.rows, a.src, a.steps, a.d, a.repeats = 2, 12, 4, 16, 1
    from benchmarks.bench import best_of
    from stages.autoopt.m2.seq2seq import M2, M2Config
    from stages.common.device import limit_threads

    limit_threads(1)
    torch.manual_seed(0)
    model = M2(M2Config(src_vocab=64, tgt_vocab=128, d_model=a.d, heads=4, enc_layers=2, dec_layers=2,
                        ff=4 * a.d, dropout=0.0, max_src_len=512, max_tgt_len=512)).eval()
    dec = library_decoder(model)
    src = torch.randint(4, 64, (a.rows, a.src))
    tgt = torch.randint(4, 128, (a.rows, 30))
    with torch.no_grad():
        ours_tf, lib_tf = model(src, tgt), library_logits(model, dec, src, tgt[:, :-1])
    same_logits = torch.allclose(ours_tf, lib_tf, atol=1e-4)
    eos = 10_000                                   # an id never produced: decode exactly --steps tokens
    t_ours, ours = best_of(lambda: model.greedy(src, 1, eos, a.steps + 1), a.repeats)
    t_lib, lib = best_of(lambda: library_greedy(model, dec, src, 1, a.steps).tolist(), a.repeats)
    same_tokens = ours == lib
    print(f"teacher-forced logits agree: {same_logits} (max |diff| {float((ours_tf - lib_tf).abs().max()):.2e}); "
          f"greedy tokens agree: {same_tokens}")
    print(f"greedy decoding of {a.rows} rows x {a.steps} tokens (d={a.d}, 1 thread): ours (KV cache) "
          f"{t_ours:.3f}s, nn.TransformerDecoder (prefix recomputed) {t_lib:.3f}s; ratio library/ours "
          f"{t_lib / t_ours:.2f}")
    if not (same_logits and same_tokens):
        raise SystemExit("the two decoders disagree")


if __name__ == "__main__":
    main()
