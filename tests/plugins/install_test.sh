#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR [COMPILER_LAUNCHER]
# The package as a user meets it: cmake --install of BUILD_DIR into a fresh prefix, then the
# out-of-tree example (plugins/examples/out_of_tree: a plugin and a program that trains it),
# copied to a folder outside the source tree, configured against that prefix alone, built and run.
# Exit 0 when every step passed; otherwise the step that failed and its output.
set -euo pipefail
build=$1 source=$2 work=$3 launcher=${4:-}
prefix=$work/prefix
rm -rf "$work" && mkdir -p "$work"

step() {  # step NAME COMMAND...: runs COMMAND, its output to a log shown only on failure
  local name=$1 log
  log=$work/$(tr ' /' '__' <<<"$name").log
  shift
  if ! "$@" >"$log" 2>&1; then
    cat "$log" >&2
    echo "install_test: $name failed: $*" >&2
    exit 1
  fi
}

step "install" cmake --install "$build" --prefix "$prefix"
# What a plugin, a program and Session::load("name") need from the prefix.
for file in lib/cmake/synk/synkConfig.cmake lib/cmake/synk/synkConfigVersion.cmake \
            lib/cmake/synk/synk_add_plugin.cmake lib/cmake/synk/synk_plugin.map \
            include/synk/plugins/abi/synk_plugin.h include/synk/plugins/sdk/synk_sdk.h \
            include/synk/synk.h include/synk/core/session.h \
            lib/libsynk_core.a lib/synk/libsynk_example_intro.so lib/synk/libsynk_mlp.so; do
  [[ -f $prefix/$file ]] || { echo "install_test: $prefix/$file was not installed" >&2; exit 1; }
done
if grep -q 'SYNK_HAVE_CUDA ON' "$prefix/lib/cmake/synk/synkConfig.cmake" &&
   [[ ! -f $prefix/lib/synk/libsynk_cuda_backend.so ]]; then
  echo "install_test: a CUDA build installed no lib/synk/libsynk_cuda_backend.so" >&2
  exit 1
fi

cp -r "$source/plugins/examples/out_of_tree" "$work/src"
args=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix"
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
[[ -n $launcher ]] && args+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
step "configure" cmake -S "$work/src" -B "$work/build" "${args[@]}"
# The package found is the installed one, not this build tree.
grep -q "^synk_DIR:PATH=$prefix/lib/cmake/synk\$" "$work/build/CMakeCache.txt" ||
  { echo "install_test: the example did not find synk in $prefix" >&2; exit 1; }
step "build" cmake --build "$work/build" -j 2
step "run" "$work/build/train_linear" "$work/build/liblinear.so"
cat "$work/run.log"
