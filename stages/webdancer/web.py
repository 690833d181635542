"""A synthetic website graph for an information-seeking agent (batched numpy world + gymnasium env).

A *site* is a full tree of pages: the home page (depth 0) has ``k`` links, each linked page has
``k`` links, down to ``depth`` levels. Every link carries a topic label (one of ``n_topics``; sibling
links have distinct labels, so the others are distractors) and every page shows one fact value
(one of ``n_values``). A *question* names a path of topics from the home page, "what is the fact
on home > t1 > t2 > t3?" (its depth is the path's length); the answer is the value on that page.

Observation (the agent's ReAct context, :data:`OBS_LEN` tokens of vocabulary :data:`VOCAB_SIZE`):
the question's topics (padded to ``depth``), the breadcrumb of the current page (the topics of the
links followed from home, padded), the labels of its ``k`` links and its fact value. Actions
(Discrete ``k + 1 + n_values``): ``click(i)`` follows link i (a page without links ignores it),
``back`` returns to the parent page, ``answer(v)`` ends the episode (reward 1 when v is the
answer, else 0). An episode is cut at ``max_steps`` with reward 0.

:class:`Batch` steps many episodes at once (one numpy indexing per step); :class:`WebEnv` is the
gymnasium view of one episode (``reset(seed=s)`` draws a site and a question from
``np.random.default_rng(s)``), registered as :data:`ENV_ID`.
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

ENV_ID = "claimbench/WebDancerSite-v0"
PAD = 0


def n_pages(k: int, depth: int) -> int:
    return sum(k ** d for d in range(depth + 1))


def tree(k: int, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The fixed shape of every site: ``children`` (pages x k, -1 for none), ``parent`` (-1 at
    home) and ``page_depth``; pages numbered breadth first."""
    n = n_pages(k, depth)
    children = -np.ones((n, k), dtype=np.int64)
    parent = -np.ones(n, dtype=np.int64)
    page_depth = np.zeros(n, dtype=np.int64)
    nxt = 1
    for p in range(n):
        if page_depth[p] < depth:
            for i in range(k):
                children[p, i], parent[nxt], page_depth[nxt] = nxt, p, page_depth[p] + 1
                nxt += 1
    return children, parent, page_depth


class Layout:
    """Token layout of the observation for one (k, depth, n_topics, n_values)."""

    def __init__(self, k: int, depth: int, n_topics: int, n_values: int):
        if k < 2 or depth < 1 or n_topics < k or n_values < 2:
            raise ValueError(f"need k >= 2, depth >= 1, n_topics >= k, n_values >= 2; got k={k}, depth={depth}, "
                             f"n_topics={n_topics}, n_values={n_values}")
        self.k, self.depth, self.n_topics, self.n_values = k, depth, n_topics, n_values
        self.topic0 = 1                          # topic t -> token 1 + t
        self.value0 = 1 + n_topics               # value v -> token value0 + v
        self.vocab = 1 + n_topics + n_values
        self.obs_len = 2 * depth + k + 1
        self.n_actions = k + 1 + n_values
        self.back = k
        self.answer0 = k + 1
        self.children, self.parent, self.page_depth = tree(k, depth)
        self.n_pages = len(self.parent)


def make_sites(lay: Layout, n: int, rng: np.random.Generator) -> dict:
    """``n`` random sites: ``label`` (sites x pages: the topic of the link into each page, -1 at
    home) and ``value`` (sites x pages)."""
    label = -np.ones((n, lay.n_pages), dtype=np.int64)
    for p in range(lay.n_pages):
        kids = lay.children[p]
        if kids[0] >= 0:
            label[:, kids] = np.argsort(rng.random((n, lay.n_topics)), axis=1)[:, :lay.k]
    value = rng.integers(0, lay.n_values, size=(n, lay.n_pages))
    return {"label": label, "value": value}


def breadcrumb(lay: Layout, label: np.ndarray, page: int) -> list[int]:
    """Topics of the links from home to ``page`` on a site with link labels ``label`` (1-D)."""
    out = []
    while page > 0:
        out.append(int(label[page]))
        page = int(lay.parent[page])
    return out[::-1]


