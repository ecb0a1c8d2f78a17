"""The ONNX Runtime export of the bundled MiniLM: same scores as sentence-transformers on torch,
built once into its cache directory, and a torch fallback for models it does not reproduce."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from pipeline.config import RelevanceConfig
from pipeline.relevance import embedding_onnx
from pipeline.relevance import scoring as relevance
from pipeline.relevance.embedding_onnx import (
    OnnxSentenceEncoder,
    build_export,
    export_key,
    supported,
)
from pipeline.relevance.scoring import Embedder, EmbedderError, default_model_path, get_embedder

TEXTS = [
    "The MMR vaccine causes autism in children.",
    "A Danish cohort study followed more than 650,000 children for a decade and found that the "
    "measles, mumps and rubella vaccine does not raise the risk of autism.",
    "Knead the dough on a floured surface for ten minutes, then bake the loaf.",
    "Ünïcode façade — 5G towers cause COVID? 🤔",
    "x",
    # Longer than the model's 256-token input: both paths must truncate at the same place.
    " ".join(f"word{i}" for i in range(400)),
]


@pytest.fixture(scope="module")
def torch_embedder() -> Embedder:
    return get_embedder(RelevanceConfig(backend="torch"))


@pytest.fixture(scope="module")
def onnx_embedder() -> Embedder:
    return get_embedder(RelevanceConfig(backend="onnx"))


def test_onnx_scores_equal_the_torch_model_within_float_rounding(
    torch_embedder: Embedder, onnx_embedder: Embedder
) -> None:
    assert (torch_embedder.backend, onnx_embedder.backend) == ("torch", "onnx")
    ours = onnx_embedder.encode(TEXTS)
    theirs = torch_embedder.encode(TEXTS)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    # Measured 5.4e-7 on fixture passages; the thresholds are set to two decimals.
    assert float(np.abs(ours @ ours.T - theirs @ theirs.T).max()) < 1e-4


def test_onnx_rows_come_back_in_input_order_whatever_the_batching(
    onnx_embedder: Embedder,
) -> None:
    whole = onnx_embedder.encode(TEXTS)
    one_by_one = np.vstack([onnx_embedder.encode([t]) for t in TEXTS])
    assert float(np.abs(whole - one_by_one).max()) < 1e-4


def test_onnx_token_count_is_the_torch_tokenizers(
    torch_embedder: Embedder, onnx_embedder: Embedder
) -> None:
    for text in [*TEXTS, " ".join(["token"] * 700)]:
        assert onnx_embedder.count_tokens(text) == torch_embedder.count_tokens(text)


def test_a_page_gives_the_onnx_model_back_after_every_forward_pass(
    torch_embedder: Embedder, onnx_embedder: Embedder
) -> None:
    # One-thread sessions run side by side: a page holding the model for all its passages
    # kept a more urgent page off a core, and ran on after the round no longer needed it.
    # torch runs one page at a time on every core, so a turn there is a larger batch.
    text = "\n\n".join(TEXTS[:4] * 2)
    cfg = RelevanceConfig(passage_words=20)
    for embedder, per_turn in (
        (onnx_embedder, embedding_onnx.CPU_BATCH),
        (torch_embedder, relevance.ENCODE_CHUNK),
    ):
        turns: list[int] = []

        @contextmanager
        def turn(turns: list[int] = turns) -> Iterator[bool]:
            turns.append(len(turns))
            yield True

        page = relevance.encode_page(embedder, "u", text, cfg, turn=turn)
        assert page is not None and len(page.passages) > relevance.ENCODE_CHUNK // 2
        assert embedder.turn_size == per_turn
        assert len(turns) == -(-len(page.passages) // per_turn)


def test_auto_backend_uses_the_onnx_export_for_the_bundled_model() -> None:
    assert get_embedder(RelevanceConfig()).backend == "onnx"


def test_onnx_encoder_is_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []

    class Spy(OnnxSentenceEncoder):
        def __init__(self, model_dir: Path, onnx_file: Path, *, threads: int = 0) -> None:
            calls.append(onnx_file)
            super().__init__(model_dir, onnx_file, threads=threads)

    monkeypatch.setattr(relevance, "_CACHE", {})
    monkeypatch.setattr(relevance, "OnnxSentenceEncoder", Spy)
    got: list[Embedder] = []
    cfg = RelevanceConfig()
    threads = [threading.Thread(target=lambda: got.append(get_embedder(cfg))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(e is got[0] for e in got)


def test_the_export_is_built_once_and_then_reused(tmp_path: Path) -> None:
    model_dir = Path(default_model_path())
    first = build_export(model_dir, tmp_path)
    stamp = first.stat().st_mtime_ns
    assert build_export(model_dir, tmp_path) == first
    assert first.stat().st_mtime_ns == stamp
    assert [p.name for p in first.parent.iterdir()] == ["model.onnx"], "no temporary file left"


def _model_copy(tmp_path: Path, *, pooling: str) -> Path:
    """A copy of the bundled model's configuration (weights linked) with another pooling."""
    source = Path(default_model_path())
    target = tmp_path / "model"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.safetensors"))
    for weights in source.glob("*.safetensors"):
        (target / weights.name).symlink_to(weights)
    config = json.loads((target / "1_Pooling" / "config.json").read_text())
    config["pooling_mode_mean_tokens"] = pooling == "mean"
    config["pooling_mode_cls_token"] = pooling == "cls"
    (target / "1_Pooling" / "config.json").write_text(json.dumps(config))
    return target


