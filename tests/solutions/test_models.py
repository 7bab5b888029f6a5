"""Tests for solutions/models.py against PyTorch's own layers, hand-assembled references and
mathematical properties (causality, padding invariance, cache equivalence, MLM statistics)."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.models import (
    DecoderBlock,
    EncoderBlock,
    EncoderDecoderModel,
    GPTModel,
    ModernBlock,
    ModernLM,
    bert_mlm_mask,
    mlm_mask,
)
from solutions.multihead import load_torch_mha
from solutions.normalization import load_torch_encoder_layer

# ---------------------------------------------------------------------------------------------
# helpers: weight copies from torch layers (MHA and encoder-layer copies are solutions/'
# load_torch_mha and load_torch_encoder_layer, proven against nn.MultiheadAttention and
# nn.TransformerEncoderLayer in test_multihead.py and test_normalization.py)
# ---------------------------------------------------------------------------------------------


@torch.no_grad()
def randomize(module, std=0.3, seed=0):
    """Fill every parameter with N(0, std^2) (torch zero-inits biases, which would hide bugs)."""
    g = torch.Generator().manual_seed(seed)
    for p in module.parameters():
        p.copy_(torch.randn(p.shape, generator=g) * std)
    for m in module.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.add_(1.0)


@torch.no_grad()
def copy_linear(ours, theirs):
    ours.weight.copy_(theirs.weight)
    ours.bias.copy_(theirs.bias)


@torch.no_grad()
def copy_decoder_layer(ours, theirs):
    """nn.TransformerDecoderLayer -> our DecoderBlock (self, cross, FFN, three norms)."""
    load_torch_mha(ours.self_attn, theirs.self_attn)
    load_torch_mha(ours.cross_attn, theirs.multihead_attn)
    for name in ("linear1", "linear2"):
        copy_linear(getattr(ours.ffn, name), getattr(theirs, name))
    for name in ("norm1", "norm2", "norm3"):
        copy_linear(getattr(ours, name), getattr(theirs, name))


D, H, DFF = 16, 4, 40


# ---------------------------------------------------------------------------------------------
# EncoderBlock / DecoderBlock vs torch.nn
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("norm_first", [True, False])
def test_encoder_block_matches_torch(norm_first):
    torch.manual_seed(0)
    ref = nn.TransformerEncoderLayer(
        D, H, DFF, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    randomize(ref, seed=1)
    ref.train()  # dropout is 0; train() avoids the inference fast path
    ours = EncoderBlock(D, H, DFF, norm_first=norm_first)
    load_torch_encoder_layer(ours, ref)

    x = torch.randn(2, 6, D)
    lengths = torch.tensor([6, 3])
    pad = torch.arange(6)[None, :] >= lengths[:, None]  # torch: True = padding
    expected = ref(x, src_key_padding_mask=pad)
    got = ours(x, mask=~pad[:, None, None, :])
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_block_matches_torch(norm_first):
    torch.manual_seed(0)
    ref = nn.TransformerDecoderLayer(
        D, H, DFF, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    randomize(ref, seed=2)
    ref.train()
    ours = DecoderBlock(D, H, DFF, norm_first=norm_first)
    copy_decoder_layer(ours, ref)

    T, S = 5, 7
    x, memory = torch.randn(2, T, D), torch.randn(2, S, D)
    mem_pad = torch.arange(S)[None, :] >= torch.tensor([7, 4])[:, None]  # True = padding
    tgt_mask = torch.ones(T, T, dtype=torch.bool).triu(1)  # torch: True = not allowed
    expected = ref(x, memory, tgt_mask=tgt_mask, memory_key_padding_mask=mem_pad)
    got = ours(x, memory, memory_mask=~mem_pad[:, None, None, :])
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)

    # the block is causal by itself and the padded memory slots are ignored
    x2 = x.clone()
    x2[:, 3:] = torch.randn(2, T - 3, D)
    mem2 = memory.clone()
    mem2[1, 4:] = torch.randn(S - 4, D)
    got2 = ours(x2, mem2, memory_mask=~mem_pad[:, None, None, :])
    torch.testing.assert_close(got2[:, :3], got[:, :3], atol=1e-6, rtol=0)
    assert not torch.allclose(got2[:, 3:], got[:, 3:])


def test_decoder_block_extra_self_mask():
    """self_mask is ANDed with the causal rule (here: also hide key 0 from queries >= 1)."""
    torch.manual_seed(0)
    ref = nn.TransformerDecoderLayer(D, H, DFF, dropout=0.0, activation="gelu", batch_first=True)
    randomize(ref, seed=3)
    ref.train()
    ours = DecoderBlock(D, H, DFF, norm_first=False)
    copy_decoder_layer(ours, ref)
    T = 4
    keep = torch.ones(T, T, dtype=torch.bool)
    keep[1:, 0] = False
    blocked = torch.ones(T, T, dtype=torch.bool).triu(1) | ~keep
    x, memory = torch.randn(3, T, D), torch.randn(3, 6, D)
    torch.testing.assert_close(
        ours(x, memory, self_mask=keep), ref(x, memory, tgt_mask=blocked), atol=1e-5, rtol=1e-5
    )


# ---------------------------------------------------------------------------------------------
# GPTModel
# ---------------------------------------------------------------------------------------------

V, CTX = 50, 12


def small_gpt(**kw):
    torch.manual_seed(0)
    model = GPTModel(V, CTX, d_model=32, num_heads=4, num_layers=2, **kw)
    return model.eval()


def test_gpt_logits_shape_and_causality():
    model = small_gpt()
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(V, (2, CTX), generator=g)
    logits = model(idx)
    assert logits.shape == (2, CTX, V)
    for t in range(CTX - 1):
        changed = idx.clone()
        changed[:, t + 1 :] = torch.randint(V, (2, CTX - t - 1), generator=g)
        out = model(changed)
        torch.testing.assert_close(out[:, : t + 1], logits[:, : t + 1], atol=1e-6, rtol=0)
        # sanity: the change is visible from position t + 1 on
        assert not torch.allclose(out[:, t + 1 :], logits[:, t + 1 :])


@pytest.mark.parametrize("tie", [False, True])
def test_gpt_cached_forward_matches_full(tie):
    model = small_gpt(tie_weights=tie)
    idx = torch.randint(V, (3, 10), generator=torch.Generator().manual_seed(2))
    full = model(idx)
    caches = model.make_caches()
    assert len(caches) == 2
    steps = [model(idx[:, :4], caches=caches)]
    for t in range(4, 10):
        steps.append(model(idx[:, t : t + 1], caches=caches))
    assert caches[0].length == 10
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)


def test_gpt_context_overflow_raises():
    model = small_gpt()
    with pytest.raises(ValueError, match="context_length"):
        model(torch.zeros(1, CTX + 1, dtype=torch.long))
    caches = model.make_caches()
    model(torch.zeros(1, CTX, dtype=torch.long), caches=caches)  # exactly full is fine
    with pytest.raises(ValueError, match="context_length"):
        model(torch.zeros(1, 1, dtype=torch.long), caches=caches)


@pytest.mark.parametrize("tie", [False, True])
def test_gpt_parameter_count(tie):
    d, L, dff = 32, 2, 4 * 32
    model = small_gpt(tie_weights=tie)
    per_layer = (
        2 * d  # LayerNorm 1
        + 4 * d * d
        + 4 * d  # W_q, W_k, W_v, out_proj with biases
        + 2 * d  # LayerNorm 2
        + d * dff
        + dff
        + dff * d
        + d  # FFN
    )
    expected = V * d + CTX * d + L * per_layer + 2 * d + (0 if tie else V * d)
    assert sum(p.numel() for p in model.parameters()) == expected
    if tie:
        assert model.lm_head.weight is model.tok_emb.weight


@pytest.mark.parametrize("tie", [False, True])
def test_gpt_initial_loss_is_uniform_guess(tie):
    """With GPT-2's N(0, 0.02^2) init the logits start near 0, so the first cross-entropy is
    log(V) (a uniform guess); PyTorch's default N(0, 1) embedding init would give far more with
    tied weights. The residual projections start 1/sqrt(2 L) smaller than the other weights."""
    model = small_gpt(tie_weights=tie)
    g = torch.Generator().manual_seed(9)
    idx, targets = torch.randint(V, (2, 8, CTX), generator=g)
    loss = F.cross_entropy(model(idx).reshape(-1, V), targets.reshape(-1))
    assert loss.item() == pytest.approx(math.log(V), rel=0.01)
    std_qkv = model.blocks[0].attn.W_query.weight.std().item()
    std_out = model.blocks[0].attn.out_proj.weight.std().item()
    assert std_qkv == pytest.approx(0.02, rel=0.1)
    assert std_out == pytest.approx(0.02 / math.sqrt(2 * 2), rel=0.1)


def test_gpt_trains_on_a_tiny_batch():
    """A few AdamW steps on one batch must lower the next-token cross-entropy (loss from logits)."""
    model = small_gpt().train()
    idx = torch.randint(V, (4, CTX), generator=torch.Generator().manual_seed(3))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        logits = model(idx[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, V), idx[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(V), rel=0.2)
    assert losses[-1] < 0.5 * losses[0]


# ---------------------------------------------------------------------------------------------
# EncoderDecoderModel
# ---------------------------------------------------------------------------------------------

PAD = 0


def small_seq2seq(norm_first):
    torch.manual_seed(0)
    model = EncoderDecoderModel(
        30,
        40,
        d_model=32,
        num_heads=4,
        num_encoder_layers=2,
        num_decoder_layers=2,
        pad_id=PAD,
        norm_first=norm_first,
    )
    return model.eval()


@pytest.mark.parametrize("norm_first", [True, False])
def test_seq2seq_decoder_is_causal(norm_first):
    model = small_seq2seq(norm_first)
    g = torch.Generator().manual_seed(4)
    src = torch.randint(1, 30, (2, 7), generator=g)
    tgt = torch.randint(1, 40, (2, 6), generator=g)
    logits = model(src, tgt)
    assert logits.shape == (2, 6, 40)
    for t in range(5):
        tgt2 = tgt.clone()
        tgt2[:, t + 1 :] = torch.randint(1, 40, (2, 5 - t), generator=g)
        out = model(src, tgt2)
        torch.testing.assert_close(out[:, : t + 1], logits[:, : t + 1], atol=1e-6, rtol=0)
    # the source does matter
    src2 = src.clone()
    src2[:, 0] = (src[:, 0] % 29) + 1
    assert not torch.allclose(model(src2, tgt), logits)


@pytest.mark.parametrize("norm_first", [True, False])
def test_seq2seq_ignores_source_padding(norm_first):
    model = small_seq2seq(norm_first)
    g = torch.Generator().manual_seed(5)
    src = torch.randint(1, 30, (2, 8), generator=g)
    src[0, 5:] = PAD
    src[1, 3:] = PAD
    tgt = torch.randint(1, 40, (2, 4), generator=g)
    logits = model(src, tgt)
    # more padding on the right changes nothing
    longer = torch.cat([src, torch.full((2, 3), PAD)], dim=1)
    torch.testing.assert_close(model(longer, tgt), logits, atol=1e-5, rtol=1e-5)
    # with an explicit keep-mask, whatever sits in the padded slots changes nothing
    keep = (src != PAD)[:, None, None, :]
    junk = torch.where(src == PAD, torch.randint(1, 30, src.shape, generator=g), src)
    torch.testing.assert_close(model(junk, tgt, src_mask=keep), logits, atol=1e-5, rtol=1e-5)
    # but a real source token does change the output
    real = src.clone()
    real[1, 0] = (src[1, 0] % 29) + 1
    assert not torch.allclose(model(real, tgt)[1], logits[1])
    torch.testing.assert_close(model(real, tgt)[0], logits[0], atol=1e-5, rtol=1e-5)


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
def test_seq2seq_matches_nn_transformer():
    """Pre-norm stacks with final norms, source padding in encoder self-attention and in
    cross-attention, causal target: exactly nn.Transformer(norm_first=True) after weight copy
    (the embeddings and the LM head are ours on both sides)."""
    model = small_seq2seq(norm_first=True)
    ref = nn.Transformer(
        32, 4, 2, 2, 128, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )
    randomize(ref, seed=4)
    ref.train()  # dropout is 0; train() avoids the nested-tensor fast path
    for ours, theirs in zip(model.encoder, ref.encoder.layers, strict=True):
        load_torch_encoder_layer(ours, theirs)
    for ours, theirs in zip(model.decoder, ref.decoder.layers, strict=True):
        copy_decoder_layer(ours, theirs)
    copy_linear(model.enc_norm, ref.encoder.norm)
    copy_linear(model.dec_norm, ref.decoder.norm)

    g = torch.Generator().manual_seed(8)
    src = torch.randint(1, 30, (2, 7), generator=g)
    src[1, 4:] = PAD
    tgt = torch.randint(1, 40, (2, 5), generator=g)
    pad = src == PAD  # torch: True = padding
    causal = torch.ones(5, 5, dtype=torch.bool).triu(1)  # torch: True = not allowed
    with torch.no_grad():
        hidden = ref(
            model.embed(model.src_emb, src),
            model.embed(model.tgt_emb, tgt),
            tgt_mask=causal,
            src_key_padding_mask=pad,
            memory_key_padding_mask=pad,
        )
        torch.testing.assert_close(model(src, tgt), model.lm_head(hidden), atol=1e-5, rtol=1e-5)


# ---------------------------------------------------------------------------------------------
# ModernBlock (LLaMA-style) vs a hand-assembled reference
# ---------------------------------------------------------------------------------------------


def rope_half(x, positions, base=10000.0):
    """RoPE as in HF LLaMA (rotate_half pairing): x (B, h, T, d), positions (T,)."""
    d = x.shape[-1]
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    ang = positions.double()[:, None] * inv_freq[None, :]  # (T, d/2)
    cos = torch.cat([ang.cos(), ang.cos()], dim=-1).to(x.dtype)
    sin = torch.cat([ang.sin(), ang.sin()], dim=-1).to(x.dtype)
    rotated = torch.cat([-x[..., d // 2 :], x[..., : d // 2]], dim=-1)
    return x * cos + rotated * sin


def modern_reference(block, x, num_heads, num_kv_heads, eps):
    """RMSNorm -> q/k/v projections -> RoPE -> causal SDPA (GQA) -> out proj -> residual,
    then RMSNorm -> SwiGLU -> residual, from torch primitives and the block's raw weights."""
    B, T, d = x.shape
    dh = d // num_heads
    norm1 = nn.RMSNorm(d, eps=eps)
    norm2 = nn.RMSNorm(d, eps=eps)
    with torch.no_grad():
        norm1.weight.copy_(block.attn_norm.weight)
        norm2.weight.copy_(block.ffn_norm.weight)
    a = block.attn
    h = norm1(x)
    q = (h @ a.W_query.weight.T).view(B, T, num_heads, dh).transpose(1, 2)
    k = (h @ a.W_key.weight.T).view(B, T, num_kv_heads, dh).transpose(1, 2)
    v = (h @ a.W_value.weight.T).view(B, T, num_kv_heads, dh).transpose(1, 2)
    pos = torch.arange(T)
    q, k = rope_half(q, pos), rope_half(k, pos)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    x = x + o.transpose(1, 2).reshape(B, T, d) @ a.out_proj.weight.T
    h = norm2(x)
    f = block.ffn
    gate, up = h @ f.w_gate.weight.T, h @ f.w_up.weight.T
    return x + (F.silu(gate) * up) @ f.w_down.weight.T


