#!/usr/bin/env python3
"""The judges of scripts/gpu-check: each reads the files of a run from DIR and prints summary
lines, "PASS  what", "FAIL  what" or "SKIP  what (why)", one per line.

    python3 scripts/gpu_check_judges.py JUDGE DIR [ARG...]

Callable on any folder (gpu-check --judge DIR), so the parsing is checked on crafted files
without a GPU (tests/integration/script_judges_test.cpp). A judge accounts for every case it
was given: a case that ran and was not judged is a FAIL line naming it, and a judge that prints
fewer verdict lines than it always judges (MIN_LINES) fails here, whatever it printed.
`criteria` is no judge: it evaluates the device criteria into DIR/criteria.txt, which the
judge `criteria_lines` reads.
"""
import contextlib
import csv
import glob
import io
import json
import os
import re
import statistics
import sys

VERDICT = re.compile(r"^(PASS|FAIL|SKIP)  ")


def load(out, name):
    """DIR/name as JSON, or None when it is missing or not JSON."""
    try:
        with open(f"{out}/{name}") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def rc_of(out, name):
    try:
        return open(f"{out}/{name}").read().strip()
    except OSError:
        return "not run"


# ---- ceiling doctor ---------------------------------------------------------------------------
# DIR/doctor.rc (its exit status) and DIR/doctor.txt (what it printed): doctor is wired, so
# its failure is a failure (it once printed "not wired yet" and counted nothing).
def doctor(out):
    rc = rc_of(out, "doctor.rc")
    try:
        said = [x.strip() for x in open(f"{out}/doctor.txt") if x.strip()]
    except OSError:
        said = []
    last = said[-1] if said else "no output"
    if rc == "0":
        print(f"PASS  ceiling doctor: {last}")
    else:
        status = "not run" if rc == "not run" else f"exited {rc}" if rc else "no exit status"
        print(f"FAIL  ceiling doctor: {status} ({last})")


doctor.MIN_LINES = 1


# ---- GPU unit tests ----------------------------------------------------------------------
# Per binary EXE: DIR/EXE.rc (exit status, or "missing" when the binary was not there),
# DIR/EXE.json (gtest's --gtest_output=json on the device) and DIR/EXE.nogpu.json (the same
# filter with CUDA_VISIBLE_DEVICES=""). A device test is one that skips with the GPU hidden.
def gtest_results(j):
    """{suite.name: (result, failed)} of the tests that were run."""
    r = {}
    for s in j.get("testsuites", []):
        for t in s.get("testsuite", []):
            if t.get("status", "RUN") != "RUN":
                continue
            r[f'{s.get("name")}.{t.get("name")}'] = (t.get("result", "COMPLETED"), bool(t.get("failures")))
    return r


def unit_tests(out, *exes):
    if not exes:
        raise ValueError("no test binary named")
    ran, skipped, failed, cpu_only, problems = [], [], [], 0, []
    for exe in exes:
        rc = rc_of(out, f"{exe}.rc")
        if rc == "missing":
            problems.append(f"{exe} missing")
            continue
        dev, base = load(out, f"{exe}.json"), load(out, f"{exe}.nogpu.json")
        if dev is None:
            problems.append(f"{exe} left no results (exit {rc}{': timed out' if rc == '124' else ''})")
            continue
        if base is None:
            problems.append(f"{exe}: no run with the GPU hidden, so device tests cannot be told from CPU-only ones")
            continue
        d, b = gtest_results(dev), gtest_results(base)
        exe_failed = [n for n, (_, f) in d.items() if f]
        failed += exe_failed
        for name, (result, fail) in d.items():
            if b.get(name, ("",))[0] != "SKIPPED":
                cpu_only += 1  # ran without a GPU too: proves nothing about the device
            elif result == "SKIPPED":
                skipped.append(name)
            elif not fail:
                ran.append(name)
        # A device test (skipped with the GPU hidden) that the device run never reached: the
        # binary stopped early, and what it did not run is not a pass.
        unreached = [n for n, (result, _) in b.items() if result == "SKIPPED" and n not in d]
        if unreached:
            problems.append(f"{exe}: {len(unreached)} device tests not run on the device: {', '.join(unreached[:4])}")
        if rc != "0" and not exe_failed:
            problems.append(f"{exe} exited {rc}")
    counts = f"{len(ran)} device tests ran and passed, {len(skipped)} skipped on the device, {cpu_only} CPU-only tests not counted"
    if failed or problems or not ran:
        why = []
        if failed:
            why.append(f"{len(failed)} failed: {', '.join(failed[:8])}")
        why += problems
        if not ran and not failed:
            why.append("no device test ran" + (f" (skipped: {', '.join(skipped[:8])})" if skipped else ""))
        print(f"FAIL  GPU unit tests: {'; '.join(why)} ({counts})")
    else:
        print(f"PASS  GPU unit tests: {counts}")


