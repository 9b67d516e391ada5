"""VLM unlearning's hostile corpus (``tests/hostile/__init__.py`` says what a hook declares): real VLGuard
records with damaged values, paths and images, mapped sources and routing-score files refused whole, bad
JSON Lines records, and the evaluator's answer files."""
from __future__ import annotations

import dataclasses
import functools
import io
import json
from pathlib import Path

from tests.hostile import (BOMB_RSS_LIMIT_MB, DEEP, KEPT, QUARANTINED, REFUSED, TOO_DEEP, YAML_BOMB, Case, Corpus,
                           CorpusBuild, assert_every_case, huge_integer, peak_rss_growth_mb, png_bomb, reconciled_units, write_file)

# A build's own growth is below it (docs/RELIABILITY.md lists the measured peaks); a decoded image bomb passes it
PEAK_LIMIT_MB = 1000

NOT_APPLICABLE = {
    "undecodable file names": "JSON and YAML strings are Unicode, so a record cannot name a file that is not",
    "zip bombs": "reads no archive (images are PNG/JPEG; their decompression bombs are covered)",
    "XML entity expansion and DOCTYPEs": "reads no XML (the YAML alias bomb is its analogue, covered)",
    "not-a-zip, encrypted, macro-enabled and Strict Office files": "reads no Office file",
    "cyclic dependency graphs": "records have no references between them",
}


def corpus(work: Path, fixtures: Path) -> Corpus:
    """The corpus source, built with supplied routing scores (the built-in scorer's training is not under test)."""
    root = work / "raw"
    cases = write_vlm_unlearning(root, fixtures)
    scores = work / "scores.json"
    records = [r for r in json.loads((root / "train.json").read_text()) if isinstance(r, dict)]
    scores.write_text(json.dumps({f"train/{r['id']}#{i}": round((n * 37 + i) % 100 / 100, 2)
                                  for n, r in enumerate(records) if isinstance(r.get("id"), str)
                                  and isinstance(r.get("instr-resp"), list) for i in range(len(r["instr-resp"]))}))
    from benchwright import registry

    dataset = registry.get("vlm_unlearning").configured(format="vlguard", routing_scores=str(scores))
    return Corpus(root, cases, dataset=dataset)


def refusals(root: Path) -> list[tuple[Case, object]]:
    """Sources refused whole (through a build) and routing-score files (through ``read_scores``, what the
    build calls on --routing-scores)."""
    from benchwright.vlm_unlearning.routing import read_scores
    from tests.builds import build_dataset

    def run(case: Case, path: Path):
        if case.format == "routing-score file":
            return lambda out: read_scores(str(path))
        return lambda out: build_dataset("vlm_unlearning", path, out)

    return [(case, run(case, path)) for case, path, _ in refusals_vlm_unlearning(root)]


def other_cases(root: Path, fixtures: Path, build: CorpusBuild) -> list[Case]:
    return mapped_lines_vlm_unlearning(root / "mapped")[1]


def evaluator_cases(root: Path, fixtures: Path) -> list[tuple[Case, object]]:
    return vlm_prediction_cases(root)


def _vlm_image(path: str) -> bytes:
    from PIL import Image

    from benchwright.hashing import stable_hash64

    h = stable_hash64(path)
    out = io.BytesIO()
    Image.new("RGB", (24 + h % 40, 24 + (h >> 8) % 40), (h % 256, (h >> 8) % 256, (h >> 16) % 256)).save(
        out, format="PNG" if path.endswith(".png") else "JPEG")
    return out.getvalue()


