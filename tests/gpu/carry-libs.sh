#!/usr/bin/env bash
# Copies the shared libraries culeak needs that a GPU machine may lack (libunwind, libdw,
# libvterm) into .gpulibs/, to be carried with build/ to that machine.
set -eu
cd "$(dirname "$0")/../.."
mkdir -p .gpulibs
for lib in libunwind.so.8 libunwind-x86_64.so.8 libdw.so.1 libvterm.so.0; do
    src=$(ldconfig -p | awk -v l="$lib" '$1 == l { print $NF; exit }')
    [ -n "$src" ] && cp -L "$src" .gpulibs/
done
ls .gpulibs
