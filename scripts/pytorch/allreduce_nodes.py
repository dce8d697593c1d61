#!/usr/bin/env python3
"""The peer of synk's NCCL all_reduce across nodes (issue 26): PyTorch's dist.all_reduce between
processes that NCCL takes for separate machines. Run one process per simulated node, e.g. under
mpirun (scripts/gpu-nodes-check does):
  mpirun -np 2 python3 scripts/pytorch/allreduce_nodes.py --sizes 2M,8M,32M,128M
Each process takes the GPU of its index (CUDA_VISIBLE_DEVICES narrowed to it) and an NCCL host id
of its own (NCCL_HOSTID), as synk's simulated nodes do, so NCCL connects them through its network
transport. For each size (float32 sum): a warm-up, then --reps timings of n calls launched back
to back and one synchronisation (as nccl-tests, and as bench_cuda_allreduce times synk's API
calls); prints the median time per call and the bus bandwidth, 2 (n - 1) / n x bytes / time."""
import argparse
import os
import statistics
import time


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(text[:-1]) * units[text[-1]]) if text[-1] in units else int(text)


def iters_for(size):  # as bench_cuda_allreduce
    return 2000 if size <= (1 << 20) else 200 if size <= (64 << 20) else 30


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2M,8M,32M,128M")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--iters", type=int, default=0, help="calls per timing (0: by size)")
    args = parser.parse_args()
    rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
    world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
    # Before torch touches CUDA or NCCL: this process's GPU and its "host".
    os.environ["CUDA_VISIBLE_DEVICES"] = str(rank)
    os.environ.setdefault("NCCL_HOSTID", f"torch-simulated-node-{rank}")
    import torch
    import torch.distributed as dist

    port = os.environ.get("MASTER_PORT", "29533")  # another run on this host: another port
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world, device_id=torch.device("cuda", 0))
    if rank == 0:
        print(f"# PyTorch {torch.__version__} all_reduce across {world} simulated nodes, float32 "
              f"sum, medians of {args.reps}")
        print(f"{'bytes':>10} {'iters':>6} {'us':>10} {'busbw':>8}")
    for size in [parse_size(s) for s in args.sizes.split(",")]:
        x = torch.zeros(size // 4, dtype=torch.float32, device="cuda")
        iters = args.iters if args.iters > 0 else iters_for(size)
        for _ in range(5):
            dist.all_reduce(x)
        torch.cuda.synchronize()
        times = []
        for _ in range(args.reps):
            dist.barrier()
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(x)
            torch.cuda.synchronize()
            elapsed = torch.tensor([(time.perf_counter() - start) / iters], device="cuda")
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's time counts
            times.append(elapsed.item())
        t = statistics.median(times)
        if rank == 0:
            busbw = 2 * (world - 1) / world * size / t / 1e9
            print(f"{size:>10} {iters:>6} {t * 1e6:>10.2f} {busbw:>8.2f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
