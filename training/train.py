"""Stage 2: train the call network (embedding sequence -> token posteriors, CTC) and write
the shipped weights.

    python -m training.train --data build/speech --out companion/listen/call_model.npz \
        [--leave-out FAMILY] [--hold-out-speaker lucas] [--epochs 30] [--seed 22]

The network is the one `companion.listen.network` runs with numpy: a projection, residual
dilated 1-D convolutions over time, and a token layer. Whole voice families can be left out
(`--leave-out`), and one real speaker always is, so a model can be scored on voices it never
heard. The command, seed and data summary are written into the model's card.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from companion.listen.network import DILATIONS, KERNEL
from companion.listen.tokens import TOKENS
from training.build import HELD_OUT_SPEAKER, load

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover - the message is the point
    raise SystemExit("training needs torch: pip install -e '.[train]'") from None


class CallNet(nn.Module):
    def __init__(self, width: int, tokens: int = len(TOKENS), dropout: float = 0.15) -> None:
        super().__init__()
        self.project = nn.Conv1d(96, width, 1)
        self.convs = nn.ModuleList(nn.Conv1d(width, width, KERNEL, dilation=d, padding=d)
                                   for d in DILATIONS)
        self.out = nn.Conv1d(width, tokens, 1)
        self.drop = nn.Dropout(dropout)

    def forward(self, x: "torch.Tensor") -> "torch.Tensor":  # (B, 96, T) -> (B, V, T)
        h = torch.relu(self.project(x))
        for conv in self.convs:
            h = h + self.drop(torch.relu(conv(h)))
        return self.out(h)


def perturb(x: "torch.Tensor", rng: np.random.Generator, noise: float, masks: int) -> "torch.Tensor":
    """Embedding-level augmentation: Gaussian noise on the normalised vectors and a few
    short stretches of frames set to the mean (SpecAugment's time masks), so the network
    cannot lean on any one frame of a voice it knows."""
    if noise > 0:
        x = x + noise * torch.randn_like(x)
    for _ in range(masks):
        width = int(rng.integers(1, 4))
        for b in range(x.shape[0]):
            start = int(rng.integers(0, max(x.shape[2] - width, 1)))
            x[b, :, start:start + width] = 0.0
    return x


def batches(feats, labels, order, size):
    for start in range(0, len(order), size):
        idx = order[start:start + size]
        T = max(len(feats[i]) for i in idx)
        x = np.zeros((len(idx), 96, T), np.float32)
        for j, i in enumerate(idx):
            x[j, :, :len(feats[i])] = feats[i].T
        yield (torch.from_numpy(x), torch.tensor([len(feats[i]) for i in idx]),
               torch.from_numpy(np.concatenate([labels[i] for i in idx])),
               torch.tensor([len(labels[i]) for i in idx]))


def split(data: list[dict], leave_out: set[str], speaker: str):
    """Training clips: every family but those left out, real speakers but one, and four
    in five of the noise clips (the fifth fits the confidence)."""
    feats, labels = [], []
    for shard in data:
        for i, (f, l, v) in enumerate(zip(shard["features"], shard["labels"], shard["voices"])):
            family = v.split(":")[0]
            if family in leave_out or v == f"real:{speaker}":
                continue
            if family == "noise" and i % 5 == 0:
                continue
            if len(f) < len(l):  # CTC cannot fit more tokens than frames
                continue
            feats.append(f)
            labels.append(l)
    return feats, labels


def train(data_dir: Path, out: Path, leave_out: set[str], speaker: str, epochs: int,
          width: int, seed: int, noise: float = 0.0, masks: int = 0) -> dict:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    torch.set_num_threads(2)
    shards = [load(p) for p in sorted(data_dir.glob("*.npz")) if p.stem != "babble"]
    feats, labels = split(shards, leave_out, speaker)
    stacked = np.concatenate(feats)
    mean, std = stacked.mean(0), stacked.std(0) + 1e-3
    feats = [(f - mean) / std for f in feats]
    net = CallNet(width)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3, weight_decay=1e-4)
    steps = epochs * ((len(feats) + 63) // 64)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    ctc = nn.CTCLoss(blank=0, zero_infinity=True)
    print(f"training on {len(feats)} clips ({sorted(leave_out) or 'no family'} left out, "
          f"speaker {speaker} held out)", flush=True)
    for epoch in range(epochs):
        net.train()
        # Similar lengths together: less padding, faster epochs.
        order = np.argsort([len(f) + rng.uniform(0, 6) for f in feats])
        chunks = [order[i:i + 64] for i in range(0, len(order), 64)]
        rng.shuffle(chunks)
        total, began = 0.0, time.time()
        for x, x_len, y, y_len in batches(feats, labels, np.concatenate(chunks), 64):
            x = perturb(x, rng, noise, masks)
            logp = net(x).permute(2, 0, 1).log_softmax(-1)  # (T, B, V)
            loss = ctc(logp, y, x_len, y_len)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            sched.step()
            total += loss.item() * len(x_len)
        print(f"epoch {epoch + 1}/{epochs}: loss {total / len(feats):.3f} "
              f"({time.time() - began:.0f} s)", flush=True)
    weights = {"mean": mean, "std": std}
    for name, tensor in net.state_dict().items():
        weights[name] = tensor.numpy()
    card = {"tokens": list(TOKENS), "width": width, "dilations": list(DILATIONS),
            "kernel": KERNEL, "trained_on": len(feats), "left_out": sorted(leave_out),
            "held_out_speaker": speaker, "epochs": epochs, "seed": seed,
            "feature_noise": noise, "time_masks": masks,
            "command": "python -m training.train " + " ".join(sys.argv[1:])}
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, card=json.dumps(card), **{k: v.astype(np.float32) for k, v in weights.items()})
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)")
    return card


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path("build/speech"))
    parser.add_argument("--out", type=Path, default=Path("companion/listen/call_model.npz"))
    parser.add_argument("--leave-out", action="append", default=[],
                        help="a voice family to leave out of training (repeatable)")
    parser.add_argument("--hold-out-speaker", default=HELD_OUT_SPEAKER)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--width", type=int, default=192)
    parser.add_argument("--seed", type=int, default=22)
    parser.add_argument("--feature-noise", type=float, default=0.0,
                        help="Gaussian noise on the normalised embedding vectors (std)")
    parser.add_argument("--time-masks", type=int, default=0, help="masked stretches a clip")
    args = parser.parse_args()
    train(args.data, args.out, set(args.leave_out), args.hold_out_speaker, args.epochs,
          args.width, args.seed, args.feature_noise, args.time_masks)


if __name__ == "__main__":
    main()