def test_a_model_the_export_does_not_reproduce_falls_back_to_torch(tmp_path: Path) -> None:
    cls_model = _model_copy(tmp_path, pooling="cls")
    assert not supported(cls_model)
    cfg = RelevanceConfig(model=str(cls_model), onnx_dir=str(tmp_path / "cache"))
    assert get_embedder(cfg).backend == "torch"
    assert not (tmp_path / "cache").exists(), "nothing exported for an unsupported model"
    with pytest.raises(EmbedderError, match="not a mean-pooled BERT"):
        get_embedder(cfg.model_copy(update={"backend": "onnx"}))


def test_a_failed_export_falls_back_to_torch_under_auto(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> Path:
        raise embedding_onnx.OnnxExportError("exporter missing")

    monkeypatch.setattr(relevance, "_CACHE", {})
    monkeypatch.setattr(embedding_onnx, "build_export", broken)
    assert get_embedder(RelevanceConfig()).backend == "torch"
    with pytest.raises(EmbedderError, match="exporter missing"):
        get_embedder(RelevanceConfig(backend="onnx"))


def test_export_key_changes_when_the_weights_change(tmp_path: Path) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"a")
    before = export_key(tmp_path, quantized=False)
    assert export_key(tmp_path, quantized=True) != before
    (tmp_path / "model.safetensors").write_bytes(b"ab")
    assert export_key(tmp_path, quantized=False) != before


def test_export_key_survives_an_image_layer_dropping_sub_second_times(tmp_path: Path) -> None:
    # `docker build` exports the model in one layer; the running container sees the weights
    # through a tar layer that keeps whole seconds only (found by building the image).
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"a")
    os.utime(weights, ns=(1_796_189_596_123_456_789, 1_796_189_596_123_456_789))
    built = export_key(tmp_path, quantized=False)
    os.utime(weights, ns=(1_796_189_596_000_000_000, 1_796_189_596_000_000_000))
    assert export_key(tmp_path, quantized=False) == built
    os.utime(weights, ns=(1_796_189_597_000_000_000, 1_796_189_597_000_000_000))
    assert export_key(tmp_path, quantized=False) != built


def test_the_int8_export_builds_its_fp32_source_first_without_deadlocking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The int8 build holds the export lock while it asks for the fp32 export it quantises; a
    # plain lock deadlocked there. The exporter and quantiser are stood in for (the real ones
    # take most of a minute): what is pinned is the order and the locking.
    (tmp_path / "model.safetensors").write_bytes(b"weights")
    built: list[str] = []

    def export_fp32(model_dir: Path, target: Path) -> None:
        built.append("fp32")
        target.write_bytes(b"fp32")

    def quantize(source: Path, target: Path) -> None:
        built.append("int8")
        target.write_bytes(source.read_bytes() + b"->int8")

    monkeypatch.setattr(embedding_onnx, "_export_fp32", export_fp32)
    monkeypatch.setattr(embedding_onnx, "_quantize", quantize)
    got: list[Path] = []
    worker = threading.Thread(
        target=lambda: got.append(build_export(tmp_path, tmp_path / "cache", quantized=True)),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "build_export(quantized=True) deadlocked"
    assert built == ["fp32", "int8"]
    assert got[0].name == "model-int8.onnx"
    assert got[0].read_bytes() == b"fp32->int8"


def test_a_failed_export_leaves_no_file_behind_and_says_what_failed(tmp_path: Path) -> None:
    from pipeline.relevance.embedding_onnx import OnnxExportError, published

    target = tmp_path / "model.onnx"
    with (
        pytest.raises(OnnxExportError, match="test export failed: half written"),
        published(target, "test export") as part,
    ):
        part.write_bytes(b"half")
        raise ValueError("half written")
    assert list(tmp_path.iterdir()) == []

    with published(target, "test export") as part:
        part.write_bytes(b"whole")
    assert target.read_bytes() == b"whole"
    assert list(tmp_path.iterdir()) == [target]


def test_a_long_list_encoded_on_several_threads_gives_the_same_vectors_to_the_bit(
    onnx_embedder: Embedder,
) -> None:
    texts = [f"{text} ({n})" for n in range(6) for text in TEXTS]
    model = onnx_embedder._model
    assert isinstance(model, OnnxSentenceEncoder)
    alone = model.encode(texts, batch_size=2, workers=1)
    side_by_side = model.encode(texts, batch_size=2, workers=3)
    assert np.array_equal(alone, side_by_side)
