"""Issue 26 item 2: one typed, frozen settings object per dataset (its ``Config``, declared by its contract and named
by the registry), refused when a name is unknown or a value mistyped, on the command line and in code, and recorded
in every build's manifest. Cheap: no build of its own (the manifest test reads the contract tests' tiny builds)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from benchwright import registry
from benchwright.cli import dataset_settings, main as cli_main
from benchwright.dataset import Config, Dataset, option_name, setting
from benchwright.errors import BenchwrightError
from benchwright.layout import MANIFEST
from tests.quality_builds import tiny_build


@pytest.mark.parametrize("name", registry.names())
def test_each_dataset_declares_one_frozen_config_with_help_for_every_field(name):
    dataset = registry.get(name)
    assert dataset.Config is registry.settings(name)  # the registry's (no Beam) is the contract's
    assert issubclass(dataset.Config, Config) and dataset.Config.dataset == name
    assert isinstance(dataset.settings, dataset.Config) and dataset.settings == dataset.Config()
    fields = dataclasses.fields(dataset.Config)
    assert fields and all(len(f.metadata.get("help", "").split()) > 3 for f in fields)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(dataset.settings, fields[0].name, fields[0].default)
    # the settings of a dataset are none of the old ways: no Beam options class, no mutable class attribute
    assert not [f.name for f in fields if hasattr(type(dataset), f.name)]


def test_configured_is_a_new_dataset_and_refuses_unknown_or_mistyped_settings_naming_them():
    wordeval = registry.get("wordeval")
    subset = wordeval.configured(unit_ids=["font_bold"], seeds=[0], libreoffice_gate="none")
    assert subset.settings.unit_ids == ("font_bold",) and subset.settings.seeds == (0,)
    assert wordeval.settings.unit_ids is None and wordeval.settings.seeds == (0, 1)  # the registered one unchanged
    assert subset.as_built({"options": {"settings": subset.settings.recorded()}}).settings == subset.settings
    refusals = {
        "seedz": ({"seedz": (1,)}, "wordeval has no setting seedz (seedz: did you mean seeds?)"),
        "text for an integer": ({"lite_seed": "1"}, "wordeval's setting lite_seed: '1' is not an integer"),
        "a bool for an integer": ({"lite_seed": True}, "lite_seed: True is not an integer"),
        "floats for integers": ({"seeds": [0.5]}, "seeds: [0.5] is not a list of integers"),
        "a choice": ({"libreoffice_gate": "some"}, "libreoffice_gate: 'some' is not one of all, none"),
        "no seed": ({"seeds": ()}, "seeds: no seed"),
    }
    for why, (values, said) in refusals.items():
        with pytest.raises(BenchwrightError, match=None) as err:
            wordeval.configured(**values)
        assert said in str(err.value), why
    with pytest.raises(BenchwrightError, match="validation_share: 1.5 is not between 0 and 1"):
        registry.get("wildbox").configured(validation_share=1.5)
    with pytest.raises(BenchwrightError, match="settings are a benchwright.wordeval.config.Config"):
        type(wordeval)(registry.get("wildbox").settings)


def test_a_config_field_is_an_option_of_its_type():
    @dataclasses.dataclass(frozen=True)
    class Made(Config):
        dataset = "made"
        ratio: float = setting(0.5, "a share of something")
        names: tuple[str, ...] | None = setting(None, "a few names")
        strict: bool = setting(False, "refuse more")

    options = dict(Made.options())
    assert list(options) == ["--ratio", "--names", "--strict"] == [option_name(f) for f in ("ratio", "names", "strict")]
    assert options["--names"]["type"]("a, b,") == ("a", "b") and options["--ratio"]["type"] is float
    assert Made(ratio=1).ratio == 1.0 and isinstance(Made(ratio=1).ratio, float)  # an int is a number
    assert Made.make(names=["x"]).recorded() == {"ratio": 0.5, "names": ["x"], "strict": False}  # JSON, as recorded
    # a name no text can be (a catalogue's "\ud800" escape) is what it asks for; the manifest records it as text
    assert Made(names=("a\ud800",)).names == ("a\ud800",)
    assert json.dumps(Made(names=("a\ud800",)).recorded(), ensure_ascii=False).encode() == (
        '{"ratio": 0.5, "names": ["a\ufffd"], "strict": false}'.encode())
    with pytest.raises(BenchwrightError, match="made's setting strict: 1 is not true or false"):
        Made(strict=1)
    assert Dataset().settings == Config()  # a dataset that declares none has none


def test_settings_on_the_command_line_go_to_their_datasets_the_rest_to_beam():
    class Args:
        dataset = "wordeval"

    given, left = dataset_settings(Args, ["wordeval"], ["--seeds", "0,2", "--lite-seed=3", "--job_name", "x"])
    assert given == {"wordeval": {"seeds": (0, 2), "lite_seed": 3}} and left == ["--job_name", "x"]
    Args.dataset = "all"
    given, left = dataset_settings(Args, list(registry.names()), ["--lite-seed", "4", "--render", "dejavu"])
    assert given["wordeval"] == given["workspace_bench"] == {"lite_seed": 4}  # each dataset takes those it has
    assert given["vlm_unlearning"] == {"render": "dejavu"} and given["wildbox"] == {} and left == []


def test_a_mistyped_or_foreign_setting_is_refused_before_anything_is_built(tmp_path, capsys):
    out = tmp_path / "out"
    cases = {("vlm_unlearning", "--routing-scorse", "x"): "--routing-scorse: did you mean --routing-scores?",
             ("wildbox", "--format", "vlguard"): "--format is a setting of vlm_unlearning, not of wildbox",
             ("wordeval", "--seeds", "0,x"): "argument --seeds: invalid comma-separated list of integers value",
             ("wildbox", "--validation-share", "0"): "validation_share: 0.0 is not between 0 and 1"}
    for (name, *argv), said in cases.items():
        try:
            code = cli_main(["build", name, "--out", str(out), *argv])
        except SystemExit as stop:
            code = stop.code
        assert code == 2 and said in capsys.readouterr().err, (name, argv)
    assert not out.exists()


@pytest.mark.parametrize("name", registry.names())
def test_the_manifest_records_the_settings_a_build_used(name, tmp_path_factory):
    _, built = tiny_build(name, tmp_path_factory)  # the contract tests' build: made once per run
    manifest = json.loads((built / MANIFEST).read_text())
    assert manifest["options"]["settings"] == registry.get(name).settings.recorded()
    assert set(manifest["options"]["settings"]) == {f.name for f in dataclasses.fields(registry.settings(name))}
