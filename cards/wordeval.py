"""The WordEval card: coverage statistics (by subsystem, command, COM object, object-property pair)
and the coverage figure, read columnar from the written Parquet."""
from __future__ import annotations

from pathlib import Path

from benchwright.card import markdown_table, pyplot, save_figure
from benchwright.loaders.wordeval import read_config
from benchwright.schemas import wordeval as schema


def card_statistics(root: Path) -> dict:
    atomic = read_config(root, "atomic", ["subsystem", "command", "com_object", "properties", "base_document"])
    comp = read_config(root, "compositional", ["template", "atomic_case_ids", "properties", "base_document"])
    rows = {}
    for sub, cmd, obj, props in zip(atomic["subsystem"].to_pylist(), atomic["command"].to_pylist(),
                                    atomic["com_object"].to_pylist(), atomic["properties"].to_pylist()):
        r = rows.setdefault(sub, {"cases": 0, "commands": set(), "objects": set(), "pairs": set()})
        r["cases"] += 1
        r["commands"].add(cmd)
        r["objects"].add(obj)
        r["pairs"].update(props)
    table = [[s, r["cases"], len(r["commands"]), len(r["objects"]), len(r["pairs"])]
             for s, r in sorted(rows.items(), key=lambda kv: schema.SUBSYSTEMS.index(kv[0])
                                if kv[0] in schema.SUBSYSTEMS else 99)]
    totals = {
        "atomic_cases": atomic.num_rows,
        "compositional_cases": comp.num_rows,
        "templates": len(set(comp["template"].to_pylist())),
        "commands": len(set(atomic["command"].to_pylist())),
        "com_objects": len(set(atomic["com_object"].to_pylist())),
        "object_property_pairs": len({p for ps in atomic["properties"].to_pylist() for p in ps}),
        "subsystems": len(rows),
        "base_documents": len(set(atomic["base_document"].to_pylist())),
    }
    real = real_document_share(atomic["base_document"].to_pylist(), comp["base_document"].to_pylist())
    totals["cases_on_real_documents"] = f"{real['all']['real']} of {real['all']['cases']} ({real['all']['share']:.1%})"
    return {
        "totals": totals,
        "real_documents": real,
        "figures": {"coverage": coverage_figure(root, rows)},
        "totals_table": markdown_table(["measure", "count"], [[k.replace("_", " "), v] for k, v in totals.items()]),
        "subsystem_table": markdown_table(["subsystem", "atomic cases", "commands", "COM objects",
                                           "object-property pairs"], table),
        "com_object_table": com_object_table(atomic),
        "pair_table": pair_table(atomic, comp),
        "real_document_table": markdown_table(
            ["config", "cases", "on real documents", "share"],
            [[k, v["cases"], v["real"], f"{v['share']:.1%}"] for k, v in real.items()]),
    }


def real_document_share(atomic_bases: list[str], comp_bases: list[str]) -> dict:
    """Cases whose base document is a real (shipped) document rather than a synthetic recipe."""
    from benchwright.wordeval.basedocs import basedocs_spec

    spec = basedocs_spec()
    out = {}
    for name, bases in (("atomic", atomic_bases), ("compositional", comp_bases),
                        ("all", atomic_bases + comp_bases)):
        n_real = sum(1 for b in bases if "file" in spec.get(b, {}))
        out[name] = {"cases": len(bases), "real": n_real, "share": n_real / len(bases) if bases else 0.0}
    return out


def com_object_table(atomic) -> str:
    """Per COM object (the catalogue's subsystem order, then by name): atomic cases, commands,
    object-property pairs and the subsystems it appears in."""
    objs: dict[str, dict] = {}
    for sub, cmd, obj, props in zip(atomic["subsystem"].to_pylist(), atomic["command"].to_pylist(),
                                    atomic["com_object"].to_pylist(), atomic["properties"].to_pylist()):
        r = objs.setdefault(obj, {"cases": 0, "commands": set(), "pairs": set(), "subsystems": set()})
        r["cases"] += 1
        r["commands"].add(cmd)
        r["pairs"].update(props)
        r["subsystems"].add(sub)
    order = {s: i for i, s in enumerate(schema.SUBSYSTEMS)}

    def first(r):
        return min(order.get(s, 99) for s in r["subsystems"])

    rows = [[obj, r["cases"], len(r["commands"]), len(r["pairs"]),
             ", ".join(sorted(r["subsystems"], key=lambda s: order.get(s, 99)))]
            for obj, r in sorted(objs.items(), key=lambda kv: (first(kv[1]), kv[0]))]
    return markdown_table(["COM object", "atomic cases", "commands", "object-property pairs", "subsystems"], rows)


