"""The sentence-embedding model run by ONNX Runtime: the same MiniLM weights, exported locally.

PyTorch spends most of a small model's CPU time in per-operator overhead; ONNX Runtime fuses
the transformer's attention and layer-norm blocks and runs the same weights several times
faster on two cores. The export is built on this machine from the packaged weights (never
downloaded), once, into a cache directory keyed by the weights' identity and the exporter
version (`python -m pipeline.relevance.embedding_onnx` at `make setup`, else on first use), and read
from there by every later process. Loading it needs neither torch nor transformers, which is
most of a cold start.

The pipeline mirrors sentence-transformers' for this model (modules.json: Transformer, mean
Pooling, Normalize): WordPiece tokens truncated to `max_seq_length`, padded to the longest text
of a batch, attention-masked mean of the last hidden state, L2 normalisation.

Measured and not taken (fixture passages, 98 tokens on average, one thread, CPU time per
passage, median of 4 interleaved runs, load average 8-14): ONNX Runtime's transformer optimiser
(`onnxruntime.transformers.optimizer.optimize_model`, model_type "bert", fp32) fuses little of
this export (SkipLayerNorm and BiasGelu, no Attention: the SDPA attention traces into a pattern
it does not match); on an export traced with eager attention it fuses all six Attention blocks
and EmbedLayerNormalization, yet took 37.3 ms a passage against 36.7 for this plain export (max
score difference 3.3e-7): ORT_ENABLE_ALL already fuses at load, and what is left is the matrix
products (about 2.1 GFLOP a passage, so some 57 GFLOP/s: most of an AVX2 core's FMA peak; this
CPU has no AVX-512 or VNNI). int8 dynamic quantisation took 24-32 ms
but moved scores by up to 0.104 (0.069 on a passage's best claim) and HealthVer AUC by up to
0.015 (neutral negatives 0.667 to 0.652; bench/calibrate_relevance.py --onnx-int8), outside the
0.01 allowed, and its thresholds would move (passage 0.34 to 0.35, page 0.47 to 0.49).
Batches are sorted by length: with pairs, padding is 6.4% of the tokens by character length,
5.9% by exact token count.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

FloatMatrix = npt.NDArray[np.float32]

# Bumped when the export recipe changes, so that old exports are not reused.
EXPORT_VERSION = 1
OPSET = 17
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Texts per forward pass on CPU. Batching buys little there (one 120-word passage is already
# matrices of 160 x 384) and padding to a batch's longest text costs: on two cores, one thread,
# fixture passages took 47.0 / 44.2 / 45.7 / 54.9 ms each in batches of 1 / 2 / 4 / 8 (3 runs).
CPU_BATCH = 2
# Re-entrant: the int8 build takes the lock, then builds the fp32 export it quantises.
_EXPORT_LOCK = threading.RLock()


class OnnxExportError(RuntimeError):
    """The model could not be exported (the exporter's packages are missing, or it failed)."""


def _read_json(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise OnnxExportError(f"{path} is not a JSON object")
    return data


def supported(model_dir: Path) -> bool:
    """Whether `model_dir` is a sentence-transformers model this module reproduces exactly:
    a BERT-style Transformer, mean pooling, then Normalize."""
    try:
        modules = json.loads((model_dir / "modules.json").read_text(encoding="utf-8"))
        types = [m["type"].rsplit(".", 1)[-1] for m in modules]
        pooling_dir = next(m["path"] for m in modules if m["type"].endswith("Pooling"))
        pooling = _read_json(model_dir / pooling_dir / "config.json")
    except (OSError, ValueError, KeyError, StopIteration):
        return False
    other_modes = [k for k, v in pooling.items() if k.startswith("pooling_mode_") and v]
    return (
        types[:2] == ["Transformer", "Pooling"]
        and all(t == "Normalize" for t in types[2:])
        and other_modes == ["pooling_mode_mean_tokens"]
        and (model_dir / "tokenizer.json").is_file()
    )


def export_key(model_dir: Path, *, quantized: bool) -> str:
    """Identity of an export: the weights file (path, size, modification time), the exporter's
    torch version and this recipe. Cheap to compute, so every start can check it. The time is
    in whole seconds: an image layer's tar keeps no more, so a key with nanoseconds, built at
    `docker build`, was never found again when the container ran."""
    weights = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))
    parts = [str(model_dir.resolve()), str(EXPORT_VERSION), str(OPSET), str(quantized)]
    for path in weights:
        stat = path.stat()
        parts.append(f"{path.name}:{stat.st_size}:{int(stat.st_mtime)}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def export_path(model_dir: Path, cache_dir: Path, *, quantized: bool = False) -> Path:
    name = "model-int8.onnx" if quantized else "model.onnx"
    return cache_dir / f"{model_dir.name}-{export_key(model_dir, quantized=quantized)}" / name


def build_export(model_dir: Path, cache_dir: Path, *, quantized: bool = False) -> Path:
    """Export `model_dir`'s transformer to ONNX under `cache_dir` (int8 dynamic quantisation
    when `quantized`) unless already there; returns the file. Written to a temporary name and
    renamed, so a concurrent reader never sees half a file."""
    target = export_path(model_dir, cache_dir, quantized=quantized)
    if target.is_file():
        return target
    with _EXPORT_LOCK:
        if target.is_file():
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        if quantized:
            _quantize(build_export(model_dir, cache_dir), target)
        else:
            _export_fp32(model_dir, target)
    return target


def _export_fp32(model_dir: Path, target: Path) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:  # pragma: no cover - both are hard dependencies
        raise OnnxExportError(f"exporting needs torch and transformers: {exc}") from exc

    model = AutoModel.from_pretrained(str(model_dir))
    model.eval()

    class _LastHidden(torch.nn.Module):
        # transformers 5 forwards take keyword arguments; the exporter passes positionals.
        def __init__(self, inner: torch.nn.Module) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, ids: Any, mask: Any, types: Any) -> Any:
            out = self.inner(input_ids=ids, attention_mask=mask, token_type_ids=types)
            return out.last_hidden_state

    sample = torch.ones((2, 8), dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in (*_INPUTS, "last_hidden_state")}
    with published(target, f"ONNX export of {model_dir}") as part, torch.no_grad():
        torch.onnx.export(
            _LastHidden(model),
            (sample, torch.ones_like(sample), torch.zeros_like(sample)),
            str(part),
            input_names=list(_INPUTS),
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,
        )