unit_tests.MIN_LINES = 1


# ---- ceiling suite --device gpu ------------------------------------------------------------
# DIR/suite.json (its record) and DIR/suite.rc. The bounds are the engine's: the suite judged
# its record (region_diagnoses), and no rule is typed again here.
def suite(out):
    rc = rc_of(out, "suite.rc")
    r = load(out, "suite.json")
    if r is None:
        why = "did not finish in its time box" if rc == "124" else f"exited {rc}"
        print(f"FAIL  ceiling suite --device gpu: no record ({why})")
        return
    gpu = [x for x in r.get("regions", []) if x.get("labels", {}).get("device", "").startswith("gpu")]
    not_run = {}  # case -> (status, why)
    for n in r.get("notes", []):
        m = re.match(r"^(gpu-\S+): (unavailable|check_failed|failed): (.*)$", n)
        if m:
            not_run[m.group(1)] = (m.group(2), m.group(3))
    unavailable = {c: w for c, (s, w) in not_run.items() if s == "unavailable"}
    broken = {c: (s, w) for c, (s, w) in not_run.items() if s != "unavailable"}
    d = {v["path"]: v.get("diagnosis") or {} for v in r.get("region_diagnoses", [])}
    unjudged = [x["path"] for x in gpu if not d.get(x["path"], {}).get("bound")]
    if not gpu:
        print(f"FAIL  ceiling suite --device gpu: no GPU case measured (exit {rc})")
    elif broken or rc != "0":
        what = "; ".join(f"{c} {s}: {w}" for c, (s, w) in broken.items()) or f"exit {rc}"
        print(f"FAIL  ceiling suite --device gpu: {what} ({len(gpu)} GPU cases checked and timed)")
    else:
        print(f"PASS  ceiling suite --device gpu: {len(gpu)} GPU cases checked against the CPU reference and timed")
    # Every case measured is judged by the engine: one it left without a bound was not judged.
    if gpu:
        print(f"{'FAIL' if unjudged else 'PASS'}  ceiling suite --device gpu: {len(gpu) - len(unjudged)} of "
              f"{len(gpu)} GPU cases judged by the engine{': not ' + ', '.join(unjudged[:4]) if unjudged else ''}")
    for c, w in unavailable.items():
        print(f"SKIP  ceiling suite --device gpu: {c} not checked: unavailable here: {w}")

    # Issue 7's diagnoses, read from the judged record: decode GEMV bandwidth bound, large
    # GEMM compute bound.
    def check(prefix, bound, what):
        hits = [(p, x) for p, x in d.items() if p.startswith(prefix)]
        if not hits:
            gone = [(c, w) for c, w in unavailable.items() if c.startswith(prefix)]
            if gone:
                print(f"SKIP  {what}: {gone[0][0]} unavailable here: {gone[0][1]}")
            else:
                print(f"FAIL  {what}: not measured: no {prefix}* case in the record")
            return
        for p, x in hits:
            print(f"{'PASS' if x.get('bound') == bound else 'FAIL'}  {what}: {p} {x.get('bound', 'no bound')} {x.get('verdict', '')}".rstrip())

    check("gpu-gemv/", "bandwidth", "GPU GEMV decode bandwidth bound")
    check("gpu-gemm/bf16/library/", "compute", "GPU large bf16 GEMM (cuBLAS) compute bound")
    check("gpu-gemm/fp32/library/", "compute", "GPU large fp32 GEMM (cuBLAS) compute bound")


