#!/usr/bin/env python3
"""The manifest of a scripts/gcc_openacc_build.sh OUTDIR, as JSON on stdout: per example the
build status, schedpredict's arguments, what --fix changed (the unified diff) and, per nest,
the model's predicted time of GCC's default schedule and of the recommendation."""
import json
import os
import re
import sys


def nest_predictions(report_path):
    try:
        with open(report_path) as f:
            report = json.load(f)
    except (OSError, ValueError):
        return []
    rows = []
    for n in report.get("nests", []):
        default = n.get("compiler_default") or {}
        rec = (n.get("advice") or {}).get("recommended") or {}
        # the default as GCC builds it (with its reduction code, as the recommendation's time_us)
        built_default = (rec["time_us"] * rec["speedup_over_default"]
                         if rec.get("time_us") and rec.get("speedup_over_default") else None)
        line = int(n["location"].split(":")[1]) if n.get("location") else None
        rows.append({
            "function": n.get("function"),
            "line": line,
            "default_openacc": default.get("openacc"),
            "default_time_us": built_default or (default.get("time") or {}).get("total_us"),
            "recommended_openacc": rec.get("openacc") or " / ".join(
                l.get("directive") or "" for l in rec.get("loops", [])),
            "recommended_time_us": rec.get("time_us"),
            "predicted_speedup": rec.get("speedup_over_default"),
            "error": n.get("error"),
        })
    return rows


def main():
    out = sys.argv[1]
    examples = []
    with open(os.path.join(out, "logs", "status.tsv")) as f:
        for row in f:
            name, status, detail = (row.rstrip("\n").split("\t") + [""])[:3]
            src = os.path.join(out, "src")
            diff_path = os.path.join(src, name + ".fix.diff")
            diff = open(diff_path).read() if os.path.exists(diff_path) else ""
            skipped = []
            log = os.path.join(out, "logs", name + ".log")
            if os.path.exists(log):
                for m in re.finditer(r"harness skips (\w+)\(\): (.*)", open(log).read()):
                    skipped.append({"function": m.group(1), "reason": m.group(2)})
            examples.append({
                "example": name,
                "status": status,
                "args" if status == "ok" else "error": detail.strip(),
                "fixed": bool(diff),
                "fix_diff": diff,
                "skipped_functions": skipped,
                "nests": nest_predictions(os.path.join(src, name + ".report.json")),
            })
    json.dump({"schema": "schedpredict-gcc-openacc-manifest", "version": 1,
               "examples": examples}, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
