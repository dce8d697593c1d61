#!/usr/bin/env python3
"""The peer of tests/bench/bench_mlp.cc: the DDP anchor's MLP (4 x Linear(4096, 4096) + ReLU,
Linear(4096, 10); 67.2 M parameters), fp32, SGD, cross-entropy, one fixed batch on the GPU.
Two variants, as ../shared/ANCHORS.md measured them: eager, and the whole step captured in a CUDA
graph (static input, warm-up on a side stream, torch.cuda.graph: PyTorch's recipe against launch
overhead). Prints one JSON object per (variant, batch): the best and the median of --repeats
timings of --steps steps (each timing ends with a synchronisation).
  python3 scripts/pytorch/mlp_speed.py --batches 64,512,4096 [--precision fp32|tf32|bf16]"""
import argparse
import json
import statistics
import time

import torch


def model(inputs, widths, classes, device):
    layers, width = [], inputs
    for w in widths:
        layers += [torch.nn.Linear(width, w), torch.nn.ReLU()]
        width = w
    layers.append(torch.nn.Linear(width, classes))
    return torch.nn.Sequential(*layers).to(device)


def timed(step, steps, repeats):
    rates = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        rates.append(time.perf_counter() - start)
    return rates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", default="64,512,4096")
    parser.add_argument("--inputs", type=int, default=4096)
    parser.add_argument("--widths", default="4096,4096,4096,4096")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "tf32", "bf16"])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--variants", default="eager,graph")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    if args.precision == "bf16":  # matmuls in bf16 with fp32 accumulation, as cuBLAS' fast-bf16
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        torch.set_float32_matmul_precision("medium")
    device = torch.device("cuda")
    widths = [int(w) for w in args.widths.split(",")]
    for batch in [int(b) for b in args.batches.split(",")]:
        for variant in args.variants.split(","):
            torch.manual_seed(0)
            net = model(args.inputs, widths, 10, device)
            opt = torch.optim.SGD(net.parameters(), lr=0.01)
            loss_fn = torch.nn.CrossEntropyLoss()
            x = torch.rand(batch, args.inputs, device=device) * 2 - 1
            y = torch.randint(0, 10, (batch,), device=device)

            def eager():
                opt.zero_grad(set_to_none=True)
                loss_fn(net(x), y).backward()
                opt.step()

            step = eager
            if variant == "graph":
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        eager()
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                opt.zero_grad(set_to_none=True)
                with torch.cuda.graph(graph):
                    loss_fn(net(x), y).backward()
                    opt.step()
                step = graph.replay
            for _ in range(10):
                step()
            times = timed(step, args.steps, args.repeats)
            rates = [args.steps * batch / t for t in times]
            print(json.dumps({"bench": "mlp_step", "peer": "pytorch", "variant": variant,
                              "batch": batch, "precision": args.precision,
                              "samples_per_s_best": round(max(rates), 1),
                              "samples_per_s_median": round(statistics.median(rates), 1),
                              "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
