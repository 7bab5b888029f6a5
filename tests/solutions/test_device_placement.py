"""Every public function and module of solutions/ keeps its tensors on the inputs' device.

The classic bug is a tensor made without device= (torch.arange(T), torch.tensor([...]),
torch.zeros(...)): it lands on the default device (the CPU) and only fails on a GPU. These checks
catch it on a CPU-only machine:

1. meta: inputs and modules on the 'meta' device (shapes only, no data); every output tensor
   must be on meta.
2. default-device trap: inputs and modules on the CPU, while the default device for new tensors
   is meta during the call; outputs must still be on the CPU. A tensor created without device=
   becomes a meta tensor. This also covers functions that need real values (.item(), .tolist(),
   data-dependent loops), which cannot run on meta at all.
3. the `device` fixture (cpu, and cuda when present): outputs on that device.

Meta kernels are lenient about some mixes (an embedding lookup with CPU indices into a meta
table returns meta), so every call also runs under SameDevice, a TorchDispatchMode that sees each
aten op and fails when its tensor arguments sit on different devices (CPU 0-dim scalars allowed,
as in PyTorch itself). That is stricter than CUDA, which accepts CPU index tensors in some
indexing ops; the course rule is "create every tensor on the input's device" anyway.

Each public callable has a case below: a builder that takes a device, makes the inputs there and
returns a zero-argument function that runs the calls. Cases marked values=True need real data
and skip check 1 (checks 2 and 3 still run them). test_every_public_callable_has_a_case fails
when a public function or class appears in solutions/ without a case here.
"""

import importlib
import inspect
import pkgutil

import pytest
import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

import solutions
from solutions import (
    attention,
    decoding,
    efficient,
    masking,
    models,
    multihead,
    normalization,
    positional,
    softmax,
)

CASES = []  # (builder, names, needs_values, no_tensors); builder(device) -> zero-arg callable


def case(*names, values=False, no_tensors=False):
    """Register a builder covering the public callables `names` ("module.name")."""

    def register(builder):
        CASES.append((builder, names, values, no_tensors))
        return builder

    return register


def rand(dev, *shape):
    return torch.randn(*shape, device=dev)


def ints(dev, high, *shape):
    return torch.randint(high, shape, device=dev)


def gpt(dev):
    torch.manual_seed(0)
    return models.GPTModel(20, 16, 16, 2, 1).to(dev).eval()


# --- softmax ---------------------------------------------------------------------------------


@case("softmax.softmax", "softmax.softmax_naive", "softmax.log_softmax")
def _softmax_family(dev):
    x = rand(dev, 2, 3, 5)
    x_inf = x.masked_fill(torch.arange(5, device=dev) > 2, float("-inf"))
    return lambda: (
        softmax.softmax(x, dim=-1, temperature=0.5),
        softmax.softmax(x_inf),
        softmax.softmax(torch.full((2, 4), float("-inf"), device=dev)),  # all -inf row -> zeros
        softmax.softmax_naive(x),
        softmax.log_softmax(x_inf),
    )


@case("softmax.sum_normalize", "softmax.softmax_jacobian")
def _softmax_misc(dev):
    x = rand(dev, 2, 5).abs() + 0.1
    return lambda: (softmax.sum_normalize(x), softmax.softmax_jacobian(x / x.sum(-1, keepdim=True)))


@case("softmax.cross_entropy")
def _cross_entropy(dev):
    logits = rand(dev, 2, 4, 7)
    target = ints(dev, 7, 2, 4)
    target[0, 0] = -100
    return lambda: [
        softmax.cross_entropy(logits, target, reduction=r) for r in ("mean", "sum", "none")
    ]


# --- attention -------------------------------------------------------------------------------


@case("attention.example_inputs")
def _example_inputs(dev):
    return lambda: attention.example_inputs(device=dev)


@case("attention.simple_self_attention", "attention.scaled_dot_product_attention")
def _sdpa(dev):
    x = rand(dev, 2, 5, 3)
    q, k, v = rand(dev, 2, 2, 4, 8), rand(dev, 2, 2, 6, 8), rand(dev, 2, 2, 6, 8)
    keep = masking.causal_mask(4, 6, device=dev)
    return lambda: (
        attention.simple_self_attention(x),
        attention.scaled_dot_product_attention(q, k, v),
        attention.scaled_dot_product_attention(q, k, v, mask=keep),
        attention.scaled_dot_product_attention(q, k, v, mask=torch.zeros(4, 6, device=dev)),
        attention.scaled_dot_product_attention(q, k, v, mask=keep, dropout_p=0.5, training=True),
    )


