#!/usr/bin/env python3
"""The peer of `train --backend cuda` (training/train_main.cc): an MLP 784-256-128-10 (ReLU), Adam
1e-3, batch 256 (full batches only), Fashion-MNIST resident on the GPU, test accuracy over the
whole test set after every epoch counted in the time, until it reaches --target. Two variants, as
../shared/ANCHORS.md measured them: eager, and the training step captured in a CUDA graph (static
input buffers filled by index on the GPU, Adam(capturable=True), warm-up on a side stream; the
model and optimizer are then reset, so the timed run starts from scratch like synk's).
Prints one JSON object per variant.
  python3 scripts/pytorch/fashion_mnist_time.py --data /usr/share/datasets/fashion-mnist"""
import argparse
import gzip
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_speed import model  # noqa: E402  (the same Linear/ReLU stack as the other peers)


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def load(data, prefix, device):
    x = read_idx(os.path.join(data, prefix + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(data, prefix + "-labels-idx1-ubyte.gz"))
    x = torch.tensor(x.reshape(len(x), -1), dtype=torch.float32, device=device) / 255.0
    return x, torch.tensor(y, dtype=torch.int64, device=device)


def run(variant, train, test, args, device):
    torch.manual_seed(args.seed)
    net = model(784, [256, 128], 10, device)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, capturable=variant == "graph")
    loss_fn = torch.nn.CrossEntropyLoss()
    (x_train, y_train), (x_test, y_test) = train, test
    batch = args.batch
    steps = len(x_train) // batch
    static_idx = torch.zeros(batch, dtype=torch.int64, device=device)

    def step():
        xb, yb = x_train[static_idx], y_train[static_idx]
        opt.zero_grad(set_to_none=False)
        loss_fn(net(xb), yb).backward()
        opt.step()

    do_step = step
    if variant == "graph":
        initial = {k: v.clone() for k, v in net.state_dict().items()}
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                step()
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            step()
        # Start the timed run from the initial parameters and a fresh optimizer state.
        with torch.no_grad():
            net.load_state_dict(initial)
            for state in opt.state.values():
                for key, value in state.items():
                    if torch.is_tensor(value):
                        value.zero_()
        do_step = graph.replay
    torch.cuda.synchronize()
    start = time.perf_counter()
    generator = torch.Generator(device=device)
    generator.manual_seed(args.seed)
    result = {"peer": "pytorch", "variant": variant, "reached": False}
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(x_train), device=device, generator=generator)
        for s in range(steps):
            static_idx.copy_(order[s * batch:(s + 1) * batch])
            do_step()
        with torch.no_grad():
            accuracy = (net(x_test).argmax(1) == y_test).float().mean().item()
        seconds = time.perf_counter() - start
        result.update(epochs=epoch, test_accuracy=round(accuracy, 4), seconds=round(seconds, 4))
        if accuracy >= args.target:
            result["reached"] = True
            break
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=os.environ.get("SYNK_FASHION_MNIST",
                                                         "/usr/share/datasets/fashion-mnist"))
    parser.add_argument("--target", type=float, default=0.88)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", default="eager,graph")
    args = parser.parse_args()
    device = torch.device("cuda")
    train, test = load(args.data, "train", device), load(args.data, "t10k", device)
    for variant in args.variants.split(","):
        result = run(variant, train, test, args, device)
        result.update(bench="fashion_mnist_time", batch=args.batch, target=args.target,
                      torch=torch.__version__)
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