def pair_table(atomic, comp) -> str:
    """Per object-property pair: atomic cases and compositional cases that edit it."""
    counts: dict[str, list[int]] = {}
    for props in atomic["properties"].to_pylist():
        for p in set(props):
            counts.setdefault(p, [0, 0])[0] += 1
    for props in comp["properties"].to_pylist():
        for p in set(props):
            counts.setdefault(p, [0, 0])[1] += 1
    rows = [[p, a, c] for p, (a, c) in sorted(counts.items())]
    return markdown_table(["object-property pair", "atomic cases", "compositional cases"], rows)


def coverage_figure(root: Path, rows: dict) -> str:
    """Atomic cases and object-property pairs per subsystem, in the catalogue's subsystem order."""
    plt = pyplot()
    names = [s for s in schema.SUBSYSTEMS if s in rows] + sorted(set(rows) - set(schema.SUBSYSTEMS))
    fig, ax = plt.subplots(figsize=(8, 0.3 * len(names) + 1.4))
    y = range(len(names))
    ax.barh([i + 0.2 for i in y], [rows[s]["cases"] for s in names], height=0.4, label="atomic cases")
    ax.barh([i - 0.2 for i in y], [len(rows[s]["pairs"]) for s in names], height=0.4,
            label="object-property pairs")
    ax.set_yticks(list(y), [s.replace("_", " ") for s in names])
    ax.invert_yaxis()
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
    ax.set_title("WordEval coverage per subsystem")
    fig.tight_layout()
    return save_figure(fig, root, "coverage")


def responsible_ai(dataset, root: Path, source: str) -> dict:
    """The Croissant file's Responsible-AI facts (``Dataset.responsible_ai``): generated cases, their planned
    units and oracles, and this build's coverage."""
    from benchwright.croissant import counts_text, value_counts
    from benchwright.wordeval.basedocs import basedocs_spec

    atomic = value_counts(dataset, root, "atomic", "subsystem")
    bases = {**value_counts(dataset, root, "atomic", "base_document")}
    for name, n in value_counts(dataset, root, "compositional", "base_document").items():
        bases[name] = bases.get(name, 0) + n
    spec = basedocs_spec()
    real = sum(n for b, n in bases.items() if "file" in spec.get(b, {}))
    total = sum(bases.values())
    missing = sorted(set(schema.SUBSYSTEMS) - set(atomic))
    return {
        "dataCollection": (
            "Nothing is collected from people: every case is generated from a unit catalogue (planned editing "
            "units, composition templates, instruction templates; by default the one shipped in the package) "
            "applied to base documents: synthetic recipes, and real documents shipped unchanged from the test "
            "suites of python-docx, docx4j and Apache POI (sources and licences in the package's basedocs/README.md)."),
        "dataCollectionType": ["Software Collection (generated from the unit catalogue)",
                               "Document analysis (real base documents from open-source test suites)"],
        "dataAnnotationProtocol": [
            "No human annotation. Each atomic case is one planned unit (one Word command on one COM object); its "
            "reference .docx is made by applying that unit's operation to the input through the same code path, "
            "never authored separately, and its oracle lists the target object-property values (effective values "
            "after the style cascade) and the side effects allowed elsewhere.",
            "A compositional case is an ordered composition of units; atomic_case_ids links it to its atomic cases. "
            "The instruction is rendered from the catalogue's instruction templates (English)."],
        "annotationsPerItem": "One planned unit per atomic case (its reference and oracle); a compositional case "
                              "carries one per step.",
        "annotatorDemographics": "None: no person annotated the cases (generated from the catalogue).",
        "machineAnnotationTools": [
            "benchwright's WordEval operation library (python-docx, lxml) applies each unit",
            "Gates every published file passes: reload with python-docx, ECMA-376 XSD validation, id / relationship "
            "/ content-type / field checks, opening in LibreOffice (headless)"],
        "dataAnnotationAnalysis": (
            "Units that cannot be planned on a base document (a role it lacks, no observable effect, the same "
            "input and reference as another seed) are filtered with the reason (_build/filtered/); every "
            "reference passes the gates above."),
        "dataBiases": [
            f"Coverage is uneven across Word subsystems: atomic cases per subsystem in this build: "
            f"{counts_text(atomic)}" + (f"; none for {', '.join(missing)}." if missing else "."),
            f"{real:,} of {total:,} cases ({real / total if total else 0:.1%}) use a real document; the others are "
            "synthetic recipes."],
        "dataLimitations": [
            "Instructions are templated English, not written by users.",
            "The oracle checks Word object properties as python-docx reads them; opening in LibreOffice is "
            "necessary, not sufficient (LibreOffice is more lenient than Word).",
            "lite repeats a quarter of the test cases (stratified by config, subsystem and base document)."],
        "dataUseCases": [
            "Evaluating document-editing agents on Word-native edits: `benchwright run wordeval` runs an agent on "
            "every case under limits, `benchwright evaluate wordeval` scores outputs against the oracles.",
            "A test set only: no training split."],
        "personalSensitiveInformation": (
            "None known: the documents are synthetic recipes or public test documents of open-source libraries. "
            "The build does not scan documents for personal data."),
    }
