"""auto_refine prepare: the generated knowledge base and the train / test questions.

Outputs: data/auto_refine/kb.json (documents as triples, questions as (subject, type) over disjoint
subjects) and reports/auto_refine/prepare.json (sizes)."""
from __future__ import annotations

from stages.common.runtime.stage import stage

from .params import PARAMS
from .paths import KB, PREPARE_METRICS


def main() -> None:
    with stage("auto_refine", "prepare", PARAMS) as ctx:
        import numpy as np

        from stages.common.io import write_json

        from .refine import make_kb, split_questions

        p = ctx.params.prepare
        rng = np.random.default_rng([ctx.seed, 0])
        docs = make_kb(p.n_people, p.n_cities, p.n_distractors, rng)
        train_q, test_q = split_questions(p.n_people, p.test_frac, rng)
        write_json(ctx.path(KB), {"docs": docs, "train": train_q, "test": test_q})
        write_json(ctx.path(PREPARE_METRICS), {"docs": len(docs), "train_questions": len(train_q),
                                               "test_questions": len(test_q)})


if __name__ == "__main__":
    main()
