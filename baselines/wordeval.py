"""WordEval baseline agents that bound the oracle from both sides.

* ``null`` returns the input document unchanged: it must fail every case (every edit is observable).
* ``replay`` applies the planned edit, i.e. returns the reference document: it must pass every case.

An agent's outputs are written as ``OUT/<case_id>.docx``, the layout ``benchwright evaluate wordeval
--outputs`` scores, so a real agent's folder and a baseline's are scored the same way.

    benchwright baseline wordeval --data OUT/wordeval --agent null|replay --out DIR
        [--config atomic|compositional|all] [--evaluate] [--report REPORT.json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

from benchwright.evaluation.wordeval import evaluate_outputs
from benchwright.loaders.wordeval import EXPORTS
from benchwright.schemas import wordeval as schema

AGENTS = {
    "null": "input_docx",      # the input, unchanged
    "replay": "reference_docx",  # the planned edit applied
}


def run_agent(data: str | Path, agent: str, out: str | Path, configs: tuple[str, ...] = schema.CONFIGS) -> int:
    """Write the agent's output for every case of ``configs``; returns the number of cases."""
    if agent not in AGENTS:
        raise ValueError(f"unknown agent {agent!r}; one of {', '.join(AGENTS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for config in configs:
        for f in sorted((Path(data) / config).glob("*.parquet")):
            # streamed: a build's documents are never all in memory
            for batch in pq.ParquetFile(f).iter_batches(batch_size=64, columns=["case_id", AGENTS[agent]]):
                for case_id, docx in zip(batch.column("case_id").to_pylist(), batch.column(AGENTS[agent]).to_pylist()):
                    (out / f"{case_id}.docx").write_bytes(docx)
                    n += 1
    return n


def run_cli(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="benchwright baseline wordeval", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="a built WordEval folder (OUT/wordeval)")
    ap.add_argument("--agent", required=True, choices=sorted(AGENTS))
    ap.add_argument("--out", required=True, help="folder for the outputs, <case_id>.docx")
    ap.add_argument("--config", default="all", choices=[*schema.CONFIGS, "all"])
    ap.add_argument("--evaluate", action="store_true", help="score the outputs with the evaluator")
    ap.add_argument("--report", help="with --evaluate: write every case's report here (JSON)")
    ns = ap.parse_args(argv)
    configs = schema.CONFIGS if ns.config == "all" else (ns.config,)
    n = run_agent(ns.data, ns.agent, ns.out, configs)
    result = {"agent": ns.agent, "cases": n, "out": ns.out}
    if ns.evaluate:
        scored = evaluate_outputs(ns.out, Path(ns.data) / EXPORTS)
        if ns.report:
            Path(ns.report).write_text(json.dumps(scored, indent=2, default=str), encoding="utf-8")
        result["summary"] = scored["summary"]
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli())
