"""A 2-D pick-and-place world for a vision-language-action policy (gymnasium environment).

The table is a ``grid x grid`` board. On it lie two blocks and two plates (four distinct cells, never
in the gripper's start row); the gripper starts empty. The instruction is a templated command,
"put the <colour> block on the <colour> plate", naming one block (the target) and one plate; the
other block and plate are distractors of other colours.

Observation (a Dict): ``image``, the scene seen from a wrist camera, a channel-first RGB uint8
picture of (2 grid - 1) x (2 grid - 1) cells centred on the gripper, off-table cells dark (``cell``
pixels a cell: the gripper is the outer ring of its cell, white when open, cyan when closed, a plate the next ring, a block the 2x2
centre; a held block is drawn in the gripper's cell), and ``instruction``, the command's word ids
(:data:`VOCAB`), fixed length :data:`INSTR_LEN`. Actions (Discrete 6): up, down, left, right, pick,
place. ``pick`` takes the block under an empty gripper; ``place`` puts the held block down: on a
plate it ends the episode (success when it is the target block on the target plate, reward 1),
elsewhere the block stays there and can be picked again. An episode is cut at ``max_steps``.

A *split* fixes the distribution of episodes (:data:`SPLITS`); the training split and the three
shifted splits are disjoint by construction (tests check it on the episodes' specs):

* ``train``: table colours :data:`TRAIN_TABLES`, (target block, target plate) colour pairs in
  :data:`TRAIN_PAIRS`, gripper starting in row 0, no perturbation.
* ``visual``: as train, but unseen table colours with a pixel texture and a distractor patch
  pattern (:data:`VISUAL_TABLES`).
* ``semantic``: as train, but the target pairs are the held-out combinations :data:`HELDOUT_PAIRS`
  (each word was seen in training, in both roles, never together).
* ``execution``: as train, but the gripper starts in rows it never starts from in training
  (rows >= 2) and, once, mid-episode (step :data:`REPOSITION_STEP`), the target block is moved to
  another free cell if it is not held (the paper's changed initial pose + mid-episode object
  reposition).
* ``unseen_word``: a control: the target block has a colour (purple) whose word never appears in
  training; nothing learnt can ground it.

``reset(seed=s)`` draws the episode from ``np.random.default_rng(s)``: the same seed gives the same
episode. :func:`episode_spec` gives the episode's defining tuple (for the disjointness tests).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

ENV_ID = "claimbench/RlVlaPickPlace-v0"

COLOURS = {"red": (220, 40, 40), "green": (40, 190, 60), "blue": (50, 90, 230), "yellow": (230, 210, 40),
           "purple": (160, 60, 200)}
OBJECT_COLOURS = ("red", "green", "blue", "yellow")          # the colours of training objects
WORDS = ("<pad>", "put", "the", "block", "on", "plate", *COLOURS)
VOCAB = {w: i for i, w in enumerate(WORDS)}
INSTR_LEN = 8
ACTIONS = ("up", "down", "left", "right", "pick", "place")
MOVES = {0: (-1, 0), 1: (1, 0), 2: (0, -1), 3: (0, 1)}
PICK, PLACE = 4, 5

# held-out (block, plate) pairs: a derangement, so every colour is a block and a plate of some training pair
HELDOUT_PAIRS = (("red", "green"), ("green", "blue"), ("blue", "yellow"), ("yellow", "red"))
TRAIN_PAIRS = tuple((b, p) for b in OBJECT_COLOURS for p in OBJECT_COLOURS
                    if b != p and (b, p) not in HELDOUT_PAIRS)
TRAIN_TABLES = ((90, 90, 90), (110, 95, 75), (75, 85, 100))
VISUAL_TABLES = ((40, 70, 55), (150, 140, 150), (95, 60, 80))
GRIPPER = (255, 255, 255)            # open
GRIPPER_CLOSED = (0, 230, 230)       # holding a block
WALL = (15, 15, 15)
REPOSITION_STEP = 3
SPLITS = ("train", "visual", "semantic", "execution", "unseen_word")


def instruction_ids(block: str, plate: str) -> np.ndarray:
    words = ["put", "the", block, "block", "on", "the", plate, "plate"]
    return np.array([VOCAB[w] for w in words], dtype=np.int64)


def draw_episode(rng: np.random.Generator, split: str, grid: int) -> dict:
    """The random parts of one episode of ``split`` (cells are (row, col))."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if split == "semantic":
        block, plate = HELDOUT_PAIRS[rng.integers(len(HELDOUT_PAIRS))]
    elif split == "unseen_word":
        block, plate = "purple", OBJECT_COLOURS[rng.integers(len(OBJECT_COLOURS))]
    else:
        block, plate = TRAIN_PAIRS[rng.integers(len(TRAIN_PAIRS))]
    others = [c for c in OBJECT_COLOURS if c not in (block, plate)]
    d_block, d_plate = (others[i] for i in rng.permutation(len(others))[:2])
    cells = [(r, c) for r in range(1, grid) for c in range(grid)]
    pick = rng.choice(len(cells), size=4, replace=False)
    tb, db, tp, dp = (cells[i] for i in pick)
    if split == "execution":
        gripper = (int(rng.integers(2, grid)), int(rng.integers(grid)))
    else:
        gripper = (0, int(rng.integers(grid)))
    tables = VISUAL_TABLES if split == "visual" else TRAIN_TABLES
    table = tables[rng.integers(len(tables))]
    return {"split": split, "block": block, "plate": plate, "d_block": d_block, "d_plate": d_plate,
            "blocks": {block: tuple(map(int, tb)), d_block: tuple(map(int, db))},
            "plates": {plate: tuple(map(int, tp)), d_plate: tuple(map(int, dp))},
            "gripper": tuple(map(int, gripper)), "table": tuple(int(v) for v in table),
            "texture_seed": int(rng.integers(2**31)) if split == "visual" else None,
            "reposition": split == "execution"}


