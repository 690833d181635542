"""Typed parameters of the autoopt study (part 1: data and M1; part 2: M2, M3, end to end); see params.json."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from stages.common.runtime.params import Strict

from .data.grammar import TYPES
from .data.render import FONTSETS

Share = Annotated[float, Field(ge=0, le=1)]


class Sizes(Strict):
    train: int = Field(ge=8, le=200_000, description="training formulations")
    validation: int = Field(ge=4, le=20_000, description="validation formulations")
    test: int = Field(ge=4, le=20_000, description="printed test formulations")
    test_handwritten: int = Field(ge=4, le=20_000, description="handwriting-like test formulations")


class PrepareParams(Strict):
    source: Literal["generated", "published"] = Field(
        description="generated = build an AutoOpt-11k-format set here; published = read the "
                    "downloaded Kaggle ankurzing/autoopt-11k folder at published_path")
    published_path: str = Field(description="folder holding train|valid|test/Images + Latex.txt")
    published_max_per_split: int = Field(ge=0, description="keep at most this many images a split (0 = all)")
    data_seed: int = Field(ge=0, description="the generated dataset's seed: one dataset for every verdict seed "
                                             "(the paper's AutoOpt-11k is one fixed dataset too)")
    sizes: Sizes
    handwritten_train_share: Share = Field(description="share of training/validation images drawn handwriting-like")
    type_weights: dict[str, Annotated[float, Field(ge=0)]] = Field(
        description=f"problem-type weights over {', '.join(TYPES)}")
    complexity_rate: float = Field(gt=0, lt=1, description="chance of each complexity")
    n_choices: list[Annotated[int, Field(ge=4, le=100)]] = Field(
        min_length=1, description="dimensions n of high-dimensional problems (indexed sums)")
    max_explicit: int = Field(ge=2, le=6, description="variables written out one by one")
    lp_share: Share = Field(description="share of single/stochastic problems that are LP/MILP (solved with HiGHS)")
    inline_share: Share = Field(description="share written on one line instead of one item a line")
    fontsets: list[Literal[FONTSETS]] = Field(min_length=1, description="mathtext font sets")  # type: ignore[valid-type]
    font_sizes: list[Annotated[int, Field(ge=6, le=40)]] = Field(
        min_length=2, max_length=2, description="[smallest, largest] font size in points")
    dpi: int = Field(ge=40, le=300, description="rendering resolution")
    workers: int = Field(ge=1, le=32, description="rendering processes")
    contact_sheet: int = Field(ge=4, le=64, description="images on the contact sheet")

    @model_validator(mode="after")
    def _check(self) -> "PrepareParams":
        unknown = sorted(set(self.type_weights) - set(TYPES))
        if unknown:
            raise ValueError(f"type_weights: unknown problem type(s) {unknown}; allowed: {', '.join(TYPES)}")
        if sum(self.type_weights.values()) <= 0:
            raise ValueError("type_weights: at least one weight must be > 0")
        if self.font_sizes[0] > self.font_sizes[1]:
            raise ValueError(f"font_sizes must be [smallest, largest], got {list(self.font_sizes)}")
        return self


class LineParams(Strict):
    """M1's line design (m1/lines.py, m1/crnn.py, m1/line_model.py): lines cut by the horizontal
    projection profile, each read by a CRNN trained with CTC."""
    height: int = Field(ge=16, le=256, description="line crop height (pixels, a multiple of 16)")
    max_width: int = Field(ge=64, le=8192, description="widest line crop after scaling to height (pixels)")
    channels: list[Annotated[int, Field(ge=4, le=512)]] = Field(min_length=4, max_length=4,
                                                                description="the CRNN's four convolution widths")
    hidden: int = Field(ge=8, le=1024, description="LSTM units per direction")
    rnn_layers: int = Field(ge=1, le=6, description="bidirectional LSTM layers")
    subframes: int = Field(ge=1, le=8, description="CTC frames per 4-pixel feature column")
    dropout: float = Field(ge=0, lt=1)
    eval_every: int = Field(ge=1, description="steps between validation-curve points (greedy BLEU on the validation split)")
    eval_images: int = Field(ge=1, description="validation images decoded at each validation-curve point")

    @model_validator(mode="after")
    def _check(self) -> "LineParams":
        if self.height % 16:
            raise ValueError(f"height must be a multiple of 16, got {self.height}")
        return self


class TrainParams(Strict):
    design: Literal["lines", "page"] = Field(
        description="lines = segment into lines, CRNN + CTC a line (the `lines` block); page = the "
                    "whole image into an encoder-decoder (height ... max_len below)")
    lines: LineParams
    height: int = Field(ge=32, le=1024, description="input image height (pixels)")
    width: int = Field(ge=64, le=2048, description="input image width (pixels)")
    channels: list[Annotated[int, Field(ge=4, le=512)]] = Field(min_length=2, max_length=6,
                                                                description="CNN widths, one per stride-2 block")
    d_model: int = Field(ge=16, le=1024)
    heads: int = Field(ge=1, le=16)
    layers: int = Field(ge=1, le=12, description="decoder layers")
    ff: int = Field(ge=16, le=8192, description="decoder feed-forward width")
    dropout: float = Field(ge=0, lt=1, description="dropout on the decoder's residual and feed-forward paths")
    attn_dropout: float = Field(ge=0, lt=1, description="dropout on attention weights (costly on CPU)")
    max_len: int = Field(ge=16, le=2048, description="longest token sequence (longer labels are truncated)")
    batch_size: int = Field(ge=1, le=1024)
    bucket_pool: int = Field(ge=1, le=1000, description="batches per length-sorted pool (1 = no length bucketing)")
    threads: int = Field(ge=1, le=256, description="torch threads when OMP_NUM_THREADS is unset (the flow sets it)")
    steps: int = Field(ge=1, le=1_000_000, description="optimizer steps of the main model")
    lr: float = Field(gt=0, le=1, description="peak AdamW learning rate (linear warm-up, cosine decay)")
    warmup: int = Field(ge=0, description="warm-up steps")
    weight_decay: float = Field(ge=0, le=1)
    label_smoothing: float = Field(ge=0, lt=1, description="page design only")
    grad_clip: float = Field(gt=0)
    curve_fractions: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        description="training-set fractions of the learning curve (>= 3 sizes, or none: no curve); "
                    "its models are trained for the first verdict seed only")
    curve_steps: int = Field(ge=1, description="optimizer steps of each learning-curve model")
    workers: int = Field(ge=1, le=64, description="processes training the verdict seeds' models side by side "
                                                  "(``threads`` torch threads each)")

    @model_validator(mode="after")
    def _check(self) -> "TrainParams":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        if sorted(set(self.curve_fractions)) != list(self.curve_fractions):
            raise ValueError(f"curve_fractions must be strictly increasing, got {self.curve_fractions}")
        if 0 < len(self.curve_fractions) < 3:
            raise ValueError(f"curve_fractions: a learning curve needs >= 3 sizes (or none), got {self.curve_fractions}")
        return self


class EvaluateParams(Strict):
    beam_width: int = Field(ge=1, le=16, description="beam width of the beam-search figures (page design)")
    beam_images: int = Field(ge=0, description="test images (a split) also decoded by beam search (0 = none; page design)")
    retrieval_height: int = Field(ge=4, le=256, description="downsampled height of the retrieval baseline's pixel vectors")
    retrieval_width: int = Field(ge=4, le=1024, description="downsampled width of the retrieval baseline's pixel vectors")
    curve_images: int = Field(ge=4, description="printed test images the learning-curve models are scored on")
    examples: int = Field(ge=0, le=100, description="predictions written out per split for people to read")


# --------------------------------------------------------------------------- part 2: M2, M3, end to end
class M2TrainParams(Strict):
    """The learned LaTeX -> Pyomo seq2seq model (stages/autoopt/m2/seq2seq.py, m2/train.py)."""
    d_model: int = Field(ge=16, le=1024)
    heads: int = Field(ge=1, le=16)
    enc_layers: int = Field(ge=1, le=12, description="encoder layers")
    dec_layers: int = Field(ge=1, le=12, description="decoder layers")
    ff: int = Field(ge=16, le=8192, description="feed-forward width")
    dropout: float = Field(ge=0, lt=1)
    max_src_len: int = Field(ge=16, le=4096, description="longest LaTeX token sequence (longer are truncated)")
    max_tgt_len: int = Field(ge=16, le=8192, description="longest Pyomo token sequence (longer are truncated)")
    merges: int = Field(ge=0, le=5000, description="BPE merges learned on the target tokens (0 = none)")
    batch_size: int = Field(ge=1, le=1024)
    bucket_pool: int = Field(ge=1, le=1000, description="batches per length-sorted pool (1 = no length bucketing)")
    steps: int = Field(ge=1, le=1_000_000, description="optimizer steps")
    eval_every: int = Field(ge=1, description="steps between validation reports (and after the last step)")
    greedy_rows: int = Field(ge=0, le=20_000, description="validation rows decoded greedily at each report (exact match)")
    lr: float = Field(gt=0, le=1, description="peak AdamW learning rate (linear warm-up, cosine decay)")
    warmup: int = Field(ge=0, description="warm-up steps")
    weight_decay: float = Field(ge=0, le=1)
    label_smoothing: float = Field(ge=0, lt=1)
    grad_clip: float = Field(gt=0)
    threads: int = Field(ge=1, le=256, description="torch threads when OMP_NUM_THREADS is unset")

    @model_validator(mode="after")
    def _check(self) -> "M2TrainParams":
        if self.d_model % self.heads:
            raise ValueError(f"d_model ({self.d_model}) must be a multiple of heads ({self.heads})")
        if self.d_model % 2:
            raise ValueError(f"d_model ({self.d_model}) must be even (sinusoidal positions)")
        return self


class M2EvalParams(Strict):
    """Scoring both translators (stages/autoopt/m2/evaluate.py) in the sandbox."""
    translators: list[Literal["rules", "seq2seq"]] = Field(
        min_length=1, description="translators scored: rules (m2/rules.py), seq2seq (m2/seq2seq.py's checkpoint)")
    time_limit_s: float = Field(gt=0, le=600, description="wall-clock limit for one script in the sandbox")
    memory_mb: int = Field(ge=512, le=65536, description="address-space limit of a sandbox process (Python + Pyomo: ~50 MB)")
    workers: int = Field(ge=1, le=32, description="sandbox worker processes run side by side")
    points: int = Field(ge=1, le=1000, description="random points of the box where two models are compared")
    rel_tol: float = Field(gt=0, lt=1, description="relative tolerance of a value comparison")
    abs_tol: float = Field(gt=0, lt=1, description="absolute tolerance of a value comparison")
    max_rows: int = Field(ge=0, description="test rows a split scored (0 = all)")
    examples: int = Field(ge=0, le=100, description="translations written out per split for people to read")

    @model_validator(mode="after")
    def _check(self) -> "M2EvalParams":
        if len(set(self.translators)) != len(self.translators):
            raise ValueError(f"translators: each at most once, got {self.translators}")
        return self


class M3Params(Strict):
    """BOBD against IPOPT multi-start and a GA (stages/autoopt/m3/bobd.py, m3/evaluate.py)."""
    runs: int = Field(ge=1, le=1000, description="independent runs (seeds) of each method on each problem")
    rel_tol: float = Field(gt=0, lt=1, description="success: (f - best known) / max(1, |best known|) within this")
    feas_tol: float = Field(gt=0, lt=1, description="success: largest constraint violation within this")
    budget: int = Field(ge=10, le=10_000_000, description="BOBD's evaluation budget a run; the baselines get "
                                                           "the evaluations BOBD used")
    high_dim_budget: int = Field(ge=10, le=10_000_000, description="the same on the high-dimensional class "
                                                                    "(problems.high_dim(): 53-205 variables)")
    workers: int = Field(ge=1, le=64, description="processes running the problems (one thread each)")
    bobd_pop: int = Field(ge=4, le=1000, description="BOBD's upper-level GA / NSGA-II population")
    ga_pop: int = Field(ge=4, le=1000, description="the GA baseline's population")
    nsga_pop: int = Field(ge=4, le=1000, description="the NSGA-II reference's population")
    ipopt_max_iter: int = Field(ge=1, le=10_000, description="IPOPT iterations a solve (every method)")
    nonconvex_upper: bool = Field(description="also send smooth non-convex variables to BOBD's upper level")
    upper_ea: Literal["ga", "g3pcx"] = Field(description="BOBD's upper-level EA: pymoo's GA, or BLEAQ2's "
                                                          "steady-state PCX operators (m3/bobd.py _bobd_g3pcx)")
    problems: list[str] = Field(description="benchmark problems to run (empty = all)")
    multi: bool = Field(description="run the multi-objective set (hypervolume vs NSGA-II)")
    n_boot: int = Field(ge=100, le=1_000_000, description="bootstrap resamples of the paired BOBD-minus-baseline "
                                                          "difference (problems resampled within their class)")
    ci_level: float = Field(gt=0.5, lt=1, description="confidence level of that bootstrap interval")

    @model_validator(mode="after")
    def _check(self) -> "M3Params":
        from .m3.problems import MULTI, problem_names

        known = set(problem_names()) | set(MULTI)
        unknown = sorted(set(self.problems) - known)
        if unknown:
            raise ValueError(f"problems: unknown problem(s) {unknown}; known: {', '.join(sorted(known))}")
        return self


class E2EParams(Strict):
    """image -> M1 -> M2 (rule-based) -> M3 (BOBD) -> solution (stages/autoopt/chain/e2e.py)."""
    max_rows: int = Field(ge=0, description="test rows a split with a known optimum solved end to end (0 = all)")
    rel_tol: float = Field(gt=0, lt=1, description="success: relative gap to the known optimum within this")
    time_limit_s: float = Field(gt=0, le=3600, description="wall-clock limit for one problem in the sandbox")
    budget: int = Field(ge=10, le=10_000_000, description="BOBD's function-evaluation budget per problem")
    memory_mb: int = Field(ge=256, le=65536, description="address-space limit of a sandbox process")
    workers: int = Field(ge=1, le=64, description="sandbox processes solving in parallel")


class AutoOptParams(Strict):
    prepare: PrepareParams
    train: TrainParams
    evaluate: EvaluateParams
    m2_train: M2TrainParams
    m2_evaluate: M2EvalParams
    m3: M3Params
    e2e: E2EParams


PARAMS = AutoOptParams