def make_questions(lay: Layout, sites: dict, site_ids: np.ndarray, depths: np.ndarray,
                   rng: np.random.Generator) -> dict:
    """One question per (site, depth): a random page at that depth; returns ``site``, ``target``
    (page), ``depth``, ``answer``."""
    target = np.empty(len(site_ids), dtype=np.int64)
    for j, d in enumerate(depths):
        pages = np.flatnonzero(lay.page_depth == d)
        target[j] = pages[rng.integers(len(pages))]
    return {"site": np.asarray(site_ids, dtype=np.int64), "target": target, "depth": np.asarray(depths, dtype=np.int64),
            "answer": sites["value"][site_ids, target]}


class Batch:
    """Many episodes at once: the questions ``q`` (indices into ``questions``) on their sites."""

    def __init__(self, lay: Layout, sites: dict, questions: dict, idx: np.ndarray, max_steps: int):
        self.lay, self.max_steps = lay, max_steps
        self.site = questions["site"][idx]
        self.target = questions["target"][idx]
        self.answer = questions["answer"][idx]
        self.label = sites["label"][self.site]          # episodes x pages
        self.value = sites["value"][self.site]
        n = len(idx)
        self.qtok = np.zeros((n, lay.depth), dtype=np.int64)
        for j in range(n):
            bc = breadcrumb(lay, self.label[j], int(self.target[j]))
            self.qtok[j, :len(bc)] = np.asarray(bc) + lay.topic0
        self.page = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=bool)
        self.reward = np.zeros(n, dtype=np.float32)
        self.steps = np.zeros(n, dtype=np.int64)
        self.rows = np.arange(n)

    def obs(self) -> np.ndarray:
        lay, n = self.lay, len(self.page)
        out = np.zeros((n, lay.obs_len), dtype=np.int64)
        out[:, :lay.depth] = self.qtok
        # breadcrumb: walk up from the current page
        cur = self.page.copy()
        d = lay.page_depth[cur]
        for lvl in range(lay.depth, 0, -1):
            at = d == lvl
            out[at, lay.depth + lvl - 1] = self.label[self.rows[at], cur[at]] + lay.topic0
            cur = np.where(at, lay.parent[cur], cur)
            d = np.where(at, d - 1, d)
        kids = lay.children[self.page]                               # n x k
        has = kids >= 0
        lab = self.label[self.rows[:, None], np.where(has, kids, 0)] + lay.topic0
        out[:, 2 * lay.depth:2 * lay.depth + lay.k] = np.where(has, lab, PAD)
        out[:, -1] = self.value[self.rows, self.page] + lay.value0
        return out

    def step(self, action: np.ndarray) -> None:
        """Apply one action to every live episode (finished ones are left alone)."""
        lay = self.lay
        a = np.asarray(action, dtype=np.int64)
        live = ~self.done
        click = live & (a < lay.k)
        kids = lay.children[self.page, np.minimum(a, lay.k - 1)]
        self.page = np.where(click & (kids >= 0), kids, self.page)
        back = live & (a == lay.back) & (self.page > 0)
        self.page = np.where(back, lay.parent[self.page], self.page)
        ans = live & (a >= lay.answer0)
        self.reward[ans] = (a[ans] - lay.answer0 == self.answer[ans]).astype(np.float32)
        self.steps[live] += 1
        self.done |= ans | (self.steps >= self.max_steps)


def oracle_actions(lay: Layout, label: np.ndarray, value: np.ndarray, target: int, page: int) -> int:
    """The shortest-path (BFS on the tree) next action from ``page`` to answer at ``target``."""
    if page == target:
        return lay.answer0 + int(value[target])
    # is page an ancestor of target?
    anc, t = [], target
    while t >= 0:
        anc.append(t)
        t = int(lay.parent[t])
    if page not in anc:
        return lay.back
    nxt = anc[anc.index(page) - 1]
    return int(np.flatnonzero(lay.children[page] == nxt)[0])