@pytest.mark.parametrize("num_kv_heads", [4, 2, 1])
def test_modern_block_matches_reference(num_kv_heads):
    torch.manual_seed(0)
    block = ModernBlock(32, 4, num_kv_heads, d_ff=48, eps=1e-6)
    with torch.no_grad():
        block.attn_norm.weight.uniform_(0.5, 1.5)
        block.ffn_norm.weight.uniform_(0.5, 1.5)
    assert not any("bias" in name for name, _ in block.named_parameters())
    x = torch.randn(2, 9, 32)
    expected = modern_reference(block, x, 4, num_kv_heads, eps=1e-6)
    torch.testing.assert_close(block(x), expected, atol=1e-5, rtol=1e-5)


def test_modern_block_is_causal():
    torch.manual_seed(0)
    block = ModernBlock(32, 4, 2, d_ff=48)
    x = torch.randn(1, 8, 32)
    out = block(x)
    for t in range(7):
        x2 = x.clone()
        x2[:, t + 1 :] = torch.randn(1, 7 - t, 32)
        torch.testing.assert_close(block(x2)[:, : t + 1], out[:, : t + 1], atol=1e-6, rtol=0)


def test_modern_block_depends_only_on_relative_positions():
    """RoPE makes q.k depend on i - j only. Prefix n junk tokens and hide them as keys: every real
    token now sits n positions later, yet its output is unchanged. The counter-check adds
    absolute (sinusoidal) positions to the input; then the same shift does change the output."""
    torch.manual_seed(0)
    block = ModernBlock(32, 4, 2, d_ff=48)
    x = torch.randn(2, 6, 32)
    n = 5
    shifted = torch.cat([torch.randn(2, n, 32), x], dim=1)
    keep = torch.ones(n + 6, n + 6, dtype=torch.bool)
    keep[:, :n] = False  # nobody attends to the junk prefix
    torch.testing.assert_close(block(shifted, mask=keep)[:, n:], block(x), atol=1e-5, rtol=1e-5)

    pos = torch.arange(n + 6, dtype=torch.float32)[:, None]
    freq = 10000.0 ** (-torch.arange(0, 32, 2, dtype=torch.float32) / 32)
    pe = torch.stack([(pos * freq).sin(), (pos * freq).cos()], dim=-1).flatten(-2)  # (n+6, 32)
    absolute = block(shifted + pe, mask=keep)[:, n:]
    assert not torch.allclose(absolute, block(x + pe[:6]), atol=1e-3)