suite.MIN_LINES = 4


# ---- ceiling run on a CUDA program -----------------------------------------------------------
# DIR/gpu_run.rc ("missing" when the CUDA program was not there), DIR/gpu_run.json (ceiling
# run's record), DIR/gpu_run.trace.json and DIR/machine.json.
def gpu_run(out):
    what = "ceiling run on a CUDA program"
    rc = rc_of(out, "gpu_run.rc")
    r = load(out, "gpu_run.json")
    if rc == "missing":
        print(f"FAIL  {what}: ceiling_gpu_run_target missing (not built with CUDA, or not in the bundle)")
        return
    if r is None:
        why = "did not finish in its time box" if rc == "124" else f"exited {rc}"
        print(f"FAIL  {what}: no record ({why})")
        return
    gpu_notes = [n for n in r.get("notes", []) if n.startswith("GPU")]
    if rc != "0":
        print(f"FAIL  {what}: exited {rc} ({(r.get('end') or {}).get('message', '')})")
    regions = r.get("regions", [])

    def ops(kind, parent):
        return [x for x in regions if x.get("labels", {}).get("operation") == kind and x.get("parent", "").startswith(parent)]

    kernels = ops("kernel", "step/gemm")
    if kernels:
        print(f"PASS  {what}: {len(kernels)} kernel region(s) nested under the NVTX range that launched them ({kernels[0]['path']})")
    else:
        seen = [f"{x['path']} (parent '{x.get('parent', '')}')" for x in regions if x.get("labels", {}).get("operation") == "kernel"]
        print(f"FAIL  {what}: no kernel under step/gemm; kernels: {seen[:4] or 'none'}; GPU notes: {gpu_notes[:3] or 'none'}")
    up, down = ops("copy", "step/upload"), ops("copy", "step/download")
    print(f"{'PASS' if up and down else 'FAIL'}  {what}: copies under their ranges: {len(up)} under step/upload, {len(down)} under step/download")

    # Every kernel judged against the GPU's roofs of the profile it ran with.
    prof = load(out, "machine.json") or {}
    gpu_roofs = {x["name"] for g in prof.get("gpus", [])[:1] for x in g.get("compute_roofs", [])}
    verdicts = {v["path"]: v.get("diagnosis") or {} for v in r.get("region_diagnoses", [])}
    judged = []
    for k in kernels:
        d = verdicts.get(k["path"], {})
        compute = next((x for x in d.get("roofs", []) if x.get("kind") == "compute"), {})
        if compute.get("roof") in gpu_roofs and compute.get("fraction") is not None:
            judged.append((k["path"], d, compute))
    if not gpu_roofs:
        print(f"FAIL  {what}: kernel not judged: no GPU compute roof in machine.json")
    elif not kernels:
        print(f"FAIL  {what}: no kernel to judge against the GPU roofs")
    elif len(judged) < len(kernels):
        missed = [k["path"] for k in kernels if k["path"] not in {p for p, _, _ in judged}]
        print(f"FAIL  {what}: {len(judged)} of {len(kernels)} kernels judged against the GPU roofs (not {missed[:3]})")
    else:
        p, d, compute = judged[0]
        print(f"PASS  {what}: {len(judged)} kernel(s) judged against the GPU roofs: {compute['roof']} "
              f"{compute['fraction']:.0%}, {d.get('bound') or 'bound unknown'} {d.get('verdict', '')}".rstrip())

    # Device wait and copy shares, measured (never 0 for unknown).
    system = {x["name"]: x for x in (r.get("diagnosis") or {}).get("system", [])}
    shares = {n: (system.get(n) or {}).get("value") for n in ("device_wait_share", "device_copy_share")}
    missing = [n for n, v in shares.items() if v is None]
    if missing:
        print(f"FAIL  {what}: {', '.join(missing)} not measured; GPU notes: {gpu_notes[:3] or 'none'}")
    else:
        print(f"PASS  {what}: device wait {shares['device_wait_share']:.0%}, copy {shares['device_copy_share']:.0%} of wall time")

    trace = load(out, "gpu_run.trace.json") or {}
    gpu_tracks = {e["args"]["name"] for e in trace.get("traceEvents", [])
                  if e.get("ph") == "M" and e.get("name") == "process_name" and str(e.get("args", {}).get("name", "")).startswith("GPU ")}
    print(f"{'PASS' if gpu_tracks else 'FAIL'}  {what}: trace GPU tracks: {', '.join(sorted(gpu_tracks)[:3]) or 'none'}")


