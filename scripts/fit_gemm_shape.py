#!/usr/bin/env python3
"""How a GEMM's throughput depends on its shape, from public A100 measurements.

Reads Microsoft Vidur's cuBLAS linear-layer profiles (github.com/microsoft/vidur,
data/profiling/compute/a100/<model>/mlp.csv: median times of the QKV, output,
up and down projections of tensor-parallel layers, FP16, 1 ... 32,768 tokens)
and, for every tile NVIDIA's Matrix Multiplication Background guide lists for
A100 and every depth overhead k0, fits

    throughput = P * q(M, N, tile) * K / (K + k0)

(q: the useful share of the tile slots in waves of 108 SMs, both orientations
of the tile; P: the level, free) by least squares on log throughput over the
rows with at least 1,024 tokens. Prints each model's RMS log error, best first.
Only the shape dependence (tile, k0) goes into the A100 preset; the level does
not (docs/generator.md, "GEMM efficiency").

    scripts/fit_gemm_shape.py VIDUR_CHECKOUT/data/profiling/compute/a100
"""
import csv
import glob
import math
import os
import sys

SMS = 108
TILES = [(256, 128), (128, 128), (256, 64), (128, 64), (64, 64), None]  # None: no quantisation
DEPTHS = range(0, 301, 10)
MIN_TOKENS = 1024


def shapes(row):
    """(M, N, K, measured TFLOP/s) of each projection in one profile row."""
    h, heads = int(row["n_embd"]), int(row["n_head"])
    kv, ffn = int(row["n_kv_head"]), int(row["n_expanded_embd"])
    tp, m = int(row["num_tensor_parallel_workers"]), int(row["num_tokens"])
    d = h // heads
    # A gated MLP (SwiGLU) projects up to two ffn-wide matrices in one GEMM.
    up = 2 if row.get("use_gated_mlp", "True") == "True" else 1
    ops = {
        "attn_pre_proj": (h, (heads + 2 * kv) * d // tp),
        "attn_post_proj": (heads * d // tp, h),
        "mlp_up_proj": (h, up * ffn // tp),
        "mlp_down_proj": (ffn // tp, h),
    }
    for name, (k, n) in ops.items():
        cell = row.get(f"time_stats.{name}.median", "")
        if not cell:
            continue
        seconds = float(cell) * 1e-3
        if seconds > 0:
            yield m, n, k, 2 * m * n * k / seconds / 1e12


def useful(m, n, tile):
    if tile is None:
        return 1.0
    best = 0.0
    for tm, tn in (tile, tile[::-1]):
        tiles = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(tiles / SMS)
        best = max(best, m * n / (waves * SMS * tm * tn))
    return best


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__)
    files = sorted(glob.glob(os.path.join(sys.argv[1], "*", "*", "mlp.csv")) +
                   glob.glob(os.path.join(sys.argv[1], "*", "mlp.csv")))
    rows = []
    for f in files:
        with open(f, newline="") as fh:
            for row in csv.DictReader(fh):
                if int(row["num_tokens"]) >= MIN_TOKENS:
                    rows.extend(shapes(row))
    if not rows:
        sys.exit(f"fit_gemm_shape: no mlp.csv rows with {MIN_TOKENS}+ tokens under {sys.argv[1]}")
    print(f"{len(rows)} GEMMs from {len(files)} profiles")
    results = []
    for tile in TILES:
        logq = [math.log(useful(m, n, tile)) for m, n, _, _ in rows]
        for k0 in DEPTHS:
            resid = [math.log(tf) - lq - math.log(k / (k + k0)) for (_, _, k, tf), lq in zip(rows, logq)]
            mean = sum(resid) / len(resid)
            rms = math.sqrt(sum((r - mean) ** 2 for r in resid) / len(resid))
            results.append((rms, tile, k0, math.exp(mean)))
    best_per_tile = {}
    for r in sorted(results):
        best_per_tile.setdefault(r[1], r)
    print("tile       k0   level TFLOP/s   RMS log error")
    for rms, tile, k0, level in sorted(best_per_tile.values()):
        name = "none" if tile is None else f"{tile[0]}x{tile[1]}"
        print(f"{name:9s} {k0:4d}   {level:13.1f}   {rms:.4f}")
    flat = [r for r in results if r[1] == (256, 128) and r[2] == 0][0]
    print(f"256x128 without the depth term (k0 0): RMS {flat[0]:.4f}")


if __name__ == "__main__":
    main()
