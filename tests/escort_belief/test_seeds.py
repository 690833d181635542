"""Seeds as an axis (docs/VERDICTS.md, section 1): the verdict seeds run as one batch give every
seed the figures it gets alone (bit for bit); the per_seed metrics layout the ledger reads; the
claims over the seeds, with the must's control."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stages.common.runtime.params import load_study
from stages.escort_belief.batch import SeedRngs, as_rows, split, stack
from stages.escort_belief.params import EscortBeliefParams

REPO = Path(__file__).resolve().parents[2]
SEEDS = [1000, 1001, 1002]                      # calibration seeds (any seed would do in a test)


@pytest.fixture(scope="module")
def tiny(real_params):
    """The smoke profile, smaller still: two dims, ragged replications, few iterations."""
    _, p = load_study("escort_belief", EscortBeliefParams, real_params, profile="smoke")
    pp = p.prepare.model_copy(update={"dims": [2, 5], "reps": 2, "reps_dmax": 3, "steps": 2, "eval_samples": 60})
    stein = p.train.stein.model_copy(update={"iters": 6})
    ld = p.train.lightdark.model_copy(update={"episodes": 5, "horizon": 6, "particles": 12,
                                              "stein": stein})
    tp = p.train.model_copy(update={"particles": 12, "stein": stein, "lightdark": ld,
                                    "escort_official": p.train.escort_official.model_copy(update={"iters": 41})})
    return pp, tp, p.evaluate


def _problems(pp, seeds) -> dict:
    from stages.escort_belief.prepare import build_problems

    return {f"s{s}/{k}": v for s in seeds for k, v in build_problems(pp, s).items()}


def test_seed_rngs_draw_each_block_from_its_seed():
    rows = SeedRngs.of([7, 8], [2, 3], 12, 5)
    got = rows.standard_normal((5, 4))
    assert np.array_equal(got[:2], np.random.default_rng([7, 12, 5]).standard_normal((2, 4)))
    assert np.array_equal(got[2:], np.random.default_rng([8, 12, 5]).standard_normal((3, 4)))
    assert rows.random(5).shape == (5,)
    assert rows.row(1) is rows.gens[0] and rows.row(2) is rows.gens[1]
    sub = rows.subset(np.array([3, 4]))
    assert sub.gens == [rows.gens[1]] and sub.counts == [2]
    with pytest.raises(ValueError, match="draws for 4 rows, the batch has 5"):
        rows.standard_normal((4, 2))
    plain = np.random.default_rng(0)
    assert as_rows(plain, 3).gens == [plain] and as_rows(rows, 5) is rows


def test_stack_and_split_are_inverse():
    parts = [np.arange(6).reshape(2, 3), np.arange(3).reshape(1, 3), np.ones((4, 3))]
    batch, counts = stack(parts)
    assert counts == [2, 1, 4] and all(np.array_equal(a, b) for a, b in zip(split(batch, counts), parts))


def test_seed_groups_keep_whole_seeds_within_the_cache():
    from stages.escort_belief.batch import seed_groups

    # n = 100: a (rows, 100, 100) float64 array is 80 kB a row, 2 MiB hold 26 rows
    assert seed_groups([20] * 5, 100) == [[0], [1], [2], [3], [4]]          # d = 20: a seed a batch
    assert seed_groups([3] * 5, 100) == [[0, 1, 2, 3, 4]]                   # small dims: all together
    assert seed_groups([32] * 5, 50) == [[0, 1, 2], [3, 4]]                 # light-dark: 104 rows a batch
    assert seed_groups([40, 1], 100) == [[0], [1]]                          # a seed too big goes alone
    assert seed_groups([2, 2, 2], 100, cache_bytes=float("inf")) == [[0, 1, 2]]


def test_grouping_of_the_seeds_changes_no_figure(tiny):
    from stages.escort_belief.train import run_episodes_seeds, run_mixture_seeds, stein_config

    pp, tp, _ = tiny
    arr = _problems(pp, SEEDS)
    row = 8 * tp.particles ** 2                                             # bytes of a row's kernel matrix
    one, _ = run_mixture_seeds(arr, 5, tp, SEEDS, cache_bytes=float("inf"))
    split_up, _ = run_mixture_seeds(arr, 5, tp, SEEDS, cache_bytes=4 * row)  # 3 + 3 rows: a seed a batch
    assert all(np.array_equal(one[s][k], split_up[s][k]) for s in SEEDS for k in one[s])
    cfg = stein_config(tp.lightdark.stein, tp.escort)
    lp = tp.lightdark
    a = run_episodes_seeds("escort", lp, cfg, SEEDS, cache_bytes=float("inf"))
    b = run_episodes_seeds("escort", lp, cfg, SEEDS, cache_bytes=8 * lp.particles ** 2 * 2 * lp.episodes)
    assert all(np.array_equal(a[s][k], b[s][k]) for s in SEEDS for k in a[s])


def test_mixture_seeds_in_one_batch_equal_each_seed_alone(tiny):
    """Every method (the PF's resampling, SVGD, ESCORT, the official update with its low-density
    resampling and GSWD draws) gives each seed's particles bit for bit as that seed run alone."""
    from stages.escort_belief.keys import MIXTURE_METHODS
    from stages.escort_belief.train import run_mixture

    pp, tp, _ = tiny
    arr = _problems(pp, SEEDS)
    for d in pp.dims:
        batch, _ = run_mixture(arr, d, tp, SEEDS)
        for s in SEEDS:
            alone, _ = run_mixture(arr, d, tp, [s])
            assert set(batch[s]) == set(MIXTURE_METHODS) | {"pf_w"}
            for k, v in alone[s].items():
                assert v.shape[0] == pp.reps_at(d) and np.array_equal(batch[s][k], v), (d, s, k)