gpu_run.MIN_LINES = 5


# ---- ceiling run's own cost on a GPU host ----------------------------------------------------
# DIR/cpu_run_ms.txt (one line per single run of /bin/true: its end-to-end milliseconds, or
# "failed (exit N)"), DIR/cpu_run.json (the last one's record), DIR/cpu_repeat_ms.txt
# (milliseconds of one run with --repeat 200, or "failed (exit N)").
def cpu_run(out):
    what = "ceiling run around a CPU-only program on a GPU host"
    try:
        lines = [x.strip() for x in open(f"{out}/cpu_run_ms.txt") if x.strip()]
        repeat = open(f"{out}/cpu_repeat_ms.txt").read().split("\n")[0].strip()
    except OSError:
        print(f"FAIL  {what}: not measured (missing cpu_run_ms.txt or cpu_repeat_ms.txt)")
        return
    single = [float(x) for x in lines if re.fullmatch(r"[0-9.]+", x)]
    notes = (load(out, "cpu_run.json") or {}).get("notes", [])
    # Every run tried has its line: one that failed is no time, and the median of the others
    # would hide it.
    if not single or len(single) < len(lines):
        print(f"FAIL  {what}: {len(single)} of {len(lines)} single runs finished ({', '.join(x for x in lines if x not in map(str, single))[:80] or 'none tried'})")
    else:
        med = statistics.median(single)
        gpu = [n for n in notes if n.startswith("GPU activity")]
        print(f"{'PASS' if med < 50 else 'FAIL'}  {what}: {med:.1f} ms end to end (median of {len(single)}; goal < 50 ms: no CUDA initialised after the program); note: {gpu[0] if gpu else 'none'}")
    if not re.fullmatch(r"[0-9.]+", repeat):
        print(f"FAIL  {what}: --repeat 200 not measured ({repeat or 'no time'})")
        return
    per = float(repeat) / 200
    print(f"{'PASS' if per < 3 else 'FAIL'}  {what}: {per:.2f} ms per execution with --repeat 200 (goal < 3 ms)")


cpu_run.MIN_LINES = 2


# ---- ceiling run --gpu-counters on undeclared kernels ----------------------------------------
# DIR/gpu_counted.json, `ceiling run --gpu-counters` around ceiling_gpu_kernels' fp32 GEMV case
# (no NVTX, no declared work): its kernel judged from its counts, the DRAM bytes near the
# analytic 5.37e8, bandwidth bound.
def counted_run(out):
    what = "ceiling run --gpu-counters on undeclared kernels"
    rec = load(out, "gpu_counted.json")
    if rec is None:
        print(f"FAIL  {what}: no record (gpu_counted.json missing or not JSON)")
        return
    counted = [r for r in rec.get("regions", []) if (r.get("measurement") or {}).get("measured_ops_source") == "cupti"]
    gemv = [r for r in counted if "gemv_kernel" in r["path"]]
    verdicts = {v["path"]: v.get("diagnosis") or {} for v in rec.get("region_diagnoses", [])}
    if not gemv:
        notes = [n for n in rec.get("notes", []) if "counter" in n.lower()]
        print(f"FAIL  {what}: no GEMV kernel counted ({len(counted)} counted regions; notes: {notes[:3]})")
        return
    m = gemv[0]["measurement"]
    d = verdicts.get(gemv[0]["path"], {})
    ratio = (m.get("measured_bytes") or 0) / 5.37e8
    ok = abs(ratio - 1) <= 0.10 and d.get("bound") == "bandwidth"
    print(f"{'PASS' if ok else 'FAIL'}  {what}: {len(counted)} kernels counted; GEMV {m.get('measured_ops') or 0:.3g} ops, "
          f"{m.get('measured_bytes') or 0:.3g} DRAM bytes ({ratio:.2f}x analytic), kind {m.get('measured_kind')}, bound {d.get('bound')}")