def episode_spec(ep: dict) -> tuple:
    """What defines an episode: the target pair, the table colour, the gripper start row, whether it
    is perturbed (the axes along which the splits differ)."""
    return (ep["block"], ep["plate"], ep["table"], ep["gripper"][0], ep["reposition"], ep["texture_seed"] is not None)


class PickPlaceEnv(gym.Env):
    metadata = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(self, split: str = "train", grid: int = 6, cell: int = 6, max_steps: int = 30,
                 action_noise: float = 0.0, render_mode: str | None = None):
        if split not in SPLITS:
            raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
        if not 4 <= grid <= 12:
            raise ValueError(f"grid must be in [4, 12], got {grid}")
        if cell < 6:
            raise ValueError(f"cell must be >= 6 pixels (three rings), got {cell}")
        if max_steps < 1:
            raise ValueError(f"max_steps must be >= 1, got {max_steps}")
        if not 0 <= action_noise < 1:
            raise ValueError(f"action_noise must be in [0, 1), got {action_noise}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.split, self.grid, self.cell, self.max_steps = split, grid, cell, max_steps
        self.action_noise, self.render_mode = action_noise, render_mode
        side = (2 * grid - 1) * cell                       # the wrist view: centred on the gripper
        self.observation_space = spaces.Dict({
            "image": spaces.Box(0, 255, (3, side, side), np.uint8),
            "instruction": spaces.MultiDiscrete([len(WORDS)] * INSTR_LEN)})
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.ep: dict | None = None

    # --- dynamics -------------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.ep = draw_episode(self.np_random, self.split, self.grid)
        self.gripper = self.ep["gripper"]
        self.blocks = dict(self.ep["blocks"])
        self.held: str | None = None
        self.t = 0
        self._background = self._table_image()
        return self._obs(), {"split": self.split}

    def step(self, action):
        if self.ep is None:
            raise RuntimeError("call reset() before step()")
        action = int(action)
        if not 0 <= action < len(ACTIONS):
            raise ValueError(f"action must be in [0, {len(ACTIONS)}), got {action}")
        if self.action_noise and self.np_random.random() < self.action_noise:
            action = int(self.np_random.integers(4))
        self.t += 1
        reward, terminated = 0.0, False
        if action in MOVES:
            dr, dc = MOVES[action]
            r, c = self.gripper
            self.gripper = (min(max(r + dr, 0), self.grid - 1), min(max(c + dc, 0), self.grid - 1))
        elif action == PICK:
            if self.held is None:
                here = [b for b, pos in self.blocks.items() if pos == self.gripper]
                if here:
                    self.held = here[0]
                    del self.blocks[self.held]
        elif self.held is not None:                       # place
            on_plate = [p for p, pos in self.ep["plates"].items() if pos == self.gripper]
            if on_plate:
                terminated = True
                reward = float(self.held == self.ep["block"] and on_plate[0] == self.ep["plate"])
                self.blocks[self.held] = self.gripper
                self.held = None
            elif self.gripper not in self.blocks.values():
                self.blocks[self.held] = self.gripper
                self.held = None
        if self.ep["reposition"] and self.t == REPOSITION_STEP and self.ep["block"] in self.blocks:
            self._reposition()
        truncated = not terminated and self.t >= self.max_steps
        return self._obs(), reward, terminated, truncated, {"success": reward > 0}

    def _reposition(self) -> None:
        taken = set(self.blocks.values()) | set(self.ep["plates"].values()) | {self.gripper}
        free = [(r, c) for r in range(1, self.grid) for c in range(self.grid) if (r, c) not in taken]
        self.blocks[self.ep["block"]] = free[int(self.np_random.integers(len(free)))]

    # --- pictures ----------------------------------------------------------------------------
    def _table_image(self) -> np.ndarray:
        side = self.grid * self.cell
        img = np.empty((side, side, 3), np.uint8)
        img[:] = self.ep["table"]
        if self.ep["texture_seed"] is not None:          # unseen texture + distractor pattern
            trng = np.random.default_rng(self.ep["texture_seed"])
            noise = trng.integers(-25, 26, size=(side, side, 1))
            img = np.clip(img.astype(np.int16) + noise, 0, 255).astype(np.uint8)
            img[::self.cell, :, :] = (img[::self.cell, :, :] // 2)        # grid lines
        return img

    def wrist_view(self) -> np.ndarray:
        """The scene seen from the gripper: (2 grid - 1) cells a side, the gripper's cell in the
        centre, off-table cells in :data:`WALL`; height x width x 3 uint8."""
        k, g = self.cell, self.grid
        pad = np.empty(((3 * g - 2) * k, (3 * g - 2) * k, 3), np.uint8)
        pad[:] = WALL
        pad[(g - 1) * k:(2 * g - 1) * k, (g - 1) * k:(2 * g - 1) * k] = self.picture()
        r, c = self.gripper
        return pad[r * k:(r + 2 * g - 1) * k, c * k:(c + 2 * g - 1) * k]

    def _obs(self) -> dict:
        return {"image": np.ascontiguousarray(self.wrist_view().transpose(2, 0, 1)),
                "instruction": instruction_ids(self.ep["block"], self.ep["plate"])}

    def picture(self) -> np.ndarray:
        """The scene, height x width x 3 uint8."""
        img = self._background.copy()
        k = self.cell
        mid = k // 2

        def box(pos, inset, colour, size=None):
            r, c = pos[0] * k, pos[1] * k
            if size is None:
                img[r + inset:r + k - inset, c + inset:c + k - inset] = colour
            else:
                img[r + mid - size // 2:r + mid - size // 2 + size, c + mid - size // 2:c + mid - size // 2 + size] = colour

        def ring(pos, inset, colour):
            box(pos, inset, colour)
            r, c = pos[0] * k, pos[1] * k
            img[r + inset + 1:r + k - inset - 1, c + inset + 1:c + k - inset - 1] = self._background[
                r + inset + 1:r + k - inset - 1, c + inset + 1:c + k - inset - 1]

        ring(self.gripper, 0, GRIPPER if self.held is None else GRIPPER_CLOSED)
        for p, pos in self.ep["plates"].items():
            ring(pos, 1, COLOURS[p])
        for b, pos in self.blocks.items():
            box(pos, 0, COLOURS[b], size=2)
        if self.held is not None:
            box(self.gripper, 0, COLOURS[self.held], size=2)
        return img

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        return np.kron(self.picture(), np.ones((4, 4, 1), np.uint8))        # 4x upscaled for viewing

    # --- the scripted expert --------------------------------------------------------------------
    def expert_action(self) -> int:
        """The scripted demonstrator: to the target block (columns first, then rows), pick, to the
        target plate (columns first, then rows), place."""
        goal = self.ep["plates"][self.ep["plate"]] if self.held == self.ep["block"] else self.blocks.get(self.ep["block"])
        if self.held is not None and self.held != self.ep["block"]:
            goal = None                                    # holding the wrong block: put it down
        if goal is None:
            return PLACE if self.gripper not in self.ep["plates"].values() else 3 if self.gripper[1] < self.grid - 1 else 2
        r, c = self.gripper
        if c != goal[1]:
            return 3 if goal[1] > c else 2
        if r != goal[0]:
            return 1 if goal[0] > r else 0
        return PLACE if self.held is not None else PICK


gym.register(id=ENV_ID, entry_point=PickPlaceEnv)


def expert_demos(n: int, seed0: int, env_kw: dict) -> dict:
    """``n`` expert episodes on the training split (reset seeds seed0 .. seed0 + n - 1): stacked
    observations and the expert's actions."""
    env = PickPlaceEnv(split="train", **env_kw)
    images, instr, actions = [], [], []
    for i in range(n):
        obs, _ = env.reset(seed=seed0 + i)
        done = False
        while not done:
            a = env.expert_action()
            images.append(obs["image"])
            instr.append(obs["instruction"])
            actions.append(a)
            obs, _, term, trunc, _ = env.step(a)
            done = term or trunc
    return {"image": np.stack(images), "instruction": np.stack(instr), "action": np.array(actions, np.int64)}
