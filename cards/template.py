"""Template's card: records per split and label, the words per text, a figure of the labels per split, and
the Croissant file's Responsible-AI facts (SLOT: your card's statistics and figures, drawn with
``benchwright.card.save_figure``; its text is ``cards/template.md.j2``)."""
from __future__ import annotations

from pathlib import Path

from benchwright.card import markdown_table, pyplot, save_figure
from benchwright.loaders.template import load
from benchwright.schemas import template as schema


def card_statistics(root: Path) -> dict:
    counts = {split: _label_counts(root, split) for split in schema.SPLITS}
    words = load(root, columns=["num_words"]).column("num_words").to_pylist()
    return {
        "label_table": markdown_table(["split", *schema.LABELS, "records"],
                                      [[s, *c.values(), sum(c.values())] for s, c in counts.items()]),
        "words": {"min": min(words, default=0), "max": max(words, default=0),
                  "mean": round(sum(words) / len(words), 1) if words else 0},
        "figures": {"labels": labels_figure(root, counts)},
    }


def _label_counts(root: Path, split: str) -> dict[str, int]:
    labels = load(root, split=split, columns=["label"]).column("label").to_pylist()
    return {name: labels.count(i) for i, name in enumerate(schema.LABELS)}


def labels_figure(root: Path, counts: dict) -> str:
    """Records per label, a bar per split."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 2.6))
    width = 0.8 / len(counts)
    for i, (split, by_label) in enumerate(counts.items()):
        ax.bar([x + i * width for x in range(len(schema.LABELS))], list(by_label.values()), width, label=split)
    ax.set_xticks([x + width * (len(counts) - 1) / 2 for x in range(len(schema.LABELS))], schema.LABELS)
    ax.set_ylabel("records")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return save_figure(fig, root, "labels")


def responsible_ai(dataset, root: Path, source: str) -> dict:
    """The Croissant file's Responsible-AI facts (``Dataset.responsible_ai``): what the dataset knows, and the
    build's label counts. SLOT: state your release's facts; the core adds what every build knows."""
    from benchwright.croissant import counts_text, value_counts

    labels = value_counts(dataset, root, "records", "label")
    return {
        "dataCollection": ("JSON Lines records (an id, a text, a label, a split) read from a folder of files; the "
                           "embedded default is written by benchwright's generator from fixed word lists."),
        "dataCollectionType": ["Synthetic data (generated from word lists, no person's text)"],
        "dataAnnotationProtocol": ["The labels are the source's own; the build checks each is one of "
                                   f"{', '.join(schema.LABELS)} and adds none."],
        "dataBiases": [f"Records per label in this build: {counts_text(labels)}.",
                       "The texts use a few dozen English words; nothing else of language is represented."],
        "dataLimitations": ["The label follows from a few words in each text: a model that scores well here has "
                            "learnt word lists, not sentiment."],
        "dataUseCases": ["Trying out benchwright's pipeline, checks and tests on a small dataset; not a benchmark "
                         "of text classification."],
        "personalSensitiveInformation": ["None: the texts are generated from word lists and name no person."],
    }