counted_run.MIN_LINES = 1


# ---- issue 7's device criteria ------------------------------------------------------------
# `criteria` evaluates them into DIR/criteria.txt ("name VERDICT detail" per line) and prints
# the tables; `criteria_lines` reads that file as summary lines. Every criterion below has a
# line: one missing from the file is a FAIL, never left out.
CRITERIA = ("counters_vs_ncu", "bf16_tensor_roof_vs_cublas_8192", "fp16_tensor_roof_vs_cublas_8192",
            "hbm_copy_vs_d2d_memcpy")


def fmt(x, scale=1, spec=".4g"):
    return "unknown" if x is None else format(x / scale, spec)


# Input fills, scales and poisoning memsets (a range of their own), not the measured work.
SETUP = ("fill_", "gemv_scales", "pattern_kernel", "poison_kernel", "l2_flush_kernel", "[memset]")
COMPARED = ("fp32_flop", "fp64_flop", "tensor_bf16_op", "tensor_fp16_op", "tensor_tf32_op",
            "dram_read_bytes", "dram_write_bytes")


def derived(table, values):
    res = {}
    for m in table:
        if all(t["metric"] in values for t in m["terms"]):
            res[m["name"]] = sum(t["coefficient"] * values[t["metric"]] for t in m["terms"])
    return res


def segments(kernels):
    """[(name, {metric: value})] in launch order -> {case index: summed metrics}, cut at markers."""
    seg, current = {}, None
    for name, values in kernels:
        if "ceiling_marker_kernel" in name:
            current = len(seg) + 1
            seg[current] = {}
            continue
        if current is None or any(s in name for s in SETUP):
            continue
        for k, v in values.items():
            seg[current][k] = seg[current].get(k, 0.0) + v
    return {k: v for k, v in seg.items() if v}


def read_ours(out):
    ours = []
    for path in sorted(glob.glob(f"{out}/cuda/*.jsonl")):
        for line in open(path):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if j.get("type") == "metrics":
                ours.append((j["name"], j["values"]))
    return ours


def read_ncu(out):
    by_id = {}
    rows = [l for l in open(f"{out}/ncu.csv") if l.startswith('"')]
    for r in csv.DictReader(rows):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        by_id.setdefault(r["ID"], (r["Kernel Name"], {}))[1][r["Metric Name"]] = v
    return [by_id[k] for k in sorted(by_id, key=int)]


def counters_vs_ncu(out):
    """Our counters (injection library) against ncu's on the same kernels, per case and metric."""
    if not os.path.exists(f"{out}/ncu.csv"):
        return ("SKIP", "ncu not found here: our counters not compared")
    table, cases = load(out, "metric_table.json"), load(out, "cases.json")
    if table is None or cases is None:
        return ("FAIL", "not evaluated: metric_table.json or cases.json missing or not JSON")
    ours = read_ours(out)
    o, t = segments(ours), segments(read_ncu(out))
    names = [c["name"] for c in cases]
    ok_all, compared, cases_compared = True, 0, set()
    print(f"{'case':44} {'metric':16} {'ceiling':>14} {'ncu':>14} {'ours/ncu':>9} {'analytic':>14}")
    f = lambda x: "-" if x is None else f"{x:.4g}"
    for idx in sorted(set(o) | set(t)):
        name = names[idx - 1] if 0 < idx <= len(names) else f"case {idx}"
        do, dt = derived(table, o.get(idx, {})), derived(table, t.get(idx, {}))
        # Reads and writes apart: where they disagree says which side the tools count differently.
        for metric in COMPARED:
            a, b = do.get(metric), dt.get(metric)
            if (a or 0) == 0 and (b or 0) == 0:
                continue
            ratio = a / b if a is not None and b else None
            good = ratio is not None and abs(ratio - 1) <= 0.03
            compared += 1
            cases_compared.add(idx)
            ok_all &= good
            c = cases[idx - 1] if 0 < idx <= len(cases) else {}
            analytic = None if metric.startswith("dram_") else c.get("ops")  # analytic bytes are not split
            print(f"{name:44} {metric:16} {f(a):>14} {f(b):>14} {f(ratio):>9} {f(analytic):>14} {'' if good else '<-- off by more than 3%'}")
    print(f"compared {compared} values; {'all within 3%' if ok_all and compared else 'NOT all within 3%'}")
    if not ours:
        return ("FAIL", "not measured: our injection library wrote no metric lines")
    if not compared:
        return ("FAIL", "not measured: no value to compare (ncu or our counters gave none)")
    # Every case that ran is compared: one without a value on either side was not judged. A
    # case unavailable here (its reason in cases.json) ran nothing, and is named.
    ran = [i for i, c in enumerate(cases) if not c.get("unavailable")]
    left = [names[i] for i in ran if i + 1 not in cases_compared]
    gone = [names[i] for i in range(len(cases)) if i not in ran]
    unavailable = f"; {len(gone)} unavailable here: {', '.join(gone[:4])}" if gone else ""
    if left:
        return ("FAIL", f"{len(ran) - len(left)} of {len(ran)} cases compared; not: {', '.join(left[:4])}{unavailable}")
    return ("PASS" if ok_all else "FAIL",
            f"{compared} values of {len(ran)} cases, {'all' if ok_all else 'not all'} within 3%{unavailable}")