def sample_trajectories(lay: Layout, sites: dict, questions: dict, noise: float, wrong_answer: float,
                        max_steps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict]:
    """Trajectory sampling with rejection: a noisy oracle (a random action with probability
    ``noise``, a random answer with probability ``wrong_answer`` when it answers) walks each
    question; only the trajectories that end with the right answer are kept (their observations
    and actions, the SFT data). Returns obs (steps x OBS_LEN), actions, and counts."""
    n = len(questions["site"])
    b = Batch(lay, sites, questions, np.arange(n), max_steps)
    obs_l, act_l, live_l = [], [], []
    while not b.done.all():
        o = b.obs()
        a = np.array([oracle_actions(lay, b.label[j], b.value[j], int(b.target[j]), int(b.page[j])) for j in range(n)])
        rnd = rng.random(n) < noise
        a = np.where(rnd, rng.integers(0, lay.k + 1, size=n), a)            # a random click or back
        is_ans = a >= lay.answer0
        wrong = is_ans & (rng.random(n) < wrong_answer)
        a = np.where(wrong, lay.answer0 + rng.integers(0, lay.n_values, size=n), a)
        obs_l.append(o)
        act_l.append(a)
        live_l.append(~b.done)
        b.step(a)
    keep = b.reward > 0
    live = np.stack(live_l, 1) & keep[:, None]                              # episodes x steps
    obs = np.stack(obs_l, 1)[live]
    act = np.stack(act_l, 1)[live]
    return obs, act, {"sampled": n, "kept": int(keep.sum()), "steps": int(live.sum())}


class WebEnv(gym.Env):
    """One episode of the website world, gymnasium API. ``reset(seed=s)`` draws a site and a
    question of a depth in ``depths`` from ``np.random.default_rng(s)``."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 2}

    def __init__(self, k: int = 3, depth: int = 3, n_topics: int = 12, n_values: int = 8, max_steps: int = 10,
                 depths: tuple[int, ...] | None = None, render_mode: str | None = None):
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.lay = Layout(k, depth, n_topics, n_values)
        self.depths = tuple(depths or range(1, depth + 1))
        self.max_steps, self.render_mode = max_steps, render_mode
        self.observation_space = spaces.MultiDiscrete(np.full(self.lay.obs_len, self.lay.vocab))
        self.action_space = spaces.Discrete(self.lay.n_actions)
        self.b = None

    def load(self, sites: dict, questions: dict, index: int) -> np.ndarray:
        """Start the episode of one stored question (for rendering a given rollout)."""
        self.b = Batch(self.lay, sites, questions, np.array([index]), self.max_steps)
        return self.b.obs()[0]

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        rng = self.np_random
        sites = make_sites(self.lay, 1, rng)
        d = np.array([self.depths[rng.integers(len(self.depths))]])
        q = make_questions(self.lay, sites, np.zeros(1, dtype=np.int64), d, rng)
        return self.load(sites, q, 0), {"depth": int(d[0])}

    def step(self, action):
        if self.b is None:
            raise RuntimeError("call reset() before step()")
        if self.b.done[0]:
            raise RuntimeError("the episode is over; call reset()")
        self.b.step(np.array([int(action)]))
        done = bool(self.b.done[0])
        truncated = done and int(action) < self.lay.answer0
        return self.b.obs()[0], float(self.b.reward[0]), done and not truncated, truncated, {}

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return render_site(self.lay, self.b.label[0], int(self.b.page[0]), int(self.b.target[0]))


def render_site(lay: Layout, label: np.ndarray, page: int, target: int, cell: int = 8) -> np.ndarray:
    """The site as a picture: one row of page boxes per depth, each box tinted by its link's topic;
    the current page outlined white, the question's target page outlined red."""
    width = lay.k ** lay.depth
    img = np.full(((lay.depth + 1) * cell * 2, width * cell * 2, 3), 20, dtype=np.uint8)
    first = 0
    for d in range(lay.depth + 1):
        cnt = lay.k ** d
        span = width // cnt
        for i in range(cnt):
            p = first + i
            y0, x0 = d * cell * 2 + cell // 2, (i * span + span // 2) * cell * 2 // 1
            x0 = min(x0, img.shape[1] - cell)
            t = int(label[p]) if p > 0 else -1
            col = (120, 120, 120) if t < 0 else (40 + (t * 53) % 200, 40 + (t * 97) % 200, 40 + (t * 151) % 200)
            img[y0:y0 + cell, x0:x0 + cell] = col
            for ring, mark in ((p == target, (230, 40, 40)), (p == page, (255, 255, 255))):
                if ring:
                    img[y0 - 1:y0 + cell + 1, x0 - 1] = mark
                    img[y0 - 1:y0 + cell + 1, x0 + cell] = mark
                    img[y0 - 1, x0 - 1:x0 + cell + 1] = mark
                    img[y0 + cell, x0 - 1:x0 + cell + 1] = mark
        first += cnt
    return img


gym.register(id=ENV_ID, entry_point=WebEnv)
