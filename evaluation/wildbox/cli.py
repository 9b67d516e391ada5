"""``benchwright evaluate wildbox`` and its summary tables."""
from __future__ import annotations

import sys
from importlib import import_module
from pathlib import Path

from benchwright.arguments import ArgumentParser, parser_of
from benchwright.errors import BenchwrightError
from benchwright.evaluation import ap as apm
from benchwright.evaluation.wildbox.paths import evaluate_paths, is_kitti_folder
from benchwright.evaluation.wildbox.protocol import (
    AP_BEV_PROTOCOL_NAMES, AP_BEV_PROTOCOLS, DEFAULT_AP_BEV_PROTOCOL, IGNORE_MODES, NHD_COMPONENTS, NHD_IOU,
    SPECIES,
)
from benchwright.summary import Table, show, write_json


# ======================================================================================== CLI
def cli_parser() -> ArgumentParser:
    description = import_module(__package__).__doc__.split("\n")[0]   # the package docstring's first line
    parser = ArgumentParser(prog="benchwright evaluate wildbox", description=description)
    parser.add_argument("--gt", required=True, help="built WildBox folder, or a KITTI folder: an object root "
                        "(training/label_2, ImageSets/<split>.txt: the WildBox export's layout) or one with label_2")
    parser.add_argument("--pred", required=True, help="prediction JSON, or a KITTI result folder")
    parser.add_argument("--split", default="validation")
    parser.add_argument("--out", help="write the full metrics JSON here (the summary table is printed)")
    parser.add_argument("--ap-method", default="coco101", choices=apm.AP_METHODS,
                        help="AP interpolation of the COCO-style metrics (2D, 3D, Rel-AP-3D, coco101 AP-BEV)")
    parser.add_argument("--ap-bev-protocol", default=DEFAULT_AP_BEV_PROTOCOL, choices=AP_BEV_PROTOCOLS,
                        help="voc11 (default): the WildBox paper's AP-BEV, keys ap_bev_voc11@*; coco101: the "
                             "COCO-style keys ap_bev@* (and ap_bev@0.25_by_depth); both")
    parser.add_argument("--ignore", default="none", choices=IGNORE_MODES,
                        help="ground truth to ignore: none (the authors' setting) or omni3d (Omni3D's test filter)")
    return parser


@parser_of(cli_parser)
def run_cli(args=None) -> int:
    """``benchwright evaluate wildbox --gt OUT/wildbox --pred FILE [--split validation] [--out METRICS.json]
    [--ap-bev-protocol voc11|coco101|both] [--ignore none|omni3d]``.

    Prints a summary table, the headline AP-BEV@0.25 first with its protocol, and writes the full
    metrics JSON to ``--out``. Returns the exit code: 0, or 2 when the input is bad (the error names
    the file and entry).
    """
    ns = cli_parser().parse_args(args)
    root = Path(ns.gt)
    try:
        if is_kitti_folder(root):
            metrics = evaluate_paths(root, ns.pred, ns.split)
        else:
            metrics = evaluate_paths(root, ns.pred, ns.split, ap_method=ns.ap_method,
                                     ap_bev_protocol=ns.ap_bev_protocol, ignore=ns.ignore)
    except BenchwrightError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for warning in [*metrics.get("meta", {}).get("warnings", []), *metrics.get("kitti", {}).get("warnings", [])]:
        print(f"warning: {warning}", file=sys.stderr)
    notes = [f"full metrics: {write_json(ns.out, metrics)}" if ns.out else
             "full metrics (per species, by depth, the protocol): add --out METRICS.json"]
    show(summary_tables(metrics), notes)
    return 0


