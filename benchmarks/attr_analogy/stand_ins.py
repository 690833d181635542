"""Stand-in inputs for the attr_analogy benchmarks' ``--smoke`` runs (a helper module, not a script)."""
from __future__ import annotations

from pathlib import Path


def smoke_corpora(folder: Path, names) -> Path:
    """Tiny attribute corpora (K = 5, 5,000 pairs) written into ``folder`` by the corpora stage's
    own generator and writer: stand-ins for data/corpora/attributes/<name> (``--smoke``)."""
    import os

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_DATASETS_DISABLE_PROGRESS_BARS", "1")
    from stages.common.corpora import attributes, write_corpus

    for name in sorted(set(names)):
        cp = attributes.AttributeCorpusParams(name=name, attributes=5, marginal=[0.3, 0.5],
                                              strength=[0.05, 0.9], pairs=5000)
        write_corpus(folder / name, attributes.generate(cp, seed=0))
    print(f"smoke: no data/corpora; tiny stand-in corpora {', '.join(sorted(set(names)))} (K = 5, 5,000 pairs) "
          "in a temporary folder (figures meaningless)")
    return folder
