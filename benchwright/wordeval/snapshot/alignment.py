"""Alignment by content: which output paragraph, table, note, comment and section is which
reference one."""
from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass

from rapidfuzz import process
from rapidfuzz.distance import Indel

from benchwright.wordeval.snapshot.records import Snapshot


# An edited item is paired with a reference item at most this many positions past the previous
# pair of its block (beyond that it shows as inserted, the far reference item as deleted): bounds
# the similarity work to O(n * window) when every item changed.
PAIR_WINDOW = 50
# Anchoring stops refining after this many items scanned per input item (adversarial repetition);
# what is left unanchored is paired by similarity like any other changed block.
ANCHOR_WORK = 16


def align(ref_keys: list, out_keys: list, similarity=None) -> dict[int, int]:
    """Map output indices to reference indices by content, never by position alone.

    Equal items are anchored first (``_anchors``: common prefix and suffix, then items unique on
    both sides in order, recursively between them, as patience diff does); inside each block
    left between anchors, items are paired greedily in order with the most similar reference item
    within ``PAIR_WINDOW`` (the nearest of equally similar ones) when similar enough (ratio >= 0.5,
    ``_ratio`` unless ``similarity`` is given), so an edited paragraph still pairs
    with its reference and its differences are reported as property changes.  Near-linear:
    difflib's SequenceMatcher recursion is quadratic when short equal runs alternate with changes,
    and pairing every changed item against every other was quadratic in the document.
    """
    anchors = _anchors(ref_keys, out_keys)
    mapping = {j: i for i, j in anchors}
    ref_s = [x if isinstance(x, str) else str(x) for x in ref_keys] if similarity is None else ref_keys
    ref_len = [len(x) for x in ref_s] if similarity is None else None
    prev_i = prev_j = -1
    for i, j in anchors + [(len(ref_keys), len(out_keys))]:
        i1, i2, j1, j2 = prev_i + 1, i, prev_j + 1, j
        prev_i, prev_j = i, j
        used_i = i1
        for jj in range(j1, j2 if i2 > i1 else j1):
            hi = min(i2, used_i + PAIR_WINDOW)
            if hi <= used_i:
                break   # every reference item of the block is paired
            q = out_keys[jj]
            if similarity is None and len(q) + max(ref_len[used_i:hi]) <= _CHAR_LIMIT:
                # all candidates compared by characters: one call, the first best wins
                hit = process.extractOne(q, ref_s[used_i:hi], scorer=Indel.normalized_similarity, score_cutoff=0.5)
                best = used_i + hit[2] if hit is not None else None
            else:
                best, best_r = None, 0.5
                for ii in range(used_i, hi):
                    r = similarity(ref_keys[ii], q) if similarity else _ratio(ref_s[ii], q, best_r)
                    if r > best_r or (best is None and r >= best_r):
                        best, best_r = ii, r
                        if r >= 0.999:
                            break
            if best is not None:
                mapping[jj] = best
                used_i = best + 1
    return mapping


def _anchors(a: list, b: list) -> list[tuple[int, int]]:
    """Sorted (i, j) pairs with ``a[i] == b[j]``, increasing in both: a common subsequence."""
    pairs: list[tuple[int, int]] = []
    budget = ANCHOR_WORK * (len(a) + len(b) + 1)
    stack = [(0, len(a), 0, len(b))]
    while stack:
        alo, ahi, blo, bhi = stack.pop()
        while alo < ahi and blo < bhi and a[alo] == b[blo]:
            pairs.append((alo, blo))
            alo, blo = alo + 1, blo + 1
        while alo < ahi and blo < bhi and a[ahi - 1] == b[bhi - 1]:
            ahi, bhi = ahi - 1, bhi - 1
            pairs.append((ahi, bhi))
        budget -= (ahi - alo) + (bhi - blo)
        if alo == ahi or blo == bhi or budget < 0:
            continue
        count_a, count_b = Counter(a[alo:ahi]), Counter(b[blo:bhi])
        pos_a = {x: i for i, x in enumerate(a[alo:ahi], alo) if count_a[x] == 1}
        unique = [(pos_a[x], j) for j, x in enumerate(b[blo:bhi], blo) if count_b[x] == 1 and x in pos_a]
        for i, j in _increasing(unique):
            pairs.append((i, j))
            stack.append((alo, i, blo, j))
            alo, blo = i + 1, j + 1
        if unique:
            stack.append((alo, ahi, blo, bhi))
    pairs.sort()
    return pairs