def test_lightdark_seeds_in_one_batch_equal_each_seed_alone(tiny):
    from stages.escort_belief.keys import METHODS
    from stages.escort_belief.lightdark import run_episodes
    from stages.escort_belief.train import stein_config

    _, tp, _ = tiny
    lp = tp.lightdark
    for method in METHODS:
        cfg = None if method == "pf" else stein_config(lp.stein, tp.escort if method == "escort" else None)
        batch = run_episodes(method, lp, cfg, SEEDS)
        for s in SEEDS:
            alone = run_episodes(method, lp, cfg, [s])[s]
            assert len(batch[s]["returns"]) == lp.episodes
            for k, v in alone.items():
                assert np.array_equal(batch[s][k], v), (method, s, k)


def test_a_stopped_batch_draws_nothing_more():
    """The official update stops a batch whose particles no longer move; from then on it draws
    nothing, so a seed's generator is left as it is when the seed runs alone (and its loop ends)."""
    from stages.escort_belief.stein import OfficialConfig, official_update

    rng = np.random.default_rng(3)
    still = 1000.0 + (100.0 * np.arange(12))[None, :, None] * np.ones((1, 1, 2))   # far apart: no kernel, no move
    moving = rng.standard_normal((1, 12, 2))

    def logp_score(Y):
        """A standard Gaussian's near 0; far out (the still batch) no pull, and densities that fall
        along the first axis, so a resampling there would find low-density particles and draw."""
        far = np.abs(Y[..., 0]) > 500
        logp = np.where(far, -(Y[..., 0] - 1000.0) / 30.0, -0.5 * (Y ** 2).sum(-1))
        return logp, np.where(np.abs(Y) > 500, 0.0, -Y)

    cfg = OfficialConfig(iters=41, tol=1e-9)
    X = np.concatenate([still, moving])
    rows = SeedRngs.of([1, 2], [1, 1], 9)
    out = official_update(X, logp_score, cfg, rows)
    assert np.array_equal(out[0], still[0])
    alone_gen = np.random.default_rng([1, 9])
    official_update(still, logp_score, cfg, SeedRngs([alone_gen], [1]))
    assert rows.gens[0].random() == alone_gen.random()                  # same state: no draw was made
    alone = official_update(moving, logp_score, cfg, SeedRngs.of([2], [1], 9))
    assert np.array_equal(out[1], alone[0])


def _seed_figures(seed: int) -> dict:
    """A seed's figures shaped as evaluate.summarise + lightdark_metrics write them (numbers made up)."""
    r = 0.6 + 0.01 * seed
    ci = {"ratio": r, "low": r - 0.1, "high": r + 0.1, "n": 3, "n_boot": 100}
    return {"ratios": {"mmd": {"escort_over_pf_dmax": r, "svgd_over_pf_dmax": r + 0.05, "escort_over_svgd_dmax": 0.98,
                               "escort_official_over_pf_dmax": 0.4, "escort_over_pf_dmax_reps": [r, r, r],
                               "escort_over_pf_dmax_ci": ci, "escort_over_pf_dmax_ci_low": r - 0.1,
                               "escort_over_pf_dmax_ci_high": r + 0.1}},
            "mmd": {"pf": {"d20": {"final": 0.4 + seed, "final_ci": [0.3, 0.5], "final_reps": [0.4, 0.4]}}},
            "lightdark": {"escort_margin": -40.0 + seed, "best": "pf",
                          "escort": {"return": -30.0, "return_ci": [-35.0, -25.0]}}}


