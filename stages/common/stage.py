"""What every stage does around its compute: validate params, seed, track, log outs.

A stage module looks like::

    def main() -> None:
        with stage("zipf_bigram", "train", ZipfParams) as ctx:
            p = ctx.params.train        # validated, active profile
            ...                         # compute, write outs atomically
            ctx.run.log_curve(...)      # metrics with steps

Params are validated (all profiles) before anything heavy is imported; a bad value exits
with status 2 and a message naming the key. When the body returns, the stage's metrics
files, plots and outs (as declared in dvc.yaml) are logged to MLflow.
"""
from __future__ import annotations

import contextlib
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TypeVar

from pydantic import BaseModel

from .params import CommonParams, ParamsError, load_study, repo_root

M = TypeVar("M", bound=BaseModel)


@dataclass
class StageContext:
    study: str
    step: str
    stage_name: str
    common: CommonParams
    params: BaseModel
    root: Path
    run: object  # tracking.StageRun

    @property
    def seed(self) -> int:
        return self.common.seed

    def path(self, rel: str) -> Path:
        return self.root / rel

    def device(self):
        from .device import select_device

        return select_device(self.common.device)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:  # pragma: no cover
        pass
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def fail(message: str, code: int = 2) -> None:
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


@contextlib.contextmanager
def stage(study: str, step: str, model: type[M], stage_name: str | None = None,
          track: bool = True) -> Iterator[StageContext]:
    stage_name = stage_name or f"{study}-{step}"
    root = repo_root()
    try:
        common, params = load_study(study, model)
    except ParamsError as err:
        fail(str(err))
    from .dvcfile import load_stages

    spec = load_stages(root).get(stage_name)
    if spec is None:
        fail(f"dvc.yaml has no stage {stage_name!r}")
    seed_everything(common.seed)
    run = None
    t0 = time.perf_counter()
    print(f"[{stage_name}] profile={common.profile} seed={common.seed}", flush=True)
    if track:
        from .tracking import StageRun

        run = StageRun(study, step, stage_name, common.profile,
                       {"common": common.model_dump(), study: params.model_dump()},
                       root=root, deps=spec.deps, outs=spec.outs)
    ctx = StageContext(study, step, stage_name, common, params, root, run)
    try:
        yield ctx
    except BaseException:
        if run is not None:
            run.finish("FAILED")
        raise
    compute_s = time.perf_counter() - t0
    if run is not None:
        t1 = time.perf_counter()
        for m in spec.metrics:
            run.log_metrics_file(m)
        for o in spec.outs:
            run.log_out(o)
        run.log_metrics({"stage.compute_s": compute_s,
                         "stage.logging_s": time.perf_counter() - t1})
        run.finish()
    print(f"[{stage_name}] done in {time.perf_counter() - t0:.1f}s", flush=True)