@case("attention.SelfAttention_v1", "attention.SelfAttention_v2", "attention.copy_v2_to_v1")
def _self_attention_modules(dev):
    torch.manual_seed(0)
    v1 = attention.SelfAttention_v1(3, 2).to(dev)
    v2 = attention.SelfAttention_v2(3, 2).to(dev)
    x = rand(dev, 2, 6, 3)

    def run():
        attention.copy_v2_to_v1(v2, v1)
        return v1(x), v2(x), v1(x[0]), list(v1.parameters())

    return run


@case("attention.v2_to_v1_state_dict")
def _v2_to_v1_state(dev):
    torch.manual_seed(0)
    state = attention.SelfAttention_v2(3, 2).to(dev).state_dict()
    return lambda: attention.v2_to_v1_state_dict(state)


# --- masking ---------------------------------------------------------------------------------


@case("masking.causal_mask", "masking.padding_mask", "masking.combine_masks")
def _masks(dev):
    lengths = torch.tensor([3, 5], device=dev)
    return lambda: (
        masking.causal_mask(4, device=dev),
        masking.causal_mask(2, 5, device=dev),
        masking.combine_masks(
            masking.causal_mask(5, device=dev), masking.padding_mask(lengths, S=5), None
        ),
    )


@case("masking.padding_mask", values=True)
def _padding_mask_default_length(dev):
    # S=None reads lengths.max(): needs values, so no meta check for this form
    lengths = torch.tensor([3, 5], device=dev)
    return lambda: masking.padding_mask(lengths)


@case("masking.mask_fill_value", no_tensors=True)
def _fill(dev):
    return lambda: masking.mask_fill_value(torch.float16)


@case("masking.masked_softmax", "masking.masked_softmax_renorm", "masking.attention_dropout")
def _masked_softmax(dev):
    scores = rand(dev, 2, 2, 4, 4)
    keep = masking.causal_mask(4, device=dev)
    keep_none = torch.zeros(4, 4, dtype=torch.bool, device=dev)
    return lambda: (
        masking.masked_softmax(scores, keep),
        masking.masked_softmax(scores, keep_none),
        masking.masked_softmax(scores, torch.zeros(4, 4, device=dev)),
        masking.masked_softmax_renorm(scores, keep),
        masking.attention_dropout(scores.softmax(-1), 0.5, training=True),
        masking.attention_dropout(scores.softmax(-1), 0.5, training=False),
    )


@case("masking.CausalAttention")
def _causal_attention(dev):
    torch.manual_seed(0)
    m = masking.CausalAttention(3, 4, 6, 0.5, qkv_bias=True).to(dev)
    x = rand(dev, 2, 5, 3)
    return lambda: (m.train()(x), m.eval()(x))


# --- multihead -------------------------------------------------------------------------------


@case("multihead.split_heads", "multihead.merge_heads")
def _heads(dev):
    x = rand(dev, 2, 5, 8)
    return lambda: (multihead.split_heads(x, 4), multihead.merge_heads(multihead.split_heads(x, 2)))


@case("multihead.MultiHeadAttentionWrapper", "multihead.MultiHeadAttention")
def _mha(dev):
    torch.manual_seed(0)
    wrapper = multihead.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2).to(dev)
    mha = multihead.MultiHeadAttention(8, 8, 6, 0.1, num_heads=2).to(dev)
    free = multihead.MultiHeadAttention(8, 8, None, 0.0, num_heads=2).to(dev)
    x, ctx = rand(dev, 2, 5, 8), rand(dev, 2, 7, 8)
    pad = torch.ones(2, 1, 1, 7, dtype=torch.bool, device=dev)
    return lambda: (
        wrapper(rand(dev, 2, 5, 3)),
        mha.train()(x),
        mha.eval()(x, return_weights=True),
        mha(x, context=ctx, mask=pad, return_weights=True),
        free(rand(dev, 1, 9, 8)),
    )


