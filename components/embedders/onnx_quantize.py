"""``quantize_int8``: the int8 form of an exported sentence-transformers model, for ``embedder.backend=onnx_int8``.

ONNX Runtime's dynamic quantization runs each linear layer (a MatMul with a weight matrix) in int8: the weights are
quantized once, per output column, and the layer's input is quantized per batch as it is computed, with one scale for
the whole batch. That one scale is what costs accuracy in this model: a few hidden channels (the same ones for every
text; channel 99 of MiniLM's attention outputs reaches 30 where the rest stay under 5) set the range, and every other
value gets coarse steps. So before quantizing, each linear layer is split in two: its input with those channels zeroed
goes through the int8 layer, and those channels alone (4 of 384 or 1,536) through a tiny float32 MatMul, summed after.
Which channels: the largest on a few fixed calibration sentences, run through the float32 model here.

Measured on all-MiniLM-L6-v2 with the dev sets' passages: cosine to torch's vectors 0.9988 on average (0.9946 without
the split), the same top 5 passages for 97% of places (93% without), at 2.9x torch's encoding rate on one thread (4.0x
without); with the split, every baseline and recipe row of ``agrag eval`` stayed within 0.5 points of torch's Recall@5.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agrag.components.embedders.tokenized_batch import INPUTS

OUTLIER_CHANNELS = 4  # per linear layer input; 16 measured no better than 4
# Calibration: which channels are outliers is a property of the model, not the text, so any natural sentences will do.
CALIBRATION = (
    "Who wrote the Orion Planner, and which team maintains it today?",
    "The Journal of Mathematical Physics is a peer-reviewed journal published monthly by the American Institute of "
    "Physics, devoted to papers in mathematical physics.",
    "Maria Chen leads the planning team in Lyon; Tom Okafor maintains the perception stack and reviews its releases.",
    "In 1963 the company moved its headquarters from Rotterdam to Osaka after a decade of rapid growth in shipping.",
    "What caused the replanning storm in the warehouse last night?",
    "Photosynthesis converts light energy into chemical energy that plants store as glucose and starch.",
    "She was born in Porto, studied law in Lisbon, and later served two terms as mayor of the city.",
    "The album reached number three on the Billboard 200 and was certified platinum within a year of its release.",
)


def quantize_int8(source: Path, tokenizer_file: Path, target: Path) -> None:
    """Write the int8 form of the float32 export ``source`` to ``target`` (see the module docstring).

    Usage:
        ```python
        quantize_int8(Path("model.onnx"), Path(model_folder) / "tokenizer.json", Path("model-int8.onnx"))
        ```
    """
    import onnx  # noqa: PLC0415 - only for the one-time quantization
    from onnxruntime.quantization import QuantType, quantize_dynamic  # noqa: PLC0415

    model = onnx.load(str(source))
    weights = {init.name: init for init in model.graph.initializer}
    linear = [node for node in model.graph.node if node.op_type == "MatMul" and node.input[1] in weights]
    peaks = _channel_peaks(model, sorted({node.input[0] for node in linear}), tokenizer_file)
    float32_parts = _split_outliers(model, weights, peaks)
    quantize_dynamic(
        model,
        target,
        weight_type=QuantType.QInt8,
        per_channel=True,  # one scale per matrix gives cosine 0.94 instead of 0.995: the columns differ a lot
        op_types_to_quantize=["MatMul"],  # the embedding tables stay float32
        nodes_to_exclude=float32_parts,
    )


def _channel_peaks(model: Any, names: list[str], tokenizer_file: Path) -> dict[str, np.ndarray]:
    """The largest absolute value of each channel of the tensors ``names``, over the calibration sentences' tokens."""
    import onnx  # noqa: PLC0415
    import onnxruntime  # noqa: PLC0415
    from tokenizers import Tokenizer  # noqa: PLC0415

    probe = onnx.ModelProto()
    probe.CopyFrom(model)
    for name in names:
        probe.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = onnxruntime.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    encodings = Tokenizer.from_file(str(tokenizer_file)).encode_batch(list(CALIBRATION))
    width = max(len(encoding.ids) for encoding in encodings)
    feeds = {name: np.zeros((len(encodings), width), dtype=np.int64) for name in INPUTS}
    for row, encoding in enumerate(encodings):
        feeds["input_ids"][row, : len(encoding.ids)] = encoding.ids
        feeds["attention_mask"][row, : len(encoding.ids)] = 1
    tokens = feeds["attention_mask"].astype(bool)
    values = session.run(names, feeds)
    return {name: np.abs(value[tokens]).max(axis=0) for name, value in zip(names, values, strict=True)}


def _split_outliers(model: Any, weights: dict[str, Any], peaks: dict[str, np.ndarray]) -> list[str]:
    """Split every linear layer of ``model`` (in place) as the module docstring says; return the float32 parts."""
    from onnx import helper, numpy_helper  # noqa: PLC0415

    nodes: list[Any] = []
    added: list[Any] = []
    outliers: dict[str, np.ndarray] = {}
    float32_parts: list[str] = []
    for node in model.graph.node:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            nodes.append(node)
            continue
        x, w, y = node.input[0], node.input[1], node.output[0]
        if x not in outliers:  # once per input: the query, key and value layers share theirs
            channels = np.sort(np.argsort(-peaks[x])[:OUTLIER_CHANNELS]).astype(np.int64)
            inliers = np.ones(peaks[x].size, dtype=np.float32)
            inliers[channels] = 0.0
            added += [
                numpy_helper.from_array(inliers, f"{x}/inliers"),
                numpy_helper.from_array(channels, f"{x}/outliers"),
            ]
            nodes += [
                helper.make_node("Mul", [x, f"{x}/inliers"], [f"{x}/inlier_values"], name=f"{x}/inlier_mask"),
                helper.make_node("Gather", [x, f"{x}/outliers"], [f"{x}/outlier_values"], axis=-1, name=f"{x}/pick"),
            ]
            outliers[x] = channels
        channels = outliers[x]
        matrix = numpy_helper.to_array(weights[w])
        added.append(numpy_helper.from_array(matrix[channels], f"{w}/outliers"))
        inlier_matrix = matrix.copy()
        inlier_matrix[channels] = 0.0  # multiplied by zeros anyway; zeroed, they no longer widen the weight scales
        weights[w].CopyFrom(numpy_helper.from_array(inlier_matrix, w))
        nodes += [
            helper.make_node("MatMul", [f"{x}/inlier_values", w], [f"{y}/inliers"], name=node.name),
            helper.make_node(
                "MatMul", [f"{x}/outlier_values", f"{w}/outliers"], [f"{y}/outliers"], name=f"{node.name}/outliers"
            ),
            helper.make_node("Add", [f"{y}/inliers", f"{y}/outliers"], [y], name=f"{node.name}/sum"),
        ]
        float32_parts.append(f"{node.name}/outliers")
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    model.graph.initializer.extend(added)
    return float32_parts