def _increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Longest run of ``pairs`` (sorted by j) whose i increase too (patience sorting, O(k log k))."""
    tails: list[int] = []      # smallest last i of an increasing run of each length
    tail_at: list[int] = []    # index in pairs of that last element
    back: list[int] = []
    for k, (i, _) in enumerate(pairs):
        n = bisect.bisect_left(tails, i)
        if n == len(tails):
            tails.append(i)
            tail_at.append(k)
        else:
            tails[n], tail_at[n] = i, k
        back.append(tail_at[n - 1] if n else -1)
    out = []
    k = tail_at[-1] if tail_at else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


# Similarity cost bounds: texts are compared by characters up to _CHAR_LIMIT characters (both
# together), by words up to _WORD_LIMIT words, beyond that by their multisets of words (linear).
_CHAR_LIMIT = 10_000
_WORD_LIMIT = 40_000
_TOKEN = re.compile(r"\w+|[^\w\s]")


def _ratio(a, b, cutoff: float = 0.0) -> float:
    """Similarity in [0, 1], 0 below ``cutoff``: 2 * LCS / (len(a) + len(b)) (rapidfuzz's Indel,
    bit-parallel; difflib's ratio is quadratic in the text length), over characters, or over
    words for long texts; for huge ones the same formula over word multisets (an upper bound)."""
    if a == b:
        return 1.0
    a, b = str(a), str(b)
    if len(a) + len(b) > _CHAR_LIMIT:
        ids: dict[str, int] = {}   # words as ints: equal words equal, whatever str hashing does
        a = [ids.setdefault(w, len(ids)) for w in _TOKEN.findall(a)]
        b = [ids.setdefault(w, len(ids)) for w in _TOKEN.findall(b)]
        if len(a) + len(b) > _WORD_LIMIT:
            r = 2 * sum((Counter(a) & Counter(b)).values()) / (len(a) + len(b))
            return r if r >= cutoff else 0.0
    return Indel.normalized_similarity(a, b, score_cutoff=cutoff)


@dataclass
class Alignment:
    sections: dict[int, int]
    stories: dict[str, str]                 # output story name -> reference story name
    paragraphs: dict[str, dict[int, int]]   # per output story: output index -> reference index
    tables: dict[int, int]
    comments: dict[int, int]
    notes: dict[str, dict[int, int]]


def identity_alignment(snap: Snapshot) -> Alignment:
    return Alignment(
        sections={i: i for i in range(len(snap.sections))},
        stories={s: s for s in snap.stories},
        paragraphs={s: {i: i for i in range(len(ps))} for s, ps in snap.stories.items()},
        tables={i: i for i in range(len(snap.tables))},
        comments={i: i for i in range(len(snap.comments))},
        notes={k: {i: i for i in range(len(v))} for k, v in snap.notes.items()},
    )


def align_snapshots(ref: Snapshot, out: Snapshot) -> Alignment:
    """Align ``out`` to ``ref`` by content: sections, stories, paragraphs, tables, notes, comments."""
    sec_map = align([s["first_text"] for s in ref.sections], [s["first_text"] for s in out.sections])
    # sections without a content match (e.g. empty first paragraphs) pair by position when free
    free_ref = [i for i in range(len(ref.sections)) if i not in sec_map.values()]
    for j in range(len(out.sections)):
        if j not in sec_map and j in free_ref:
            sec_map[j] = j
            free_ref.remove(j)
    stories = {}
    for s in out.stories:
        if s.startswith(("header/", "footer/")):
            kind, sec, typ = s.split("/")
            j = int(sec[1:])
            stories[s] = f"{kind}/S{sec_map[j]}/{typ}" if j in sec_map else f"{kind}/XS{j}/{typ}"
    # notes: align by text of each note
    notes_map: dict[str, dict[int, int]] = {}
    for kind in set(ref.notes) | set(out.notes):
        rl = ref.notes.get(kind, [])
        ol = out.notes.get(kind, [])
        rt = ["\n".join(p.text for p in ref.stories[n["story"]]) for n in rl]
        ot = ["\n".join(p.text for p in out.stories[n["story"]]) for n in ol]
        m = align(rt, ot)
        notes_map[kind] = m
        for j, n in enumerate(ol):
            stories[n["story"]] = rl[m[j]]["story"] if j in m else n["story"].replace("/N", "/XN")
    cmap = align([(c["anchor"], c["text"]) for c in ref.comments], [(c["anchor"], c["text"]) for c in out.comments],
                 similarity=lambda a, b: _ratio(a[0], b[0]) * 0.5 + _ratio(a[1], b[1]) * 0.5)
    for j, c in enumerate(out.comments):
        stories[c["story"]] = ref.comments[cmap[j]]["story"] if j in cmap else c["story"].replace("/C", "/XC")
    for s in out.stories:
        stories.setdefault(s, s)
    paragraphs = {}
    for s, paras in out.stories.items():
        rs = stories[s]
        ref_paras = ref.stories.get(rs, [])
        paragraphs[s] = align([p.text for p in ref_paras], [p.text for p in paras])
    tmap = align([_table_sig(t) for t in ref.tables], [_table_sig(t) for t in out.tables])
    return Alignment(sec_map, stories, paragraphs, tmap, cmap, notes_map)


def _table_sig(t: dict) -> str:
    return "|".join("\t".join(row) for row in t["text"])
