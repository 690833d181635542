"""auto_refine prepare: each verdict seed's generated knowledge base and its train / test questions.

A verdict seed is one independent repetition of the whole experiment: its own knowledge base, its
own split of the subjects, then (train) its own initialisation and sampling. Outputs:
data/auto_refine/kb.json (per seed: documents as triples, questions as (subject, type) over
disjoint subjects) and reports/auto_refine/prepare.json (sizes, per seed)."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import KB, PREPARE_METRICS


def main() -> None:
    with stage("auto_refine", "prepare", PARAMS) as ctx:
        from stages.common.io import write_json
        from stages.common.seeds import per_seed_metrics

        from .refine import make_data

        p = ctx.params.prepare
        kb, sizes = {}, {}
        for seed in ctx.seeds:
            docs, train_q, test_q = make_data(p.n_people, p.n_cities, p.n_distractors, p.test_frac, seed)
            kb[str(seed)] = {"docs": docs, "train": train_q, "test": test_q}
            sizes[seed] = {"docs": len(docs), "train_questions": len(train_q), "test_questions": len(test_q),
                           "test_train_subject_overlap": len({s for s, _ in train_q} & {s for s, _ in test_q})}
            print(f"  seed {seed}: {len(docs)} documents, {len(train_q)} train / {len(test_q)} test questions",
                  flush=True)
        write_json(ctx.path(KB), {"seeds": kb})
        write_json(ctx.path(PREPARE_METRICS), per_seed_metrics(sizes))


if __name__ == "__main__":
    main()