@case("multihead.mha_parameter_count", "multihead.count_parameters", no_tensors=True)
def _counts(dev):
    m = multihead.MultiHeadAttention(8, 8, 6, 0.0, num_heads=2).to(dev)
    return lambda: (multihead.mha_parameter_count(8), multihead.count_parameters(m))


@case("multihead.load_torch_mha", "multihead.to_torch_mha")
def _torch_mha(dev):
    torch.manual_seed(0)
    ours = multihead.MultiHeadAttention(8, 8, None, 0.0, num_heads=2, qkv_bias=True).to(dev)
    theirs = nn.MultiheadAttention(8, 2, batch_first=True).to(dev)

    def run():
        multihead.load_torch_mha(ours, theirs)
        converted = multihead.to_torch_mha(ours)
        return list(ours.parameters()), list(converted.parameters())

    return run


@case("multihead.from_torch_mha_state", "multihead.keep_mask_from_torch")
def _torch_mha_state(dev):
    torch.manual_seed(0)
    state = nn.MultiheadAttention(8, 2, batch_first=True).to(dev).state_dict()
    blocked = torch.ones(3, 4, dtype=torch.bool, device=dev).triu(1)
    padding = torch.zeros(2, 4, dtype=torch.bool, device=dev)
    return lambda: (
        multihead.from_torch_mha_state(state),
        multihead.keep_mask_from_torch(blocked),
        multihead.keep_mask_from_torch(key_padding_mask=padding),
        multihead.keep_mask_from_torch(blocked, padding),
    )


# --- positional ------------------------------------------------------------------------------


@case("positional.sinusoidal_encoding", "positional.rope_cos_sin", "positional.alibi_slopes")
def _position_tables(dev):
    return lambda: (
        positional.sinusoidal_encoding(6, 8, device=dev),
        positional.sinusoidal_encoding(6, 8, device=dev, dtype=torch.float16),
        positional.rope_cos_sin(6, 8, device=dev, offset=3),
        positional.alibi_slopes(6, device=dev),
    )


@case("positional.alibi_bias")
def _alibi(dev):
    return lambda: (
        positional.alibi_bias(4, 5, device=dev),
        positional.alibi_bias(3, 2, 6, device=dev),
    )


@case("positional.LearnedPositionalEmbedding")
def _learned(dev):
    m = positional.LearnedPositionalEmbedding(10, 8).to(dev)
    return lambda: m(rand(dev, 2, 6, 8))


@case(
    "positional.rope_angles",
    "positional.apply_rope",
    "positional.interleaved_to_half",
    "positional.half_to_interleaved",
)
def _rope(dev):
    x = rand(dev, 2, 3, 5, 8)
    pos_bt = ints(dev, 100, 2, 5)
    return lambda: (
        positional.rope_angles(torch.arange(5, device=dev), 8),
        positional.apply_rope(x),
        positional.apply_rope(x, positions=torch.arange(3, 8, device=dev)),
        positional.apply_rope(x, positions=pos_bt, pairing="interleaved"),
        positional.half_to_interleaved(positional.interleaved_to_half(x)),
    )


@case("positional.t5_relative_position_bucket")
def _t5(dev):
    rel = torch.arange(-200, 200, device=dev)[None, :] - torch.arange(5, device=dev)[:, None]
    return lambda: (
        positional.t5_relative_position_bucket(rel),
        positional.t5_relative_position_bucket(rel, bidirectional=False),
    )


# --- normalization ---------------------------------------------------------------------------


@case(
    "normalization.LayerNorm",
    "normalization.RMSNorm",
    "normalization.FeedForward",
    "normalization.SwiGLU",
    "normalization.TransformerBlock",
)
def _norm_blocks(dev):
    torch.manual_seed(0)
    mods = [
        normalization.LayerNorm(8).to(dev),
        normalization.LayerNorm(8, elementwise_affine=False).to(dev),
        normalization.RMSNorm(8).to(dev),
        normalization.FeedForward(8, 16, dropout=0.1).to(dev),
        normalization.SwiGLU(8, 12).to(dev),
        normalization.TransformerBlock(8, 2, 16, causal=True).to(dev),
        normalization.TransformerBlock(8, 2, 16, norm_first=False, context_length=6).to(dev),
    ]
    x = rand(dev, 2, 5, 8)
    return lambda: [m(x) for m in mods]