def tensor_roof_vs_library(g, precision, library_figure, what):
    """The best roof of our own kernels of `precision` against a library's 8192^3 GEMM: a roof
    is a ceiling, so the library may not run above it (3 % for noise), and a real GEMM reaches
    a good part of it (a roof far above every GEMM is miscounted work)."""
    ours = [r for r in g["compute_roofs"] if r.get("precision") == precision and not r.get("library")
            and (r.get("ops_per_s") or {}).get("median")]
    best = max(ours, key=lambda r: r["ops_per_s"]["median"], default=None)
    if best is None:
        return ("FAIL", f"not measured: no {precision} roof of our own kernels in the profile")
    if not library_figure:
        return ("FAIL", f"not measured: {what}")
    r = library_figure / best["ops_per_s"]["median"]
    return ("PASS" if 0.6 <= r <= 1.03 else "FAIL",
            f"roof {best['name']} {best['ops_per_s']['median']/1e12:.0f} TFLOP/s, cuBLAS 8192^3 {library_figure/1e12:.0f} "
            f"(cuBLAS at {r:.0%} of the roof; pass from 60 % to 103 %)")


def device_criteria(out):
    """Issue 7's device criteria from the profile and the timed cases (DIR/machine.json,
    DIR/timed.json), one (name, verdict, detail) each."""
    prof = load(out, "machine.json")
    if not prof or not prof.get("gpus"):
        raise ValueError("no GPU in machine.json (ceiling machine found none, or no profile)")
    g = prof["gpus"][0]
    roofs = {r["name"]: r for r in g["compute_roofs"]}
    bw = {r["name"]: r for r in g["bandwidth_roofs"]}
    timed = {c["name"]: c for c in (load(out, "timed.json") or [])}
    gemm = timed.get("gemm/bf16/library/8192x8192x8192", {})
    rows = [("bf16_tensor_roof_vs_cublas_8192",) + tensor_roof_vs_library(
        g, "bf16", gemm.get("ops_per_s"), f"cuBLAS 8192^3 not timed ({gemm.get('error', 'no such case')})")]
    # fp16 against the profile's own cuBLAS fp16 figure (fp16_cublas, 8192^3): before
    # fp16_wgmma only mma.sync's roof existed, which cuBLAS outruns on Hopper.
    lib16 = ((roofs.get("fp16_cublas") or {}).get("ops_per_s") or {}).get("median")
    rows.append(("fp16_tensor_roof_vs_cublas_8192",) + tensor_roof_vs_library(
        g, "fp16", lib16, "no fp16_cublas roof in the profile"))
    copy = ((bw.get("hbm_copy") or {}).get("bytes_per_s") or {}).get("median")
    memcpy = ((bw.get("hbm_copy_memcpy") or {}).get("bytes_per_s") or {}).get("median")
    if copy and memcpy:
        r = copy / memcpy
        rows.append(("hbm_copy_vs_d2d_memcpy", "PASS" if r >= 0.9 else "FAIL", f"ratio {r:.3f} ({copy/1e12:.2f} TB/s)"))
    else:
        rows.append(("hbm_copy_vs_d2d_memcpy", "FAIL", f"not measured: hbm_copy {fmt(copy, 1e12, '.2f')} TB/s, cudaMemcpy {fmt(memcpy, 1e12, '.2f')} TB/s"))
    # The bounds of these cases are the engine's, read from the suite's judged record by the
    # judge `suite` (decode GEMV bandwidth bound, large GEMM compute bound): not the decision
    # rule typed again here. The timed cases are printed for information.
    print("\nreference kernels (median of 10 timed launches):")
    pct = lambda x: "    -" if x is None else f"{x:5.0%}"
    for c in timed.values():
        if "error" in c:
            print(f"  {c['name']:44} ERROR {c['error']}")
        else:
            print(f"  {c['name']:44} {fmt(c.get('median_s'), 1e-3, '9.3f')} ms {fmt(c.get('ops_per_s'), 1e12, '8.2f')} Top/s "
                  f"{fmt(c.get('bytes_per_s'), 1e12, '6.2f')} TB/s  compute {pct(c.get('compute_fraction'))}  bandwidth {pct(c.get('bandwidth_fraction'))}")
    return rows