def headline(metrics: dict) -> tuple[str, str, float | None]:
    """(name, protocol, macro value) of the number the README and the paper lead with: AP-BEV@0.25,
    in the protocol the metrics were computed with (VOC 11-point when they hold both)."""
    for key, protocol in (("ap_bev_voc11@0.25", "voc11"), ("ap_bev@0.25", "coco101")):
        if key in metrics:
            return "AP-BEV@0.25", AP_BEV_PROTOCOL_NAMES[protocol], metrics[key]["macro"]
    raise KeyError("no AP-BEV@0.25 in these metrics")


# (key, name, protocol) in the summary's order: the headline first
SUMMARY_ROWS = (
    ("ap_bev_voc11@0.25", "AP-BEV@0.25", "voc11"), ("ap_bev_voc11@0.50", "AP-BEV@0.50", "voc11"),
    ("ap_bev@0.25", "AP-BEV@0.25", "coco101"), ("ap_bev@0.50", "AP-BEV@0.50", "coco101"),
    ("ap3d@0.25", "AP-3D@0.25", None), ("ap3d", "AP-3D (IoU 0.05-0.50)", None),
    ("rel_ap3d", "Rel-AP-3D", None), ("ap2d@0.50", "AP-2D@0.50", None),
    ("ap2d_agnostic@0.50", "AP-2D@0.50 agnostic", None),
)


PER_SPECIES_KEYS = ("ap_bev_voc11@0.25", "ap_bev@0.25", "ap3d", "ap2d@0.50")


def summary_tables(metrics: dict) -> list[Table]:
    """One screen: every AP (macro, micro, per species) with its protocol, the headline first; the
    NHDs; or, for KITTI-format ground truth, the devkit's AP per class, metric and difficulty."""
    if "meta" not in metrics:  # KITTI-format ground truth: the devkit's protocol only
        return [_kitti_table(metrics["kitti"])]
    method = metrics["meta"]["protocol"]["ap_method"]
    names = {**AP_BEV_PROTOCOL_NAMES, None: "COCO 101-point" if method == "coco101" else method}
    shown = [(key, name, names[protocol]) for key, name, protocol in SUMMARY_ROWS if key in metrics]
    tables = [Table("WildBox: AP in % (macro = mean over the species with ground truth; VOC 11-point = the WildBox "
                    "paper's AP-BEV)", ["metric", "protocol", "macro", "micro"],
                    [[name, protocol, metrics[key]["macro"], metrics[key]["micro"]] for key, name, protocol in shown],
                    numeric=(2, 3))]
    per_species = [(key, name) for key, name, _ in shown if key in PER_SPECIES_KEYS]
    tables.append(Table("Per species (AP in %)", ["species", *(name for _, name in per_species)],
                        [[s, *(metrics[key]["per_class"][s] for key, _ in per_species)] for s in SPECIES]))
    nhd = [[key, mean, metrics[key]["n_pairs"]["micro"], *(metrics[key][mean][c] for c in (*NHD_COMPONENTS, "depth_share"))]
           for key in ("nhd_hungarian", "nhd_hausdorff") if key in metrics for mean in ("macro", "micro")]
    if nhd:
        tables.append(Table(f"Normalised corner distances (pairs matched at 2D IoU >= {NHD_IOU}; lower is better)",
                            ["metric", "mean", "pairs", *NHD_COMPONENTS, "depth share"], nhd,
                            numeric=tuple(range(2, 4 + len(NHD_COMPONENTS)))))
    if "kitti" in metrics:
        tables.append(_kitti_table(metrics["kitti"]))
    return tables


def _kitti_table(kitti: dict) -> Table:
    rows = []
    for cls, entry in kitti["classes"].items():
        for kind in ("2d", "bev", "3d"):
            for difficulty, v in (entry.get(kind) or {}).items():
                if v is not None:
                    rows.append([cls, kind.upper(), difficulty, v["ap11"], v["ap40"], v.get("aos40"), v["n_gt"]])
    return Table("KITTI devkit protocol (AP in %)", ["class", "metric", "difficulty", "AP11", "AP40", "AOS40",
                                                   "ground truth"], rows, numeric=(3, 4, 5, 6))
