#!/usr/bin/env python3
"""The peer of experiments/mlp_scaling.ini (the multi-GPU issue's scaling table): PyTorch
DistributedDataParallel training the DDP anchor's MLP (4 x Linear(4096, 4096) + ReLU,
Linear(4096, 10); 67.2 M parameters), fp32, SGD, cross-entropy, a fixed batch per GPU resident on
its GPU, one process per GPU over NCCL -- the setup ../shared/ANCHORS.md measured. For each GPU
count and per-GPU batch: warm-up, then --repeats timings of --steps steps (each ends with a
synchronisation on every rank; the slowest rank's time counts). Prints one JSON object per
(gpus, batch) with global samples/s (best and median) and the weak-scaling efficiency against
the 1-GPU figure of the same run: samples/s(n) / (n x samples/s(1)).
  python3 scripts/pytorch/ddp_scaling.py --gpus 1,2,4,8 --batches 64,512,4096
GPU counts above what the machine has are skipped with a line on stderr."""
import argparse
import json
import os
import socket
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlp_speed import model  # noqa: E402  (the same network as the 1-GPU peer)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, port, args, results):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", rank))
    device = torch.device("cuda", rank)
    widths = [int(w) for w in args.widths.split(",")]
    for batch in [int(b) for b in args.batches.split(",")]:
        torch.manual_seed(0)  # the same initial parameters everywhere (DDP broadcasts rank 0's)
        net = torch.nn.parallel.DistributedDataParallel(model(args.inputs, widths, 10, device),
                                                        device_ids=[rank])
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        loss_fn = torch.nn.CrossEntropyLoss()
        generator = torch.Generator(device=device)
        generator.manual_seed(1000 + rank)  # each rank its own rows
        x = torch.rand(batch, args.inputs, device=device, generator=generator) * 2 - 1
        y = torch.randint(0, 10, (batch,), device=device, generator=generator)

        def step():
            opt.zero_grad(set_to_none=True)
            loss_fn(net(x), y).backward()
            opt.step()

        for _ in range(args.warmup):
            step()
        times = []
        for _ in range(args.repeats):
            torch.cuda.synchronize()
            dist.barrier()
            start = time.perf_counter()
            for _ in range(args.steps):
                step()
            torch.cuda.synchronize()
            elapsed = torch.tensor([time.perf_counter() - start], device=device)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's time
            times.append(elapsed.item())
        if rank == 0:
            rates = [world * batch * args.steps / t for t in times]
            results.put({"batch": batch, "best": max(rates), "median": statistics.median(rates)})
        del net, opt
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", default="1,2,4,8")
    parser.add_argument("--batches", default="64,512,4096", help="per GPU")
    parser.add_argument("--inputs", type=int, default=4096)
    parser.add_argument("--widths", default="4096,4096,4096,4096")
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=10)
    args = parser.parse_args()
    have = torch.cuda.device_count()
    one_gpu = {}
    ctx = mp.get_context("spawn")  # CUDA in the parent must not be inherited by a fork
    for world in [int(g) for g in args.gpus.split(",")]:
        if world > have:
            print(f"ddp_scaling: {world} GPUs skipped: this machine has {have}", file=sys.stderr)
            continue
        results = ctx.Queue()
        port = free_port()
        procs = [ctx.Process(target=worker, args=(r, world, port, args, results))
                 for r in range(world)]
        for p in procs:
            p.start()
        rows = [results.get(timeout=1800) for _ in args.batches.split(",")]
        for p in procs:
            p.join(timeout=120)
            if p.exitcode != 0:
                sys.exit(f"ddp_scaling: a rank of the {world}-GPU run exited with {p.exitcode}")
        for row in rows:
            if world == 1:
                one_gpu[row["batch"]] = row["best"]
            base = one_gpu.get(row["batch"])
            print(json.dumps({
                "bench": "mlp_scaling", "peer": "pytorch_ddp", "gpus": world,
                "batch_per_gpu": row["batch"], "samples_per_s_best": round(row["best"], 1),
                "samples_per_s_median": round(row["median"], 1),
                "efficiency": round(row["best"] / (world * base), 4) if base else None,
                "torch": torch.__version__}), flush=True)


if __name__ == "__main__":
    main()