@case("normalization.load_torch_encoder_layer")
def _load_encoder(dev):
    block = normalization.TransformerBlock(8, 2, 16).to(dev)
    layer = nn.TransformerEncoderLayer(8, 2, 16, batch_first=True).to(dev)
    return lambda: list(normalization.load_torch_encoder_layer(block, layer).parameters())


@case("normalization.gradient_norms_per_layer", values=True, no_tensors=True)
def _grad_norms(dev):
    # returns Python floats read with .item(): needs values
    blocks = [normalization.TransformerBlock(8, 2, 16).to(dev) for _ in range(2)]
    return lambda: normalization.gradient_norms_per_layer(blocks, rand(dev, 2, 5, 8))


# --- efficient -------------------------------------------------------------------------------


@case("efficient.sliding_window_mask")
def _sliding(dev):
    return lambda: (
        efficient.sliding_window_mask(6, 2, device=dev),
        efficient.sliding_window_mask(6, 2, global_tokens=(0, 3), causal=False, device=dev),
    )


@case("efficient.kv_cache_bytes", no_tensors=True)
def _kv_bytes(dev):
    return lambda: efficient.kv_cache_bytes(1, 2048, 96, 96, 128)


@case(
    "efficient.KVCache",
    "efficient.repeat_kv",
    "efficient.cached_attention_step",
    "efficient.GroupedQueryAttention",
)
def _gqa(dev):
    torch.manual_seed(0)
    gqa = efficient.GroupedQueryAttention(16, 4, 2, rope=True).to(dev)
    x = rand(dev, 2, 5, 16)

    def run():
        cache = efficient.KVCache()
        out = [gqa(x), gqa(x[:, :3], cache=cache), gqa(x[:, 3:], cache=cache)]
        step_cache = efficient.KVCache()
        step_cache.update(rand(dev, 2, 2, 3, 4), rand(dev, 2, 2, 3, 4))
        k1, v1 = rand(dev, 2, 2, 1, 4), rand(dev, 2, 2, 1, 4)
        out.append(efficient.cached_attention_step(rand(dev, 2, 4, 1, 4), k1, v1, step_cache))
        out.append(efficient.repeat_kv(rand(dev, 2, 2, 3, 4), 4))
        return out, cache.k, cache.v, step_cache.k, step_cache.v

    return run


@case("efficient.grouped_query_attention", "efficient.kv_cached_attention")
def _gqa_functions(dev):
    q, k, v = rand(dev, 2, 4, 3, 4), rand(dev, 2, 2, 5, 4), rand(dev, 2, 2, 5, 4)
    keep = torch.ones(3, 5, dtype=torch.bool, device=dev).tril(2)
    return lambda: (
        efficient.grouped_query_attention(q, k, v),
        efficient.grouped_query_attention(q, k, v, mask=keep),
        efficient.kv_cached_attention(q[:, :, :1], k[:, :, :1], v[:, :, :1]),
        efficient.kv_cached_attention(q[:, :, :1], k[:, :, :1], v[:, :, :1], k, v),
    )


@case("efficient.elu_feature_map", "efficient.linear_attention", "efficient.tiled_attention")
def _linear_tiled(dev):
    q, k, v = rand(dev, 2, 2, 6, 4), rand(dev, 2, 2, 6, 4), rand(dev, 2, 2, 6, 5)
    pad = torch.ones(2, 1, 1, 6, dtype=torch.bool, device=dev)
    return lambda: (
        efficient.elu_feature_map(q),
        efficient.linear_attention(q, k, v),
        efficient.linear_attention(q, k, v, causal=True),
        efficient.tiled_attention(q, k, v, block_size=4),
        efficient.tiled_attention(q, k, v, block_size=4, causal=True, mask=pad),
    )


# --- models ----------------------------------------------------------------------------------


@case("models.EncoderBlock", "models.DecoderBlock", "models.GPTBlock", "models.ModernBlock")
def _model_blocks(dev):
    torch.manual_seed(0)
    enc = models.EncoderBlock(8, 2, 16).to(dev)
    dec = models.DecoderBlock(8, 2, 16, norm_first=False).to(dev)
    gblock = models.GPTBlock(8, 2, 16).to(dev)
    modern = models.ModernBlock(8, 2, 1, 12).to(dev)
    x, mem = rand(dev, 2, 5, 8), rand(dev, 2, 7, 8)
    pad = torch.ones(2, 1, 1, 7, dtype=torch.bool, device=dev)
    return lambda: (
        enc(x, mask=pad[..., :5]),
        dec(x, mem, memory_mask=pad),
        gblock(x),
        modern(x),
    )


