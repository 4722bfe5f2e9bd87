"""What `gateway_latency.py` prints: added latency, throughput, the CPU each process spends per
request, the ceiling, and the targets as PASS or MISS."""

from __future__ import annotations

import argparse
from typing import Any


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(pct / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:7.3f}"


def report(result: dict[str, Any], health: dict[str, Any], args: argparse.Namespace) -> bool:
    seq_d, seq_p = result["seq"]
    ttft_d, ttft_p = result["ttft"]
    added50 = percentile(seq_p, 50) - percentile(seq_d, 50)
    added99 = percentile(seq_p, 99) - percentile(seq_d, 99)
    ttft50 = percentile(ttft_p, 50) - percentile(ttft_d, 50)
    rps_d = sum(r[0] for r in result["rounds"]) / len(result["rounds"])
    rps_p = sum(r[1] for r in result["rounds"]) / len(result["rounds"])
    lat_d = [x for r in result["rounds"] for x in r[2]]
    lat_p = [x for r in result["rounds"] for x in r[3]]
    ratio = rps_p / rps_d
    print(
        f"\nbeliefs seeded: {args.beliefs}; memory per proxied request: "
        f"{result['injected_mean']:.1f} beliefs (requests with none: {result['injected_zero']})"
    )
    print(
        f"retrieval timeouts/failures at the proxy: "
        f"{health['counters']['retrieval_timeouts']}/{health['counters']['retrieval_failures']}"
    )
    print(f"\n{'':34} {'direct':>9} {'proxy':>9} {'added':>9} {'ratio':>7}")
    for label, d, p in (
        (f"sequential p50 ms (n={len(seq_d)})", percentile(seq_d, 50), percentile(seq_p, 50)),
        ("sequential p99 ms", percentile(seq_d, 99), percentile(seq_p, 99)),
        (
            f"stream first event p50 ms (n={len(ttft_d)})",
            percentile(ttft_d, 50),
            percentile(ttft_p, 50),
        ),
        ("stream first event p99 ms", percentile(ttft_d, 99), percentile(ttft_p, 99)),
        (f"{args.workers} concurrent p50 ms", percentile(lat_d, 50), percentile(lat_p, 50)),
        (f"{args.workers} concurrent p99 ms", percentile(lat_d, 99), percentile(lat_p, 99)),
    ):
        print(f"{label:34} {ms(d):>9} {ms(p):>9} {ms(p - d):>9} {p / d:7.2f}")
    print(
        f"{args.workers} concurrent throughput req/s    "
        f"{rps_d:9.0f} {rps_p:9.0f} {'':>9} {ratio:7.2f}"
    )
    report_shares(result, args)
    checks = [
        ("added p50 <= 1 ms", added50 <= 0.001, f"{added50 * 1000:.3f} ms"),
        ("added p99 <= 5 ms", added99 <= 0.005, f"{added99 * 1000:.3f} ms"),
        ("added time to first token <= 2 ms", ttft50 <= 0.002, f"{ttft50 * 1000:.3f} ms"),
        ("throughput at 64 concurrent >= 50 %", ratio >= 0.5, f"{ratio * 100:.0f} %"),
    ]
    print()
    for name, ok, figure in checks:
        print(f"{'PASS' if ok else 'MISS'}  {name:38} {figure}")
    return all(ok for _, ok, _ in checks)


def report_shares(result: dict[str, Any], args: argparse.Namespace) -> None:
    """The gateway's own share (no memory), the tool loop, CPU per request, the ceiling."""
    bare_d, bare_p, bare_rps_d, bare_rps = result["bare"]
    print(
        f"\nwithout memory or extraction (X-Tenure-Incognito), n={len(bare_p)}: added p50 "
        f"{ms(percentile(bare_p, 50) - percentile(bare_d, 50))} ms, p99 "
        f"{ms(percentile(bare_p, 99) - percentile(bare_d, 99))} ms; {args.workers} concurrent "
        f"{bare_rps:.0f} vs {bare_rps_d:.0f} req/s ({bare_rps / bare_rps_d * 100:.0f} %)"
    )
    loop_d, loop_p = result["loop"]
    print(
        f"repeated turn (tool loop, memory reused), n={len(loop_p)}: added p50 "
        f"{ms(percentile(loop_p, 50) - percentile(loop_d, 50))} ms, p99 "
        f"{ms(percentile(loop_p, 99) - percentile(loop_d, 99))} ms"
    )
    cpu = {
        phase: {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]}
        for phase, rows in result["cpu"].items()
    }
    print(f"\nCPU per request at {args.workers} concurrent, µs: client / upstream / proxy")
    for label, phase in (
        ("direct", "direct"),
        ("direct, memory placed in the body", "placed"),
        ("through the proxy, with memory", "proxy"),
        ("through the proxy, without memory", "bare"),
    ):
        row = cpu[phase]
        proxy_cpu = f"{row['proxy']:.0f}" if phase in ("proxy", "bare") else "-"
        print(f"  {label:34} {row['client']:5.0f} / {row['upstream']:5.0f} / {proxy_cpu:>5}")
    direct_total = cpu["direct"]["client"] + cpu["direct"]["upstream"]
    placed_total = cpu["placed"]["client"] + cpu["placed"]["upstream"]
    print(
        f"  the machine's cores are shared: 50 % of direct needs all three together at most "
        f"2 x {direct_total:.0f} = {2 * direct_total:.0f} µs per request"
    )
    placed_rps_d, placed_rps, placed_len, plain_len = result["placed"]
    with_memory, without = cpu["proxy"]["proxy"], cpu["bare"]["proxy"]
    print(
        f"\nthe ceiling: the same load straight to the stand-in provider, each body with the "
        f"memory already placed\n  ({placed_len} bytes instead of {plain_len}): "
        f"{placed_rps:.0f} vs {placed_rps_d:.0f} req/s ({placed_rps / placed_rps_d * 100:.0f} % "
        f"of direct), no proxy at all."
    )
    print(
        f"  Client and provider then use {placed_total:.0f} µs per request, which leaves a proxy "
        f"{2 * direct_total - placed_total:.0f} µs for 50 %.\n  The proxy uses {with_memory:.0f} "
        f"with memory and {without:.0f} without (all its threads); its event loop runs on one "
        f"core, so at that cost it serves about {1e6 / with_memory:.0f} req/s."
    )