def test_modern_lm_cached_forward_matches_full():
    torch.manual_seed(0)
    model = ModernLM(V, d_model=32, num_heads=4, num_kv_heads=2, num_layers=2, d_ff=48).eval()
    idx = torch.randint(V, (2, 9), generator=torch.Generator().manual_seed(6))
    full = model(idx)
    caches = model.make_caches()
    steps = [model(idx[:, :3], caches=caches)] + [
        model(idx[:, t : t + 1], caches=caches) for t in range(3, 9)
    ]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=1e-5)
    # the caches hold num_kv_heads heads, not num_heads (the point of GQA)
    assert caches[0].k.shape == (2, 2, 9, 8)


# ---------------------------------------------------------------------------------------------
# bert_mlm_mask
# ---------------------------------------------------------------------------------------------

VOCAB, PAD_ID, CLS_ID, SEP_ID, MASK_ID = 1000, 0, 1, 2, 3
SPECIALS = (PAD_ID, CLS_ID, SEP_ID)


def mlm_batch(B=128, T=256, seed=0, device="cpu"):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, VOCAB, (B, T), generator=g)  # never MASK_ID or a special
    ids[:, 0] = CLS_ID
    ids[:, -1] = SEP_ID
    ids[: B // 2, T // 2 :] = PAD_ID  # half the rows padded
    return ids.to(device)


def test_mlm_statistics(device):
    ids = mlm_batch(device=device)
    g = torch.Generator(device=device).manual_seed(7)
    inputs, labels = bert_mlm_mask(ids, MASK_ID, VOCAB, special_ids=SPECIALS, generator=g)
    assert inputs.device == ids.device and labels.device == ids.device
    assert inputs.dtype == ids.dtype and labels.dtype == ids.dtype
    ids, inputs, labels = ids.cpu(), inputs.cpu(), labels.cpu()

    special = (ids == PAD_ID) | (ids == CLS_ID) | (ids == SEP_ID)
    selected = labels != -100
    # specials are never selected and never changed
    assert not (selected & special).any()
    assert torch.equal(inputs[special], ids[special])
    # labels: original id where selected, -100 elsewhere; unselected inputs untouched
    assert torch.equal(labels[selected], ids[selected])
    assert torch.equal(inputs[~selected], ids[~selected])

    def within(count, n, p, sigmas=4.0):
        return abs(count / n - p) <= sigmas * math.sqrt(p * (1 - p) / n)

    n = int((~special).sum())
    assert within(int(selected.sum()), n, 0.15)

    s_in, s_orig = inputs[selected], ids[selected]
    ns = s_in.numel()
    masked = s_in == MASK_ID
    unchanged = s_in == s_orig
    randomised = ~masked & ~unchanged
    # a random draw equals MASK_ID or the original id with probability 1/VOCAB each
    assert within(int(masked.sum()), ns, 0.8 + 0.1 / VOCAB)
    assert within(int(unchanged.sum()), ns, 0.1 + 0.1 / VOCAB)
    assert within(int(randomised.sum()), ns, 0.1 * (1 - 2 / VOCAB))
    assert ((s_in >= 0) & (s_in < VOCAB)).all()
    # the random replacements are spread over the vocabulary, not one id
    assert s_in[randomised].unique().numel() > 0.5 * min(int(randomised.sum()), VOCAB)


def test_mlm_reproducible_with_generator():
    ids = mlm_batch(B=8, T=64)
    a = bert_mlm_mask(
        ids, MASK_ID, VOCAB, special_ids=SPECIALS, generator=torch.Generator().manual_seed(1)
    )
    b = bert_mlm_mask(
        ids, MASK_ID, VOCAB, special_ids=SPECIALS, generator=torch.Generator().manual_seed(1)
    )
    c = bert_mlm_mask(
        ids, MASK_ID, VOCAB, special_ids=SPECIALS, generator=torch.Generator().manual_seed(2)
    )
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[1], c[1])