def evaluate_criteria(out):
    """Prints the tables and writes DIR/criteria.txt; a criterion that could not be evaluated
    is FAIL with the reason, never left out (criteria_lines also fails one that is missing)."""
    criteria = []
    try:
        criteria.append(("counters_vs_ncu",) + counters_vs_ncu(out))
    except (OSError, KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        criteria.append(("counters_vs_ncu", "FAIL", f"not evaluated: {type(e).__name__} {e}"))
    try:
        criteria += device_criteria(out)
    except (OSError, KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        criteria.append(("device_criteria", "FAIL", f"not evaluated: {type(e).__name__} {e}"))
    for name, verdict, detail in criteria:
        print(f"{name} {verdict} {detail}")
    with open(f"{out}/criteria.txt", "w") as f:
        f.write("".join(f"{n} {v} {d}\n" for n, v, d in criteria))


def criteria_lines(out):
    try:
        rows = [x.rstrip("\n").split(" ", 2) for x in open(f"{out}/criteria.txt") if x.strip()]
    except OSError:
        print(f"FAIL  device criteria: not evaluated (no {out}/criteria.txt)")
        return
    named = set()
    for row in rows:
        name, verdict, detail = (row + ["", ""])[:3]
        named.add(name)
        print(f"{verdict if verdict in ('PASS', 'SKIP') else 'FAIL'}  {name} {detail}".rstrip())
    for name in CRITERIA:
        if name not in named:
            print(f"FAIL  {name}: not evaluated (no line in criteria.txt)")


criteria_lines.MIN_LINES = len(CRITERIA)

JUDGES = {f.__name__: f for f in (doctor, unit_tests, suite, gpu_run, cpu_run, counted_run, criteria_lines)}


def main(argv):
    if len(argv) < 3 or argv[1] not in {*JUDGES, "criteria"}:
        print(f"usage: {argv[0]} {{{','.join([*JUDGES, 'criteria'])}}} DIR [ARG...]", file=sys.stderr)
        return 2
    name, out, args = argv[1], argv[2], argv[3:]
    if name == "criteria":
        evaluate_criteria(out)
        return 0
    # The judge's lines are kept, so that too few verdicts fail here; what it printed before
    # raising is passed on too (gpu-check's judged() then adds its own FAIL line).
    kept = io.StringIO()
    try:
        with contextlib.redirect_stdout(kept):
            JUDGES[name](out, *args)
    finally:
        sys.stdout.write(kept.getvalue())
    verdicts = [x for x in kept.getvalue().splitlines() if VERDICT.match(x)]
    need = JUDGES[name].MIN_LINES
    # Where a line already failed (no record, say) the step fails anyway; elsewhere fewer lines
    # than always given means a check was skipped without a word.
    if len(verdicts) < need and not any(x.startswith("FAIL") for x in verdicts):
        print(f"FAIL  {name}: its judge gave {len(verdicts)} verdict lines where it always gives at least {need}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