def write_vlm_unlearning(root: Path, fixtures: Path) -> list[Case]:
    """Real VLGuard records (the first 30 of train.json, 10 of test.json) with generated images, then
    one case per record: damaged JSON values, paths out of the image root, broken images."""
    train = json.loads((fixtures / "vlguard" / "train.json").read_text())[:30]
    test = json.loads((fixtures / "vlguard" / "test.json").read_text())[:10]
    ids = iter(range(1000))
    cases: list[Case] = []

    def add(fmt, name, record, reason, unit="record", outcome=QUARANTINED, locator=None):
        cases.append(Case("vlm_unlearning", fmt, name, locator or f"train.json#id={record['id']}", reason, unit,
                          outcome))

    def record(change=None) -> dict:
        r = json.loads(json.dumps(train[next(ids) % len(train)]))
        r["id"] = f"hostile_{len(cases):02d}"
        r["image"] = f"hostile/{r['id']}.png"
        if change:
            change(r)
        return r

    extra = []

    def json_case(name, reason, change, unit="record", locator=None):
        r = record(change)
        extra.append(r)
        add("VLGuard JSON", name, r, reason, unit, locator=locator)

    json_case("wrong JSON type: a record is a list", "a record is an object", None,
              locator="train.json#index=")
    extra[-1] = [extra[-1]]
    json_case("wrong JSON type: safe is a string", "true or false is required", lambda r: r.update(safe="yes"))
    json_case("wrong JSON type: instr-resp is a string", "no instruction-response pairs",
              lambda r: r.update({"instr-resp": "say hi"}))
    json_case("missing id", "field 'id' is missing", lambda r: r.pop("id"), locator="train.json#index=")
    json_case("NaN response", "empty response",
              lambda r: r["instr-resp"][0].update(response=float("nan")), unit="example")
    json_case("infinite (1e999) id", "a non-empty string is required", lambda r: r.update(id=float("inf")),
              locator="train.json#index=")
    json_case("unknown harmful category", "unknown harmful_category",
              lambda r: r.update(safe=False, harmful_category="unicorns", harmful_subcategory="x"))
    json_case("path traversal in image", "leaves the image root", lambda r: r.update(image="../../outside.png"))
    json_case("absolute image path", "is an absolute path", lambda r: r.update(image="/etc/hostname"))
    token = record(lambda r: [p.update({k: f"<image> {v}" for k, v in p.items()}) for p in r["instr-resp"]])
    extra.append(token)  # kept: LLaVA's image token written literally is escaped where a model reads it
    add("VLGuard JSON", "LLaVA's image token in an instruction and a response", token, "", outcome=KEPT)
    dup = record()
    dup["id"] = train[0]["id"]
    extra.append(dup)
    add("VLGuard JSON", "duplicate id", dup, "duplicate id", locator=f"train.json#id={dup['id']}[index=")
    json_case("a lone surrogate (\\ud800) escaped in an instruction (repaired to U+FFFD, counted)", "",
              lambda r: r["instr-resp"][0].update({k: f"{v} \ud800" for k, v in r["instr-resp"][0].items()
                                                   if k != "response"}))
    cases[-1] = dataclasses.replace(cases[-1], outcome=KEPT)
    json_case("a NUL byte in image", "holds a NUL byte", lambda r: r.update(image=f"hostile/{r['id']}\0.png"))
    json_case("a 300-character image file name", "has a name of 300 bytes",
              lambda r: r.update(image="hostile/" + "i" * 296 + ".png"))
    json_case("a record nested 150 levels deep (past what Beam's coder walks)", "nested more than 100 levels deep",
              lambda r: r.update(extra=functools.reduce(lambda inner, _: [inner], range(150), 0)),
              locator="train.json#index=")
    leaked = record()
    extra.append(leaked)
    test = test + [json.loads(json.dumps(leaked))]  # the same id and image in the test file: the test copy is kept
    add("VLGuard JSON", "the same id and image in train.json and test.json (a leak)", leaked,
        "is a leak; the test copy is kept")

    # images: records whose image file is broken
    broken = {}

    def image_case(name, reason, data):
        r = record()
        extra.append(r)
        broken[r["image"]] = data
        add("image", name, r, reason)

    good = _vlm_image("good.png")
    image_case("missing", "is missing", None)
    image_case("corrupt bytes", "not decodable", b"\x89PNG\r\n\x1a\n not really a png")
    image_case("truncated PNG", "not decodable", good[: len(good) // 2])
    image_case("empty file", "not decodable", b"")
    image_case("decompression bomb (20000 x 20000 zeros)", "decompression bomb", png_bomb(20000, 20000))
    image_case("unreadable (a folder)", "cannot be read", "folder")
    # symlinks: the image root's real path bounds the real path of every image read through it
    outside = root.parent / "outside.png"
    image_case("symlink out of the image root", "a symlink to a place outside the image root", ("link", outside))
    r = record(lambda r: r.update(image=f"linked/{r['id']}.png"))  # a folder above the file is the link
    extra.append(r)
    broken[r["image"]] = ("link", None)
    add("image", "a folder symlinked out of the image root", r, "a symlink to a place outside the image root")
    image_case("symlink loop (the file links to itself)", "Too many levels of symbolic links", ("link", "itself"))
    inside = record()  # kept: a link that stays inside the image root is an ordinary file of the source
    extra.append(inside)
    broken[inside["image"]] = ("link", f"../{train[0]['image']}")
    add("image", "symlink inside the image root", inside, "", outcome=KEPT)
    # ids no file is named after (images are exported by their sha256): kept whatever they hold, and read back
    # through the LLaVA export and the evaluator (test_hostile_inputs)
    for n, hostile_id in enumerate(HOSTILE_IDS):
        r = record()
        r.update(id=hostile_id, image=f"hostile/named_{n}.png")
        extra.append(r)
        add("VLGuard JSON", f"id {hostile_id[:40]!r}{'...' if len(hostile_id) > 40 else ''}", r, "", outcome=KEPT)

    for stem, records in (("train", train + extra), ("test", test)):
        (root / stem).mkdir(parents=True, exist_ok=True)
        (root / f"{stem}.json").write_text(json.dumps(records, indent=1))
        for r in records:
            if not isinstance(r, dict) or not isinstance(r.get("image"), str) or r["image"].startswith(("/", "..")) \
                    or "\0" in r["image"] or len(r["image"]) > 255:
                continue
            path = root / stem / r["image"]
            path.parent.mkdir(parents=True, exist_ok=True)
            data = broken.get(r["image"], _vlm_image(r["image"]))
            if data == "folder":
                path.mkdir()
            elif isinstance(data, tuple) and data[1] is None:  # the folder above is a link out of the root
                (root.parent / "linked").mkdir(exist_ok=True)
                (root.parent / "linked" / path.name).write_bytes(_vlm_image(r["image"]))
                if not path.parent.is_symlink():
                    path.parent.rmdir()
                    path.parent.symlink_to(root.parent / "linked")
            elif isinstance(data, tuple):
                path.symlink_to(path if data[1] == "itself" else data[1])
            elif data is not None:
                path.write_bytes(data)
    (root.parent / "outside.png").write_bytes(_vlm_image("outside.png"))
    return cases


# Record ids that name no file: whitespace of every kind, quotes, a leading dash, a slash and a hash (the example
# id's own separators), a percent sign, non-ASCII, and 300 characters.
HOSTILE_IDS = ("id with spaces", "tab\tand\nnewline", "-leading 'single' \"double\"", "slash/in#hash 0",
               "ünïcødé 名前 %20", "x" * 300)


def _parquet_rows() -> bytes:
    """A mapped Parquet file as ``datasets`` writes the Hugging Face releases (Image column of bytes)."""
    import datasets

    table = datasets.Dataset.from_dict(
        {"id": ["a", "b"], "img": [{"bytes": _vlm_image(f"{n}.png"), "path": f"{n}.png"} for n in "ab"],
         "q": ["Q?", "Q2?"], "a": ["A", "B"]},
        features=datasets.Features({"id": datasets.Value("string"), "img": datasets.Image(),
                                    "q": datasets.Value("string"), "a": datasets.Value("string")}))
    out = io.BytesIO()
    table.to_parquet(out)
    return out.getvalue()


def refusals_vlm_unlearning(root: Path) -> list[tuple[Case, Path, list]]:
    """Sources the VLM build refuses whole (``SourceError`` naming the file), each its own folder, and
    routing-score files (``--routing-scores``: a bad score refuses the routing it feeds)."""
    out = []
    mapping_ok = "files: [{path: forget.jsonl, role: forget}]\nfields: {id: id, image: img, instruction: q, response: a}\n"

    def source(name, files: dict[str, str | bytes], fmt, reason, locator):
        folder = root / f"refused_{len(out):02d}"
        folder.mkdir(parents=True)
        for rel, data in files.items():
            (folder / rel).write_bytes(data if isinstance(data, bytes) else data.encode())
        out.append((Case("vlm_unlearning", fmt, name, locator, reason, outcome=REFUSED), folder, []))

    line = '{"id": 1, "img": "a.png", "q": "Q?", "a": "A"}\n'
    source("malformed YAML", {"mapping.yaml": "files: [\n  - path: x\n", "forget.jsonl": line},
           "mapping YAML", "malformed YAML", "mapping.yaml")
    source("wrong YAML type: files is a string", {"mapping.yaml": mapping_ok.replace(
        "[{path: forget.jsonl, role: forget}]", "forget.jsonl"), "forget.jsonl": line}, "mapping YAML",
        "is not of type 'array'", "mapping.yaml")
    source("YAML alias bomb", {"mapping.yaml": YAML_BOMB.replace("i: &i", "files: &i") + mapping_ok.split("\n", 1)[1],
                               "forget.jsonl": line}, "mapping YAML", "alias", "mapping.yaml")
    source("not UTF-8", {"mapping.yaml": b"files: \xff\xfe\n", "forget.jsonl": line}, "mapping YAML",
           "cannot read the mapping", "mapping.yaml")
    parquet_mapping = mapping_ok.replace("forget.jsonl", "forget.parquet")
    source("not Parquet (JSON Lines under a .parquet name)", {"mapping.yaml": parquet_mapping, "forget.parquet": line},
           "mapped Parquet", "not a readable Parquet file", "forget.parquet")
    source("truncated Parquet", {"mapping.yaml": parquet_mapping, "forget.parquet": _parquet_rows()[:-200]},
           "mapped Parquet", "not a readable Parquet file", "forget.parquet")
    source("huge value: a 5000-digit integer", {"train.json": f'[{{"id": {huge_integer()}}}]'}, "VLGuard JSON",
           "not valid JSON", "train.json")
    source("duplicate key in a record", {"train.json": '[{"id": "a", "id": "b"}]'}, "VLGuard JSON",
           "duplicate key 'id'", "train.json")
    source("truncated JSON", {"train.json": '[{"id": "a", "image": '}, "VLGuard JSON", "not valid JSON", "train.json")
    source("100,000-deep nesting", {"train.json": DEEP}, "VLGuard JSON", TOO_DEEP,
           "train.json")
    source("100,000-deep nesting", {"mapping.yaml": "files: " + "[" * 100_000 + "]" * 100_000 + "\n", "forget.jsonl": line},
           "mapping YAML", "nested more than 100 levels deep", "mapping.yaml")
    source("duplicate key", {"mapping.yaml": mapping_ok + "fields: {id: id}\n", "forget.jsonl": line}, "mapping YAML",
           "duplicate key 'fields'", "mapping.yaml")
    source("a NUL byte in a file path", {"mapping.yaml": mapping_ok.replace("forget.jsonl", '"forget\\0.jsonl"'),
                                         "forget.jsonl": line}, "mapping YAML", "holds a NUL byte", "mapping.yaml")
    source("wrong JSON type: an object, not an array", {"train.json": '{"id": "a"}'}, "VLGuard JSON",
           "expected a JSON array", "train.json")
    # names that become paths, and empty files (issue 25)
    source("a mapped file's path climbing out of the source", {"mapping.yaml": mapping_ok.replace(
        "path: forget.jsonl", "path: ../outside.jsonl"), "forget.jsonl": line}, "mapping YAML",
        "files/0/path '../outside.jsonl' leaves the source", "mapping.yaml")
    source("an image_root climbing out of the source", {"mapping.yaml": mapping_ok + "image_root: ../..\n",
                                                        "forget.jsonl": line}, "mapping YAML",
           "image_root '../..' leaves the source", "mapping.yaml")
    source("an empty annotation file (an empty JSON array)", {"train.json": "[]", "test.json": "[]"}, "VLGuard JSON",
           "holds no records (an empty JSON array)", "train.json")
    source("an empty JSON Lines file", {"mapping.yaml": mapping_ok, "forget.jsonl": "\n"}, "mapped JSON Lines",
           "holds no records (no JSON Lines)", "forget.jsonl")
    source("an annotation file symlinked out of the source", {}, "VLGuard JSON",
           "the file is reached through a symlink to a place outside the source", "train.json")
    (root / "outside_train.json").write_text('[{"id": "a"}]')
    (out[-1][1] / "train.json").symlink_to(root / "outside_train.json")
    for name, text, reason in (
            ("NaN score", '{"train/a#0": NaN}', "not a finite number"),
            ("infinite (1e999) score", '{"train/a#0": 1e999}', "not a finite number"),
            ("huge value: a 5000-digit score", '{"train/a#0": %s}' % huge_integer(), "not JSON"),
            ("wrong JSON type: a list", "[0.5]", "expected one JSON object"),
            ("duplicate example id", '{"train/a#0": 0.1, "train/a#0": 0.9}', "duplicate key"),
            ("100,000-deep nesting", "[" * 100_000 + "]" * 100_000, TOO_DEEP),
            ("huge value: a score of 10^400 (past a float's range)", '{"train/a#0": 1%s}' % ("0" * 400),
             "is not a finite number"),
            ("truncated JSON", '{"train/a#0": 0.', "not JSON")):
        path = root / f"scores_{len(out):02d}.json"
        path.write_text(text)
        out.append((Case("vlm_unlearning", "routing-score file", name, path.name, reason, outcome=REFUSED), path, []))
    path = root / f"scores_{len(out):02d}.jsonl"
    path.write_text('{"example_id": "train/a#0", "score": 0.5}\n{"example_id": "train/a#0", "score": 0.7}\n')
    out.append((Case("vlm_unlearning", "routing-score file", "duplicate example id (JSON Lines)", f"{path.name}:2",
                     "appears twice", outcome=REFUSED), path, []))
    path = root / f"scores_{len(out):02d}.jsonl"  # the line numbers are the file's whatever its strings hold
    path.write_text('{"example_id": "train/a#0", "score": 0.5, "note": "a\u2028b\x85c"}\n'
                    '{"example_id": "train/a#0", "score": 0.7}\n', encoding="utf-8")
    out.append((Case("vlm_unlearning", "routing-score file", "a line separator (U+2028) in a line, then a duplicate id",
                     f"{path.name}:2", "appears twice", outcome=REFUSED), path, []))
    return out


def mapped_lines_vlm_unlearning(root: Path) -> tuple[Path, list[Case]]:
    """A mapped source (JSON Lines) whose bad lines are records of their own, quarantined by the same
    stage function the build runs."""
    (root / "images").mkdir(parents=True)
    (root / "mapping.yaml").write_text(
        "files: [{path: forget.jsonl, role: forget}]\nfields: {id: id, image: img, instruction: q, response: a}\n")
    lines = ['{"id": 1, "img": "a.png", "q": "Q?", "a": "A"}', '{"id": 2, "img": "a.png", "q": "Q?", ',
             '{"id": %s, "img": "a.png", "q": "Q?", "a": "A"}' % huge_integer(),
             '{"id": 4, "id": 5, "img": "a.png", "q": "Q?", "a": "A"}', '[1, 2]',
             '{"id": 6, "img": "../../a.png", "q": "Q?", "a": "A"}', "[" * 100_000 + "]" * 100_000,
             '{"id": 8, "img": "a.png", "q": "Q?", "a": "A", "x": %s}' % ("[" * 150 + "]" * 150),
             json.dumps({"id": 9, "img": "a.png", "q": LINE_SEPARATED[0], "a": LINE_SEPARATED[1]}, ensure_ascii=False)]
    (root / "forget.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "images" / "a.png").write_bytes(_vlm_image("a.png"))
    fmt = "mapped JSON Lines"
    return root, [Case("vlm_unlearning", fmt, "truncated line", "forget.jsonl#line=2", "not valid JSON", "record"),
                  Case("vlm_unlearning", fmt, "huge value: a 5000-digit id", "forget.jsonl#line=3", "not valid JSON",
                       "record"),
                  Case("vlm_unlearning", fmt, "duplicate key", "forget.jsonl#line=4", "duplicate key 'id'", "record"),
                  Case("vlm_unlearning", fmt, "wrong JSON type: a list", "forget.jsonl#index=4", "a record is an object",
                       "record"),
                  Case("vlm_unlearning", fmt, "path traversal in the image field", "forget.jsonl#id=6",
                       "leaves the image root", "record"),
                  Case("vlm_unlearning", fmt, "100,000-deep nesting", "forget.jsonl#line=7", TOO_DEEP, "record"),
                  Case("vlm_unlearning", fmt, "a record nested 150 levels deep (past what Beam's coder walks)",
                       "forget.jsonl#line=8", "nested more than 100 levels deep", "record"),
                  Case("vlm_unlearning", fmt, "line separators (U+2028, U+0085) as they are in a record's strings",
                       "forget.jsonl#line=9", "", "record", KEPT)]


# text JSON keeps as it is that str.splitlines ends a line at (a JSON Lines line ends at "\n" only)
LINE_SEPARATED = ("What is\u2028shown?", "An elephant\x85and\u2029a calf.")



def vlm_prediction_cases(root: Path) -> list[tuple[Case, object]]:
    """Answers (JSON Lines) scored without a build: each row names its set."""
    from benchwright.evaluation import vlm_unlearning as ev

    good = {"example_id": "f0", "view": "multimodal", "subset": "forget", "response": "I cannot help with that."}
    out = []

    def case(name, reason, line: str | bytes, outcome=REFUSED, line_number=2):
        path = root / f"{len(out):02d}" / "answers.jsonl"
        first = (json.dumps(good) + "\n").encode() if line_number else b""  # no line to name: the file alone
        write_file(path, first + (line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")) + b"\n")

        def run():
            result = ev.evaluate(ev.read_predictions(str(path)))
            return [f"{sum(g['answered'] for g in result['groups'].values())} answers scored"]

        out.append((Case("vlm_unlearning", "answers JSON Lines (evaluator input)", name,
                         f"{path}:{line_number}" if line_number else str(path), reason, outcome=outcome), run))

    def row(**change) -> str:
        return json.dumps({**good, "example_id": "r0", "subset": "retain", "response": "Sure.", **change})

    case("a repeated key", "duplicate key 'response'", row()[:-1] + ', "response": "I cannot."}')
    case("100,000-deep nesting", "nested deeper than the JSON decoder can follow",
         '{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    case("a Latin-1 byte", "not UTF-8: byte 0xe9", json.dumps(json.loads(row(response="caf\xe9")),
                                                              ensure_ascii=False).encode("latin-1"))
    case("a number of 5,000 digits", "a number of 5,000 digits", row()[:-1] + ', "n": ' + huge_integer() + "}")
    case("response a number", "response: a string is required (got 5)", row(response=5))
    case("response a 1 MB list (the message stays short)", "response: a string is required (got [0, 0",
         row(response=[0] * (1 << 18)))
    case("example_id an integer", "example_id: a non-empty string is required (got 1180591620717411303424)",
         row(example_id=2 ** 70))
    case("split a 1 MB string", "split: 'xxxx", row(split="x" * (1 << 20)))
    case("subset true", "subset: True (a boolean) is not one of", row(subset=True))
    case("a line that is not an object", "a prediction is a JSON object", "[1]")
    case("a second answer to one example", "a second prediction for multimodal / f0", json.dumps(good))
    case("a UTF-8 byte order mark", "Unexpected UTF-8 BOM", "\ufeff" + row())
    case("no answers", "no predictions", b"\n", line_number=0)
    case("a response holding U+2028 (a JSON line, not two)", "2 answers scored",
         json.dumps({**json.loads(row()), "response": "one\u2028two"}, ensure_ascii=False), outcome=KEPT)
    return out



# --------------------------------------------------------------------------- checks


def check_counts_and_what_is_published(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    import pyarrow.parquet as pq

    from benchwright.layout import MANIFEST

    root, built, cases = build.source, build.built, build.cases
    assert len(cases) >= 15
    units = reconciled_units(built)
    bad = [c for c in cases if c.outcome == QUARANTINED]
    assert units["record"]["quarantined"] == sum(c.unit == "record" for c in bad)
    assert units["example"]["quarantined"] >= len(bad)
    records = {r["record_id"] for f in (built / "records").glob("*.parquet")
               for r in pq.read_table(f, columns=["record_id"]).to_pylist()}
    kept = {c.locator.split("#id=", 1)[1] for c in cases if c.outcome == KEPT}
    assert kept and kept <= records
    # a literal <image> in the source: the one token of each conversation is the leading one of an image row
    token_id = next(c.locator.split("#id=", 1)[1] for c in cases if "image token" in c.name)
    for view in ("multimodal", "text_only", "image_only"):
        rows = [r for f in (built / view).glob("*.parquet")
                for r in pq.read_table(f, columns=["record_id", "conversations"]).to_pylist() if r["record_id"] == token_id]
        assert rows and all([c["value"].count("<image>") for c in r["conversations"]] == [int(view != "text_only"), 0]
                            and "&lt;image&gt;" in r["conversations"][1]["value"] for r in rows)
    # a lone surrogate escaped in an instruction: repaired before Beam's coder (beam.Create), counted, kept
    repaired = next(c.locator.split("#id=", 1)[1] for c in cases if "lone surrogate" in c.name)
    instructions = [r["instruction"] for f in (built / "multimodal").glob("*.parquet")
                    for r in pq.read_table(f, columns=["record_id", "instruction"]).to_pylist() if r["record_id"] == repaired]
    assert instructions and all(i.endswith(" \ufffd") for i in instructions[:1])
    assert json.loads((built / MANIFEST).read_text())["counters"]["unencodable_strings.ListRecords"] >= 1
    # the leak: the training copy is quarantined, the test copy published
    leaked = next(c.locator.split("#id=", 1)[1] for c in cases if "leak" in c.name)
    keys = {r["record_key"] for f in (built / "records").glob("*.parquet")
            for r in pq.read_table(f, columns=["record_key"]).to_pylist()}
    assert f"test/{leaked}" in keys and f"train/{leaked}" not in keys
    # nothing read from outside the image root: no published image is a linked-out file's bytes
    outside = {(root.parent / "outside.png").read_bytes(), *(p.read_bytes() for p in (root.parent / "linked").iterdir())}
    published = [r["image"] for f in (built / "multimodal").glob("*.parquet")
                 for r in pq.read_table(f, columns=["image"]).to_pylist()]
    assert published and not any(i["bytes"] in outside for i in published)


def check_hostile_ids_read_back_through_the_llava_export_and_the_evaluator(build: CorpusBuild, tmp_path: Path,
                                                                          fixtures: Path):
    """Ids with whitespace, quotes, a leading dash, '/' and '#', non-ASCII and 300 characters are published,
    exported for LLaVA (its images named by their sha256: no id becomes a path) and scored by the evaluator
    from answers keyed by the export's ids: every answer is joined to its example, none is unknown."""
    from benchwright.evaluation.vlm_unlearning import evaluate, index_from_build, read_predictions
    from benchwright.loaders.vlm_unlearning import export_llava

    built = build.built
    export_llava(built, tmp_path / "llava")
    samples = json.loads((tmp_path / "llava" / "multimodal" / "forget.json").read_text(encoding="ascii"))
    samples += json.loads((tmp_path / "llava" / "multimodal" / "retain.json").read_text(encoding="ascii"))
    ids = {s["id"] for s in samples}
    for hostile_id in HOSTILE_IDS:
        assert f"train/{hostile_id}#0" in ids, hostile_id
    assert all((tmp_path / "llava" / "images" / s["image"]).is_file() for s in samples if "image" in s)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"example_id": i, "view": "multimodal", "response": "I cannot help with that."})
                               + "\n" for i in sorted(ids)), encoding="utf-8")
    result = evaluate(read_predictions(str(answers)), index_from_build(str(built)), missing="exclude")
    sets = result["groups"]["multimodal"]["sets"]
    assert sets["forget"]["answered"] + sets["retain"]["answered"] == len(ids)
    assert sets["forget"]["missing"] == sets["retain"]["missing"] == 0


def check_bad_json_lines_are_records_of_their_own(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    """A mapped source's bad JSON Lines line is one quarantined record (the stage function the build runs)."""
    from benchwright.vlm_unlearning import sources
    from benchwright.stage import Reject, reject_row

    root, cases = mapped_lines_vlm_unlearning(tmp_path / "mapped")
    fmt, records, mapping = sources.list_records(str(root))
    rows = [reject_row("ParseRecord", r) for element in records
            for r in sources.parse_record(element, str(root), fmt, mapping) if isinstance(r, Reject)]
    assert_every_case(cases, rows)
    # the good lines are the records kept: the first, and the one whose strings hold line separators, intact
    assert sum(r["unit"] == "record" for r in rows) == sum(c.outcome == QUARANTINED for c in cases)
    kept = [r for element in records for r in sources.parse_record(element, str(root), fmt, mapping)
            if hasattr(r, "examples")]
    assert [(e.instruction, e.response) for r in kept for e in r.examples][-1] == LINE_SEPARATED


def check_image_bomb_is_refused_from_its_header(build: CorpusBuild, tmp_path: Path, fixtures: Path):
    import pytest

    from benchwright.errors import RecordError
    from benchwright.vlm_unlearning.stages import read_image

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_bomb(12000, 12000))  # 144 M pixels: under PIL's own error bound (2 x 89 M)

    def read():
        with pytest.raises(RecordError, match="decompression bomb"):
            read_image(str(bomb), "train.json#id=x")

    assert peak_rss_growth_mb(read) < BOMB_RSS_LIMIT_MB