def test_per_seed_layout_keeps_within_seed_figures_out_of_the_aggregate():
    from stages.escort_belief.evaluate import seed_metrics

    m = seed_metrics({s: _seed_figures(s) for s in (0, 1)}, dims=[2, 20], dmax=20, reps_dmax=3)
    assert m["seeds"] == [0, 1] and set(m["per_seed"]) == {"0", "1"} and m["dims"] == [2, 20]
    assert m["ratios"]["mmd"]["escort_over_pf_dmax"] == pytest.approx(0.605)    # the mean over the seeds
    assert m["lightdark"]["escort_margin"] == pytest.approx(-39.5) and m["lightdark"]["best"] == "pf"
    # per replication values and within-seed intervals stay per seed: their mean over seeds means nothing
    for key in ("escort_over_pf_dmax_reps", "escort_over_pf_dmax_ci", "escort_over_pf_dmax_ci_low"):
        assert key not in m["ratios"]["mmd"] and key in m["per_seed"]["1"]["ratios"]["mmd"]
    assert "final_ci" not in m["mmd"]["pf"]["d20"] and "return_ci" not in m["lightdark"]["escort"]
    assert m["per_seed"]["1"]["ratios"]["mmd"]["escort_over_pf_dmax_ci"]["high"] == pytest.approx(0.71)


def test_claims_read_every_seed_and_the_must_names_svgd_as_its_control():
    from stages.common.claims import ClaimsFileV2, evaluate, load_claims
    from stages.escort_belief.evaluate import seed_metrics

    cf = load_claims(REPO / "stages/escort_belief/claims.yaml")
    assert isinstance(cf, ClaimsFileV2)
    must = [c for c in cf.claims if c.level == "must"]
    assert [c.id for c in must] == ["escort_beats_pf_high_dim"]
    assert must[0].control == "ratios.mmd.svgd_over_pf_dmax" and must[0].rule == "interval"
    assert must[0].metric == "ratios.mmd.escort_over_pf_dmax" and must[0].threshold == 0.5   # unchanged (audit)
    seeds = [0, 1, 2, 3, 4]
    figs = {s: _seed_figures(s) for s in seeds}
    rows = {r["id"]: r for r in evaluate(cf, seed_metrics(figs, dims=[20]), seeds)}
    row = rows["escort_beats_pf_high_dim"]
    assert row["n"] == 5 and row["verdict"] == "fails" and row["control"]["verdict"] == "fails"
    assert row["per_seed"] == {str(s): pytest.approx(0.6 + 0.01 * s) for s in seeds}
    # a planted control that passes as clearly as ESCORT: the check does not see ESCORT's idea
    for s in seeds:
        figs[s]["ratios"]["mmd"].update(escort_over_pf_dmax=0.3 + 0.01 * s, svgd_over_pf_dmax=0.31 + 0.01 * s)
    row = {r["id"]: r for r in evaluate(cf, seed_metrics(figs, dims=[20]), seeds)}["escort_beats_pf_high_dim"]
    assert row["control"]["verdict"] == "holds" and row["verdict"] == "not specific"


def test_evaluate_merges_the_train_shards_and_refuses_a_stale_one(tmp_path):
    """The matrix stage's shards (seeds 0, 2 and 1) read back as one set; a shard folder left by an
    older shard count, holding a seed again, is refused by name."""
    import json

    from stages.common.io import write_json, write_npz
    from stages.escort_belief.evaluate import read_shards

    for i, seeds in ((0, [0, 2]), (1, [1])):
        d = tmp_path / f"shard-{i}"
        write_npz(d / "particles.npz", {f"s{s}/d2/pf": np.full((1, 2), s, float) for s in seeds})
        write_json(d / "lightdark.json", {str(s): {"pf": {"returns": [s]}} for s in seeds})
    parts, ld = read_shards(tmp_path, [0, 1, 2])
    assert sorted(parts) == ["s0/d2/pf", "s1/d2/pf", "s2/d2/pf"] and parts["s2/d2/pf"][0, 0] == 2
    assert sorted(ld) == ["0", "1", "2"]
    with pytest.raises(ValueError, match=r"missing \[3\]"):
        read_shards(tmp_path, [0, 1, 2, 3])
    stale = tmp_path / "shard-2"
    write_npz(stale / "particles.npz", {"s2/d2/pf": np.zeros((1, 2))})
    (stale / "lightdark.json").write_text(json.dumps({"2": {}}))
    with pytest.raises(ValueError, match="seed 2 is in two shards' outputs: shard-0 and shard-2"):
        read_shards(tmp_path, [0, 1, 2])
    with pytest.raises(ValueError, match="no shard-<i>/ folder"):
        read_shards(tmp_path / "nothing", [0])
