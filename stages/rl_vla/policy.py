"""The small vision-language-action policy, as a stable-baselines3 actor-critic policy.

The VLA is a features extractor over the Dict observation (:class:`VLAExtractor`): a per-cell patch
embedding of the image (a convolution with kernel = stride = the cell size), modulated channel-wise by
the instruction (FiLM: the instruction's word one-hots, as stable-baselines3 hands a MultiDiscrete
space over, through a linear map to a scale and a shift per channel), a 3x3 convolution, and a
linear layer to ``features`` units. The image is the wrist view (centred on the gripper), so where a
thing lies in it is where it lies relative to the gripper. The action head is stable-baselines3's ``action_net`` (a linear
layer to the 6 action logits); the critic (``value_net`` on its own copy of the extractor:
stable-baselines3's ``share_features_extractor=False``, so the critic's early, noisy gradients do not
disturb the SFT features) is used by PPO only. SFT, GRPO and DPO train the same module, so every
method starts from the same SFT weights and is evaluated through the same forward pass.
"""
from __future__ import annotations

import torch
from stable_baselines3.common.policies import ActorCriticPolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from torch import nn


class VLAExtractor(BaseFeaturesExtractor):
    def __init__(self, observation_space, cell: int = 6, channels: int = 16, features: int = 128):
        super().__init__(observation_space, features)
        img = observation_space["image"].shape            # (3, side, side)
        n_instr = int(sum(observation_space["instruction"].nvec))
        self.patch = nn.Conv2d(img[0], channels, kernel_size=cell, stride=cell)
        self.film = nn.Linear(n_instr, 2 * channels)
        self.conv = nn.Conv2d(channels, channels, kernel_size=3, padding=1)
        cells = (img[1] // cell) * (img[2] // cell)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(channels * cells, features), nn.ReLU())

    def forward(self, obs: dict) -> torch.Tensor:
        h = torch.relu(self.patch(obs["image"]))
        gamma, beta = self.film(obs["instruction"]).chunk(2, dim=1)
        h = torch.relu(h * (1 + gamma[:, :, None, None]) + beta[:, :, None, None])
        return self.head(torch.relu(self.conv(h)))


def policy_kwargs(cell: int, channels: int, features: int) -> dict:
    return {"features_extractor_class": VLAExtractor,
            "features_extractor_kwargs": {"cell": cell, "channels": channels, "features": features},
            "net_arch": {"pi": [], "vf": [64]}, "share_features_extractor": False}


def make_policy(observation_space, action_space, cell: int, channels: int, features: int) -> ActorCriticPolicy:
    """A fresh policy for SFT, GRPO, DPO and evaluation. The optimizer stable-baselines3 builds into
    it is never stepped (they use stages.common.optim.Adam), so it is ours too: torch.optim's first
    optimizer imports torch._dynamo (1.5 s of every stage that builds a policy). PPO's policy is
    built by stable-baselines3 itself, with torch's Adam."""
    from stages.common.optim import Adam

    return ActorCriticPolicy(observation_space, action_space, lambda _: 3e-4, optimizer_class=Adam,
                             **policy_kwargs(cell, channels, features))


def to_tensor(policy: ActorCriticPolicy, obs: dict) -> dict:
    """Batched numpy observations (``image`` N x 3 x H x W uint8, ``instruction`` N x L) -> the
    tensors the policy's networks take (stable-baselines3's preprocessing: /255, one-hot words)."""
    from stable_baselines3.common.preprocessing import preprocess_obs

    t = {k: torch.as_tensor(v) for k, v in obs.items()}
    return preprocess_obs(t, policy.observation_space, normalize_images=True)


def logits(policy: ActorCriticPolicy, obs_t: dict) -> torch.Tensor:
    """Action logits for preprocessed observations (what ``policy.get_distribution`` samples from)."""
    feats = policy.features_extractor(obs_t)
    return policy.action_net(policy.mlp_extractor.forward_actor(feats))


def state_bytes(policy: ActorCriticPolicy) -> bytes:
    import io

    buf = io.BytesIO()
    torch.save(policy.state_dict(), buf)
    return buf.getvalue()


def load_state(policy: ActorCriticPolicy, data: bytes) -> ActorCriticPolicy:
    import io

    policy.load_state_dict(torch.load(io.BytesIO(data), weights_only=True))
    return policy


def save_files(policy: ActorCriticPolicy, folder, env_kw: dict, arch: dict) -> dict:
    """Write ``weights.pt`` (the state dict) and ``config.json`` (env and architecture sizes) into
    ``folder``; returns the artifacts mapping for save_pyfunc."""
    import json
    from pathlib import Path

    folder = Path(folder)
    (folder / "weights.pt").write_bytes(state_bytes(policy))
    (folder / "config.json").write_text(json.dumps({"env": env_kw, "arch": arch}, sort_keys=True, indent=1))
    return {"weights": folder / "weights.pt", "config": folder / "config.json"}


def load_files(weights: str, config: str) -> ActorCriticPolicy:
    """The policy :func:`save_files` wrote."""
    import json
    from pathlib import Path

    from .env import PickPlaceEnv

    cfg = json.loads(Path(config).read_text())
    env = PickPlaceEnv(**cfg["env"])
    policy = make_policy(env.observation_space, env.action_space, cell=cfg["env"]["cell"], **cfg["arch"])
    return load_state(policy, Path(weights).read_bytes())


def greedy_actions(policy: ActorCriticPolicy, image, instruction):
    with torch.no_grad():
        lg = logits(policy, to_tensor(policy, {"image": image, "instruction": instruction}))
    return lg.argmax(1).numpy()