@case("models.GPTModel", "models.ModernLM")
def _lms(dev):
    model = gpt(dev)
    lm = models.ModernLM(20, 16, 2, 1, 1, 24).to(dev)
    idx = ints(dev, 20, 2, 6)

    def run():
        out = [model(idx), lm(idx)]
        for m in (model, lm):
            caches = m.make_caches()
            out += [m(idx[:, :4], caches=caches), m(idx[:, 4:], caches=caches)]
            out += [caches[0].k, caches[0].v]
        return out

    return run


@case("models.EncoderDecoderModel")
def _seq2seq(dev):
    torch.manual_seed(0)
    m = models.EncoderDecoderModel(20, 30, 16, 2, 1, 1).to(dev).eval()
    src, tgt = ints(dev, 20, 2, 7), ints(dev, 30, 2, 5)
    return lambda: (m(src, tgt), m.encode(src))


@case("models.bert_mlm_mask")
def _mlm(dev):
    ids = ints(dev, 100, 4, 16)
    return lambda: (
        models.bert_mlm_mask(ids, 3, 100, special_ids=(0, 1)),
        models.bert_mlm_mask(ids, 3, 100),
    )


@case("models.bert_mlm_mask")
def _mlm_cpu_generator(dev):
    # a CPU generator with inputs elsewhere: the draws happen on the CPU, results move over
    ids = ints(dev, 100, 4, 16)
    return lambda: models.bert_mlm_mask(ids, 3, 100, generator=torch.Generator().manual_seed(0))


@case("models.mlm_mask")
def _mlm_seeded(dev):
    ids = ints(dev, 100, 4, 16)
    return lambda: (
        models.mlm_mask(ids, 100, 3, [0, 1], 7),
        models.mlm_mask(ids, 100, 3, [], 7, p=1.0),
    )


# --- decoding --------------------------------------------------------------------------------


@case(
    "decoding.apply_temperature",
    "decoding.top_k_filter",
    "decoding.top_p_filter",
    "decoding.apply_repetition_penalty",
    "decoding.sample_next",
)
def _processors(dev):
    logits, prev = rand(dev, 2, 20), ints(dev, 20, 2, 6)
    return lambda: (
        decoding.apply_temperature(logits, 0.7),
        decoding.top_k_filter(logits, 5),
        decoding.top_p_filter(logits, 0.9),
        decoding.apply_repetition_penalty(logits, prev, 1.3),
        decoding.sample_next(logits, temperature=0.8, top_k=5, top_p=0.9),
    )


@case("decoding.no_repeat_ngram_ban")
def _ngram(dev):
    logits = rand(dev, 2, 20)
    ids = torch.tensor([[1, 2, 3, 1, 2], [4, 4, 4, 4, 4]], device=dev)
    return lambda: decoding.no_repeat_ngram_ban(logits, ids, 3)


@case("decoding.gnmt_length_penalty", no_tensors=True)
def _lp(dev):
    return lambda: decoding.gnmt_length_penalty(7, 0.6)


@case("decoding.greedy_decode", "decoding.generate", "decoding.generate_cached")
def _decode(dev):
    model = gpt(dev)
    idx = ints(dev, 20, 2, 3)
    kw = dict(temperature=0.9, top_k=8, top_p=0.95, repetition_penalty=1.2)
    return lambda: (
        decoding.greedy_decode(model, idx, 4),
        decoding.generate(model, idx, 4, no_repeat_ngram_size=2, **kw),
        decoding.generate_cached(model, idx, 4, **kw),
    )


@case(
    "decoding.greedy_decode",
    "decoding.generate",
    "decoding.generate_cached",
    "decoding.beam_search",
    values=True,
)
def _decode_eos_beam(dev):
    # the EOS early stop and the beam bookkeeping read values (.item(), .tolist())
    model = gpt(dev)
    idx = ints(dev, 20, 2, 3)
    g = torch.Generator(device=dev).manual_seed(0)
    return lambda: (
        decoding.greedy_decode(model, idx, 4, eos_id=5),
        decoding.generate(model, idx, 4, top_k=8, eos_id=5, generator=g),
        decoding.generate_cached(model, idx, 4, top_p=0.9, eos_id=5, generator=g),
        decoding.beam_search(model, idx[:1], 3, 4, eos_id=5, length_penalty=0.6),
    )