def test_mlm_probability_extremes():
    ids = mlm_batch(B=4, T=32)
    special = (ids == PAD_ID) | (ids == CLS_ID) | (ids == SEP_ID)
    g = torch.Generator().manual_seed(0)
    inputs, labels = bert_mlm_mask(
        ids, MASK_ID, VOCAB, mlm_prob=0.0, special_ids=SPECIALS, generator=g
    )
    assert torch.equal(inputs, ids) and (labels == -100).all()
    inputs, labels = bert_mlm_mask(
        ids, MASK_ID, VOCAB, mlm_prob=1.0, special_ids=SPECIALS, generator=g
    )
    assert torch.equal(labels != -100, ~special)


def test_mlm_mask_seeded(device):
    """The data-only form: seed -> same corruption on every device; Bernoulli selection (the
    per-row count varies like Binomial(n, p), it is not fixed at round(p * n))."""
    ids = mlm_batch(B=64, T=128)
    special = (ids == PAD_ID) | (ids == CLS_ID) | (ids == SEP_ID)
    a = mlm_mask(ids, VOCAB, MASK_ID, list(SPECIALS), 5)
    b = mlm_mask(ids.to(device), VOCAB, MASK_ID, list(SPECIALS), 5)
    assert b[0].device.type == device.type and b[1].dtype == ids.dtype
    assert torch.equal(a[0], b[0].cpu()) and torch.equal(a[1], b[1].cpu())
    assert not torch.equal(a[1], mlm_mask(ids, VOCAB, MASK_ID, list(SPECIALS), 6)[1])
    selected = a[1] != -100
    assert not (selected & special).any()
    n = (~special).sum(dim=1).double()
    counts = selected.sum(dim=1).double()
    chi2 = ((counts - 0.15 * n) ** 2 / (0.15 * 0.85 * n)).sum().item()
    rows = ids.shape[0]
    assert abs(chi2 - rows) < 5 * math.sqrt(2 * rows)  # chi-square with `rows` dof
    all_selected = mlm_mask(ids, VOCAB, MASK_ID, list(SPECIALS), 0, p=1.0)[1] != -100
    assert torch.equal(all_selected, ~special)


def test_models_on_device(device):
    """Forward passes run where the inputs are; cached GPT decoding matches the full pass there."""
    torch.manual_seed(0)
    gpt = GPTModel(V, CTX, d_model=32, num_heads=4, num_layers=2).to(device).eval()
    idx = torch.randint(V, (2, 8), device=device)
    full = gpt(idx)
    assert full.device.type == device.type
    caches = gpt.make_caches()
    steps = [gpt(idx[:, :5], caches=caches)] + [
        gpt(idx[:, t : t + 1], caches=caches) for t in range(5, 8)
    ]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-4, rtol=1e-4)

    seq = EncoderDecoderModel(30, 40, 32, 4, 1, 1).to(device).eval()
    src = torch.randint(1, 30, (2, 7), device=device)
    src[0, 4:] = 0
    out = seq(src, torch.randint(1, 40, (2, 5), device=device))
    assert out.device.type == device.type and out.shape == (2, 5, 40)
    assert torch.isfinite(out).all()

    block = ModernBlock(32, 4, 2, 48).to(device)
    y = block(torch.randn(2, 6, 32, device=device))
    assert y.device.type == device.type and torch.isfinite(y).all()
