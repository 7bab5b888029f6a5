"""Multi-head attention: 002's printed numbers, nn.MultiheadAttention as oracle, counts."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.attention import example_inputs
from solutions.masking import CausalAttention, causal_mask, padding_mask
from solutions.multihead import (
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    count_parameters,
    from_torch_mha_state,
    keep_mask_from_torch,
    load_torch_mha,
    merge_heads,
    mha_parameter_count,
    split_heads,
    to_torch_mha,
)

ATOL = 1e-5


def batch_002():
    inputs = example_inputs()
    return torch.stack((inputs, inputs), dim=0)  # (2, 6, 3)


def torch_call(mha, x, context=None, keep=None, key_padding=None, average=False):
    """Call nn.MultiheadAttention; keep is our bool keep-mask (T, S), theirs is True = blocked."""
    kv = x if context is None else context
    return mha(
        x,
        kv,
        kv,
        attn_mask=None if keep is None else ~keep,
        key_padding_mask=None if key_padding is None else ~key_padding,
        need_weights=True,
        average_attn_weights=average,
    )


# --- split / merge -----------------------------------------------------------------------


def test_split_heads_takes_consecutive_blocks_of_the_last_dim():
    x = torch.randn(2, 5, 12)
    heads = split_heads(x, 3)
    assert heads.shape == (2, 3, 5, 4)
    for i in range(3):
        torch.testing.assert_close(heads[:, i], x[..., 4 * i : 4 * (i + 1)], rtol=0, atol=0)


def test_merge_heads_inverts_split_heads_and_concatenates():
    x = torch.randn(2, 5, 12)
    torch.testing.assert_close(merge_heads(split_heads(x, 4)), x, rtol=0, atol=0)
    heads = torch.randn(2, 3, 5, 4)
    torch.testing.assert_close(merge_heads(heads), torch.cat(heads.unbind(1), dim=-1))


def test_split_heads_rejects_indivisible_width():
    with pytest.raises(ValueError):
        split_heads(torch.randn(1, 2, 10), 3)


# --- 002's printed numbers ------------------------------------------------------------------


def test_mha_reproduces_002_printed_output():
    torch.manual_seed(123)
    mha = MultiHeadAttention(3, 2, 6, 0.0, num_heads=2)
    out = mha(batch_002())
    expected = torch.tensor(
        [
            [0.3190, 0.4858],
            [0.2943, 0.3897],
            [0.2856, 0.3593],
            [0.2693, 0.3873],
            [0.2639, 0.3928],
            [0.2575, 0.4028],
        ]
    )
    assert out.shape == (2, 6, 2)
    torch.testing.assert_close(out[0], expected, rtol=0, atol=5e-5)
    torch.testing.assert_close(out[1], expected, rtol=0, atol=5e-5)


def test_wrapper_reproduces_002_printed_output():
    torch.manual_seed(123)
    wrapper = MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    out = wrapper(batch_002())
    expected = torch.tensor(
        [
            [-0.4519, 0.2216, 0.4772, 0.1063],
            [-0.5874, 0.0058, 0.5891, 0.3257],
            [-0.6300, -0.0632, 0.6202, 0.3860],
            [-0.5675, -0.0843, 0.5478, 0.3589],
            [-0.5526, -0.0981, 0.5321, 0.3428],
            [-0.5299, -0.1081, 0.5077, 0.3493],
        ]
    )
    assert out.shape == (2, 6, 4)
    torch.testing.assert_close(out[0], expected, rtol=0, atol=5e-5)


def test_exercise_3_2_two_dimensional_output_with_two_heads():
    wrapper = MultiHeadAttentionWrapper(3, 1, 6, 0.0, num_heads=2)
    assert wrapper(batch_002()).shape == (2, 6, 2)


# --- wrapper -------------------------------------------------------------------------------


def test_wrapper_with_one_head_equals_causal_attention():
    torch.manual_seed(0)
    wrapper = MultiHeadAttentionWrapper(5, 4, 8, 0.0, num_heads=1)
    torch.manual_seed(0)
    single = CausalAttention(5, 4, 8, 0.0)
    x = torch.randn(3, 7, 5)
    torch.testing.assert_close(wrapper(x), single(x))


def test_wrapper_heads_equal_torch_sdpa_per_head():
    torch.manual_seed(1)
    wrapper = MultiHeadAttentionWrapper(5, 3, 8, 0.0, num_heads=3, qkv_bias=True)
    x = torch.randn(2, 8, 5)
    outs = []
    for head in wrapper.heads:
        q, k, v = head.W_query(x), head.W_key(x), head.W_value(x)
        outs.append(F.scaled_dot_product_attention(q, k, v, is_causal=True))
    torch.testing.assert_close(wrapper(x), torch.cat(outs, dim=-1), rtol=1e-5, atol=ATOL)


def test_mha_equals_wrapper_when_weights_are_stacked_and_out_proj_is_identity():
    torch.manual_seed(2)
    wrapper = MultiHeadAttentionWrapper(6, 2, 8, 0.0, num_heads=3)
    mha = MultiHeadAttention(6, 6, 8, 0.0, num_heads=3)
    with torch.no_grad():
        for name in ("W_query", "W_key", "W_value"):
            stacked = torch.cat([getattr(h, name).weight for h in wrapper.heads], dim=0)
            getattr(mha, name).weight.copy_(stacked)
        mha.out_proj.weight.copy_(torch.eye(6))
        mha.out_proj.bias.zero_()
    x = torch.randn(2, 8, 6)
    torch.testing.assert_close(mha(x), wrapper(x), rtol=1e-5, atol=ATOL)


# --- nn.MultiheadAttention as oracle ---------------------------------------------------------


@pytest.mark.parametrize("qkv_bias", [False, True])
def test_to_torch_mha_causal_outputs_and_weights_match(qkv_bias):
    torch.manual_seed(3)
    ours = MultiHeadAttention(16, 16, 10, 0.0, num_heads=4, qkv_bias=qkv_bias).eval()
    theirs = to_torch_mha(ours).eval()
    x = torch.randn(3, 10, 16)
    out, weights = ours(x, return_weights=True)
    ref, ref_weights = torch_call(theirs, x, keep=causal_mask(10))
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=ATOL)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-5, atol=ATOL)
    assert weights.shape == (3, 4, 10, 10)


def test_load_torch_mha_no_mask_matches():
    torch.manual_seed(4)
    theirs = nn.MultiheadAttention(16, 2, batch_first=True).eval()
    with torch.no_grad():
        theirs.in_proj_bias.normal_()  # torch initialises biases to 0; make the copy visible
        theirs.out_proj.bias.normal_()
    ours = load_torch_mha(
        MultiHeadAttention(16, 16, 12, 0.0, 2, qkv_bias=True, causal=False), theirs
    )
    x = torch.randn(2, 12, 16)
    out, weights = ours(x, return_weights=True)
    ref, ref_weights = torch_call(theirs, x)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=ATOL)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-5, atol=ATOL)


@pytest.mark.parametrize("causal", [False, True])
def test_key_padding_mask_matches_torch(causal):
    torch.manual_seed(6)
    ours = MultiHeadAttention(12, 12, 9, 0.0, num_heads=3, qkv_bias=True, causal=causal).eval()
    theirs = to_torch_mha(ours).eval()
    x = torch.randn(3, 9, 12)
    lengths = torch.tensor([9, 5, 2])
    pad = padding_mask(lengths, 9)  # (B, 1, 1, S)
    out, weights = ours(x, mask=pad, return_weights=True)
    keep = causal_mask(9) if causal else None
    ref, ref_weights = torch_call(theirs, x, keep=keep, key_padding=pad[:, 0, 0, :])
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=ATOL)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-5, atol=ATOL)
    assert (weights[1, ..., 5:] == 0).all() and (weights[2, ..., 2:] == 0).all()


def test_cross_attention_with_different_lengths_matches_torch():
    torch.manual_seed(7)
    ours = MultiHeadAttention(8, 8, 16, 0.0, num_heads=2, qkv_bias=True).eval()  # causal=True
    theirs = to_torch_mha(ours).eval()
    x, memory = torch.randn(2, 3, 8), torch.randn(2, 7, 8)
    pad = padding_mask(torch.tensor([7, 4]), 7)
    out, weights = ours(x, context=memory, mask=pad, return_weights=True)
    ref, ref_weights = torch_call(theirs, x, context=memory, key_padding=pad[:, 0, 0, :])
    assert out.shape == (2, 3, 8) and weights.shape == (2, 2, 3, 7)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=ATOL)
    torch.testing.assert_close(weights, ref_weights, rtol=1e-5, atol=ATOL)


def test_averaged_weights_are_the_mean_of_per_head_weights():
    torch.manual_seed(8)
    ours = MultiHeadAttention(8, 8, 6, 0.0, num_heads=4).eval()
    theirs = to_torch_mha(ours).eval()
    x = torch.randn(2, 6, 8)
    _, per_head = ours(x, return_weights=True)
    _, averaged = torch_call(theirs, x, keep=causal_mask(6), average=True)
    assert averaged.shape == (2, 6, 6)
    torch.testing.assert_close(per_head.mean(dim=1), averaged, rtol=1e-5, atol=ATOL)
    torch.testing.assert_close(per_head.sum(-1), torch.ones(2, 4, 6))
    assert (per_head.masked_select(~causal_mask(6)) == 0).all()


def test_gradients_match_torch():
    torch.manual_seed(9)
    ours = MultiHeadAttention(8, 8, 5, 0.0, num_heads=2, qkv_bias=True)
    theirs = to_torch_mha(ours)
    x = torch.randn(2, 5, 8)
    ours(x).pow(2).sum().backward()
    torch_call(theirs, x, keep=causal_mask(5))[0].pow(2).sum().backward()
    w_grads = torch.cat(
        [ours.W_query.weight.grad, ours.W_key.weight.grad, ours.W_value.weight.grad]
    )
    torch.testing.assert_close(w_grads, theirs.in_proj_weight.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(ours.out_proj.weight.grad, theirs.out_proj.weight.grad)


def test_fully_blocked_query_row_gives_zero_weights_not_nan():
    torch.manual_seed(10)
    ours = MultiHeadAttention(4, 4, 4, 0.0, num_heads=2, causal=False)
    keep = torch.ones(1, 1, 4, 4, dtype=torch.bool)
    keep[..., 2, :] = False  # query 2 may see nothing
    out, weights = ours(torch.randn(1, 4, 4), mask=keep, return_weights=True)
    assert not torch.isnan(out).any()
    assert (weights[0, :, 2] == 0).all()
    torch.testing.assert_close(out[0, 2], ours.out_proj.bias)  # zero context -> bias only


def test_dropout_only_in_training():
    torch.manual_seed(11)
    ours = MultiHeadAttention(8, 8, 6, 0.5, num_heads=2)
    x = torch.randn(2, 6, 8)
    ours.eval()
    out_eval, w_eval = ours(x, return_weights=True)
    torch.testing.assert_close(ours(x), out_eval, rtol=0, atol=0)
    ours.train()
    _, w_train = ours(x, return_weights=True)
    allowed = causal_mask(6).expand_as(w_train)
    dropped = allowed & (w_train == 0)
    assert dropped.any() and (~dropped & allowed).any()
    kept = ~dropped & allowed
    torch.testing.assert_close(w_train[kept], 2.0 * w_eval[kept])  # survivors scaled by 1/(1-p)


def test_sequence_longer_than_context_length_raises():
    with pytest.raises(ValueError):
        MultiHeadAttention(4, 4, 3, 0.0, 2)(torch.randn(1, 5, 4))


def test_context_length_none_builds_causal_mask_for_any_length():
    torch.manual_seed(12)
    a = MultiHeadAttention(4, 4, None, 0.0, 2).eval()
    b = MultiHeadAttention(4, 4, 50, 0.0, 2).eval()
    b.load_state_dict(a.state_dict())
    x = torch.randn(1, 20, 4)
    torch.testing.assert_close(a(x), b(x), rtol=0, atol=0)


def test_causal_buffer_stays_out_of_state_dict():
    mha = MultiHeadAttention(4, 4, 3, 0.0, 2)
    assert "mask" in dict(mha.named_buffers()) and "mask" not in mha.state_dict()
    state = dict(mha.state_dict(), mask=torch.ones(3, 3).triu(1))  # 002's float "1 = blocked"
    with pytest.raises(RuntimeError):
        mha.load_state_dict(state)  # refused loudly instead of inverting the mask silently


def test_weight_copy_errors():
    ours = MultiHeadAttention(6, 4, 3, 0.0, 2)
    with pytest.raises(ValueError):
        to_torch_mha(ours)  # d_in != d_out
    theirs = nn.MultiheadAttention(4, 2, batch_first=True)
    with torch.no_grad():
        theirs.in_proj_bias.fill_(1.0)
    with pytest.raises(ValueError):
        load_torch_mha(MultiHeadAttention(4, 4, 3, 0.0, 2, qkv_bias=False), theirs)


# --- parameter counts ---------------------------------------------------------------------------


@pytest.mark.parametrize("d, h", [(8, 2), (64, 4), (96, 12)])
def test_parameter_count_formula(d, h):
    assert mha_parameter_count(d) == 4 * d * d + 4 * d
    assert mha_parameter_count(d, bias=False) == 4 * d * d
    ours = MultiHeadAttention(d, d, 16, 0.0, h, qkv_bias=True)
    assert count_parameters(ours) == mha_parameter_count(d)
    assert count_parameters(nn.MultiheadAttention(d, h)) == mha_parameter_count(d)
    # without qkv biases only out_proj keeps its bias
    assert count_parameters(MultiHeadAttention(d, d, 16, 0.0, h)) == 4 * d * d + d


def test_gpt2_small_attention_module_exercise_3_3():
    mha = MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12)
    assert mha.head_dim == 64
    assert count_parameters(mha) == 2_360_064  # 3 * 768^2 (q, k, v) + 768^2 + 768 (out_proj)
    assert count_parameters(mha) == 3 * 768 * 768 + 768 * 768 + 768
    gpt2 = MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12, qkv_bias=True)  # GPT-2 has biases
    assert count_parameters(gpt2) == 2_362_368 == mha_parameter_count(768)
    assert count_parameters(MultiHeadAttention(768, 768, 1024, 0.0, num_heads=1)) == 2_360_064
    assert mha.mask.shape == (1024, 1024) and mha.mask.dtype == torch.bool  # a buffer, not counted
    assert "mask" not in dict(mha.named_parameters())


def test_count_parameters_skips_frozen():
    mha = MultiHeadAttention(8, 8, 4, 0.0, 2)
    mha.out_proj.requires_grad_(False)
    assert count_parameters(mha) == 3 * 64


# --- devices ---------------------------------------------------------------------------------


def test_device_matches_torch(device):
    torch.manual_seed(13)
    ours = MultiHeadAttention(8, 8, 6, 0.0, 2, qkv_bias=True).to(device).eval()
    theirs = to_torch_mha(ours).eval()
    assert theirs.in_proj_weight.device.type == device.type
    x = torch.randn(2, 6, 8, device=device)
    pad = padding_mask(torch.tensor([6, 3], device=device), 6)
    out = ours(x, mask=pad)
    assert out.device.type == device.type and ours.mask.device.type == device.type
    ref, _ = torch_call(theirs, x, keep=causal_mask(6, device=device), key_padding=pad[:, 0, 0])
    torch.testing.assert_close(out, ref, rtol=1e-4, atol=1e-5)
    wrapper = MultiHeadAttentionWrapper(8, 2, 6, 0.0, 2).to(device)
    assert wrapper(x).device.type == device.type


def test_meta_device_shapes():
    with torch.device("meta"):
        mha = MultiHeadAttention(16, 16, 8, 0.1, num_heads=4, qkv_bias=True)
        x, memory = torch.empty(2, 8, 16), torch.empty(2, 5, 16)
    out, weights = mha(x, return_weights=True)
    assert out.is_meta and out.shape == (2, 8, 16) and weights.shape == (2, 4, 8, 8)
    out, weights = mha(x[:, :3], context=memory, return_weights=True)
    assert out.shape == (2, 3, 16) and weights.shape == (2, 4, 3, 5)
    assert split_heads(x, 4).is_meta and merge_heads(split_heads(x, 4)).shape == (2, 8, 16)


# --- converting nn.MultiheadAttention's state and masks -----------------------------------------


@pytest.mark.parametrize("bias", [True, False])
def test_from_torch_mha_state_loads_strictly_and_matches_torch(bias):
    torch.manual_seed(14)
    theirs = nn.MultiheadAttention(12, 3, bias=bias, batch_first=True).eval()
    if bias:
        with torch.no_grad():
            theirs.in_proj_bias.normal_()
            theirs.out_proj.bias.normal_()
    ours = MultiHeadAttention(12, 12, 8, 0.0, 3, qkv_bias=bias, causal=False).eval()
    ours.load_state_dict(from_torch_mha_state(theirs.state_dict()), strict=True)
    x, memory = torch.randn(2, 5, 12), torch.randn(2, 8, 12)
    blocked = torch.rand(5, 8) < 0.3
    blocked[:, 0] = False  # every query keeps a key (torch would give NaN otherwise)
    pad = torch.tensor([[False] * 8, [False] * 6 + [True] * 2])
    keep = keep_mask_from_torch(blocked, pad)
    assert keep.shape == (2, 1, 5, 8) and keep.dtype == torch.bool
    ref, _ = theirs(x, memory, memory, attn_mask=blocked, key_padding_mask=pad)
    torch.testing.assert_close(ours(x, context=memory, mask=keep), ref, rtol=1e-5, atol=ATOL)


def test_keep_mask_from_torch_shapes_and_inversion():
    blocked = ~causal_mask(4)
    assert torch.equal(keep_mask_from_torch(blocked), causal_mask(4))
    pad = torch.tensor([[False, False, True, True]])
    expected = padding_mask(torch.tensor([2]), 4)
    assert torch.equal(keep_mask_from_torch(key_padding_mask=pad), expected)
    assert keep_mask_from_torch() is None