@case(
    "attention.scaled_dot_product_attention",
    "masking.attention_dropout",
    "decoding.sample_next",
    "models.bert_mlm_mask",
    values=True,
)
def _seeded(dev):
    # a torch.Generator lives on a real device (there is no meta generator)
    g = torch.Generator(device=dev).manual_seed(0)
    q = rand(dev, 2, 2, 4, 8)
    w = rand(dev, 2, 4, 4).softmax(-1)
    return lambda: (
        attention.scaled_dot_product_attention(q, q, q, dropout_p=0.3, training=True, generator=g),
        masking.attention_dropout(w, 0.3, training=True, generator=g),
        decoding.sample_next(rand(dev, 2, 20), top_k=5, generator=g),
        models.bert_mlm_mask(ints(dev, 100, 4, 16), 3, 100, special_ids=(0,), generator=g),
    )


# --- the checks ------------------------------------------------------------------------------


def tensors_in(obj, seen=None):
    """All tensors inside nested tuples/lists/dicts (modules give their parameters and buffers)."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, nn.Module):
        return list(obj.parameters()) + list(obj.buffers())
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in tensors_in(item, seen)]
    if isinstance(obj, dict):
        return [t for item in obj.values() for t in tensors_in(item, seen)]
    return []


class SameDevice(TorchDispatchMode):
    """Fail any aten op whose tensor arguments live on different devices."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        devices = {
            t.device
            for t in tensors_in((args, kwargs))
            if not (t.dim() == 0 and t.device.type == "cpu")
        }
        if len(devices) > 1:
            raise AssertionError(f"{func} mixes devices {sorted(map(str, devices))}")
        return func(*args, **kwargs)


def check_outputs(names, out, device_type, no_tensors):
    found = tensors_in(out)
    if not no_tensors:
        assert found, f"{names}: the case returned no tensor"
    wrong = [(t.device.type, tuple(t.shape)) for t in found if t.device.type != device_type]
    assert not wrong, f"{names}: outputs not on {device_type}: {wrong}"


PARAMS = [pytest.param(*c, id=c[0].__name__.strip("_")) for c in CASES]
META_PARAMS = [p for p, c in zip(PARAMS, CASES, strict=True) if not c[2]]


@pytest.mark.parametrize(("builder", "names", "values", "no_tensors"), META_PARAMS)
def test_meta_device(builder, names, values, no_tensors):
    """Inputs and modules on meta -> outputs on meta (cases that need real values excluded)."""
    run = builder(torch.device("meta"))
    with SameDevice():
        out = run()
    check_outputs(names, out, "meta", no_tensors)


@pytest.mark.parametrize(("builder", "names", "values", "no_tensors"), PARAMS)
def test_default_device_trap(builder, names, values, no_tensors):
    """Inputs on the CPU while new tensors default to meta -> outputs still on the CPU."""
    run = builder(torch.device("cpu"))
    with torch.device("meta"), SameDevice():
        out = run()
    check_outputs(names, out, "cpu", no_tensors)


@pytest.mark.parametrize(("builder", "names", "values", "no_tensors"), PARAMS)
def test_on_device(builder, names, values, no_tensors, device):
    run = builder(device)
    with SameDevice():
        out = run()
    check_outputs(names, out, device.type, no_tensors)


def public_callables():
    names = []
    for info in pkgutil.iter_modules(solutions.__path__):
        mod = importlib.import_module(f"solutions.{info.name}")
        for name, obj in vars(mod).items():
            if name.startswith("_") or not callable(obj):
                continue
            if getattr(obj, "__module__", None) != mod.__name__:
                continue  # imported from elsewhere
            if inspect.isclass(obj) or inspect.isfunction(obj):
                names.append(f"{info.name}.{name}")
    return names


def test_every_public_callable_has_a_case():
    covered = {name for _, names, _, _ in CASES for name in names}
    missing = sorted(set(public_callables()) - covered)
    assert not missing, (
        f"add a device case to tests/solutions/test_device_placement.py for: {missing}"
    )