def _quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with published(target, f"int8 quantisation of {source}") as part:
        quantize_dynamic(str(source), str(part), weight_type=QuantType.QInt8)


@contextmanager
def published(target: Path, what: str) -> Iterator[Path]:
    """A scratch path beside `target` for an export to write; once written it replaces
    `target` in one step (so a reader never sees half a model), readable by every user of the
    shared cache. A failure leaves nothing behind and is raised as `OnnxExportError`."""
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        part = Path(work) / target.name
        try:
            yield part
        except Exception as exc:
            raise OnnxExportError(f"{what} failed: {exc}") from exc
        part.chmod(0o644)
        os.replace(part, target)


def cpu_session(onnx_file: Path, threads: int = 0) -> Any:
    """An ONNX Runtime CPU session with every graph optimisation, `threads` per run (0: one
    per core), and pool threads that sleep between runs."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads > 0:
        options.intra_op_num_threads = threads
    # By default idle pool threads spin for the next run; between the pipeline's small
    # encode calls that spinning takes the cores from the threads doing everything else.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        str(onnx_file), sess_options=options, providers=["CPUExecutionProvider"]
    )


class OnnxSentenceEncoder:
    """Embeddings from an ONNX export, equal to sentence-transformers' within float rounding."""

    def __init__(self, model_dir: Path, onnx_file: Path, *, threads: int = 0) -> None:
        from tokenizers import Tokenizer

        max_len = int(_read_json(model_dir / "sentence_bert_config.json")["max_seq_length"])
        config = _read_json(model_dir / "config.json")
        self._dim = int(config["hidden_size"])
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # The file pads every text to 128 tokens; sentence-transformers truncates at its own
        # max_seq_length and pads a batch to its longest text, and so does this.
        tokenizer.enable_truncation(max_length=max_len)
        pad_id = int(config.get("pad_token_id", 0))
        tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id) or "[PAD]")
        self._tokenizer = tokenizer
        # A counting tokenizer without truncation or padding, for `count_tokens`.
        self._counter = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self._counter.no_truncation()
        self._counter.no_padding()
        self._session = cpu_session(onnx_file, threads)
        self._wanted = {i.name for i in self._session.get_inputs()}

    @property
    def dim(self) -> int:
        return self._dim

    def encode(self, texts: Sequence[str], batch_size: int = 32, workers: int = 1) -> FloatMatrix:
        """L2-normalised embeddings, one row per text, in input order; `workers` batches run
        side by side (ONNX Runtime's Run is thread-safe and releases the GIL). The batches are
        the same whatever `workers` is, so are the vectors, to the bit."""
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        # Similar lengths batched together waste less on padding (as sentence-transformers).
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        size = max(1, batch_size)
        batches = [order[start : start + size] for start in range(0, len(order), size)]
        if workers > 1 and len(batches) > 1:
            with ThreadPoolExecutor(min(workers, len(batches))) as pool:
                found = pool.map(lambda rows: self._encode_batch([texts[i] for i in rows]), batches)
                for rows, vectors in zip(batches, found, strict=True):
                    out[rows] = vectors
            return out
        for rows in batches:
            out[rows] = self._encode_batch([texts[i] for i in rows])
        return out

    def _encode_batch(self, texts: list[str]) -> FloatMatrix:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._wanted})[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        norms[norms == 0.0] = 1.0
        return np.asarray(pooled / norms, dtype=np.float32)

    def count_tokens(self, text: str) -> int:
        return len(self._counter.encode(text, add_special_tokens=False).ids)


def export_dir(configured: str | None) -> Path:
    """Where exports live: the configured folder, else beside the installed packages."""
    return Path(configured) if configured else Path(sys.prefix) / "share" / "factnote" / "models"


def main(argv: Sequence[str]) -> int:
    """Build the export(s) for the bundled model: `python -m pipeline.relevance.embedding_onnx
    [DIR]`."""
    from pipeline.config import RelevanceConfig
    from pipeline.relevance.scoring import default_model_path

    cfg = RelevanceConfig()
    model_dir = Path(cfg.model or default_model_path())
    cache = Path(argv[0]) if argv else export_dir(cfg.onnx_dir)
    if not supported(model_dir):
        print(f"{model_dir}: not a mean-pooled BERT model; the torch path will be used")
        return 0
    print(build_export(model_dir, cache, quantized=cfg.onnx_int8))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
