#!/bin/bash
# Fails if the NCCL communicator's library calls NCCL, CUDA or cuBLAS directly: it must reach
# them only through NcclApi and NcclDevice, so that CI can drive it against the NCCL stand-in.
# Usage: check_nccl_symbols.sh libsynk_nccl_communicator.a
set -euo pipefail
lib=$1
# Not vacuous: the library must hold the communicator. (Output captured first: grep -q would
# close the pipe early, and pipefail would report nm's SIGPIPE.)
defined=$(nm -C --defined-only "$lib")
if ! grep -q 'synk::NcclCommunicator::doAllReduce' <<<"$defined"; then
  echo "$lib defines no synk::NcclCommunicator::doAllReduce: wrong library?" >&2
  exit 1
fi
direct=$(nm -u "$lib" | awk 'NF == 2 {print $2}' | grep -E '^(nccl|cuda|cublas|cu[A-Z])' || true)
if [ -n "$direct" ]; then
  echo "$lib calls these NCCL/CUDA symbols directly (use the NcclApi/NcclDevice tables):" >&2
  echo "$direct" >&2
  exit 1
fi
echo "$lib: no undefined nccl*/cuda*/cublas*/cu* symbol"
