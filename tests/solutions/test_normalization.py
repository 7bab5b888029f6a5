"""LayerNorm, RMSNorm, feed-forward networks and the Transformer block against PyTorch's modules."""

import math

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from solutions.masking import causal_mask, padding_mask
from solutions.normalization import (
    FeedForward,
    LayerNorm,
    RMSNorm,
    SwiGLU,
    TransformerBlock,
    gradient_norms_per_layer,
    load_torch_encoder_layer,
)

# --- 003's worked examples ----------------------------------------------------------------------

X_003 = torch.tensor([[1.0, 2.0, 3.0, 4.0], [2.0, 4.0, 6.0, 8.0]], dtype=torch.float64)


def test_layernorm_003_worked_example_exact_values():
    y = LayerNorm(4).double()(X_003)
    exact = [(v - 2.5) / math.sqrt(1.25 + 1e-5) for v in (1.0, 2.0, 3.0, 4.0)]
    torch.testing.assert_close(y[0], torch.tensor(exact, dtype=torch.float64))
    # -1.3416, -0.4472, 0.4472, 1.3416 (003 rounds to -1.34, -0.45, 0.45, 1.34)
    assert [round(v, 4) for v in y[0].tolist()] == [-1.3416, -0.4472, 0.4472, 1.3416]
    # token 2 = 2 * token 1: mean 5, variance 5, same normalized row (scale invariance)
    torch.testing.assert_close(y[1], y[0], rtol=0, atol=1e-5)


def test_rmsnorm_003_worked_example_exact_values():
    y = RMSNorm(4, eps=0.0).double()(X_003[:1])[0]
    rms = math.sqrt(7.5)
    torch.testing.assert_close(y, torch.tensor([1, 2, 3, 4], dtype=torch.float64) / rms)
    # 0.3651, 0.7303, 1.0954, 1.4606: to three decimals the last is 1.461 (003 prints 1.460)
    assert [round(v, 4) for v in y.tolist()] == [0.3651, 0.7303, 1.0954, 1.4606]
    assert round(y[3].item(), 3) == 1.461


# --- LayerNorm / RMSNorm vs PyTorch ---------------------------------------------------------------


@pytest.mark.parametrize("eps", [1e-5, 1e-2])
def test_layernorm_matches_nn_layernorm(eps):
    torch.manual_seed(0)
    ref = nn.LayerNorm(16, eps=eps)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    ours = LayerNorm(16, eps=eps)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(3, 5, 16) * 4 + 2
    torch.testing.assert_close(ours(x), ref(x))


def test_layernorm_gradients_match():
    torch.manual_seed(1)
    ref, ours = nn.LayerNorm(8), LayerNorm(8)
    x = torch.randn(4, 8, requires_grad=True)
    g = torch.randn(4, 8)
    (gx_ref,) = torch.autograd.grad(ref(x), x, g)
    (gx_ours,) = torch.autograd.grad(ours(x), x, g)
    torch.testing.assert_close(gx_ours, gx_ref)


def test_layernorm_without_affine_and_statistics():
    ours, ref = LayerNorm(6, elementwise_affine=False), nn.LayerNorm(6, elementwise_affine=False)
    assert len(list(ours.parameters())) == 0
    x = torch.randn(10, 6) * 3 + 5
    y = ours(x)
    torch.testing.assert_close(y, ref(x))
    torch.testing.assert_close(y.mean(-1), torch.zeros(10), rtol=0, atol=1e-5)
    torch.testing.assert_close(y.var(-1, unbiased=False), torch.ones(10), rtol=0, atol=1e-3)


def test_layernorm_uses_biased_variance():
    x = torch.tensor([[1.0, 3.0]])  # mean 2, biased var 1, unbiased var 2
    torch.testing.assert_close(LayerNorm(2, eps=0.0)(x), torch.tensor([[-1.0, 1.0]]))


@pytest.mark.parametrize("eps", [1e-6, 1e-3])
def test_rmsnorm_matches_nn_rmsnorm(eps):
    torch.manual_seed(2)
    ref = nn.RMSNorm(16, eps=eps)
    with torch.no_grad():
        ref.weight.normal_()
    ours = RMSNorm(16, eps=eps)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(3, 5, 16) * 0.1 + 0.3
    torch.testing.assert_close(ours(x), ref(x))
    assert len(list(ours.parameters())) == 1  # weight only, no bias


def test_rmsnorm_differs_from_layernorm_unless_mean_is_zero():
    x = torch.randn(4, 8)
    assert not torch.allclose(RMSNorm(8, eps=1e-6)(x + 1), LayerNorm(8, eps=1e-6)(x + 1), atol=1e-2)
    centred = x - x.mean(-1, keepdim=True)
    torch.testing.assert_close(RMSNorm(8, eps=1e-6)(centred), LayerNorm(8, eps=1e-6)(centred))


def test_norms_in_bfloat16_match_torch():
    torch.manual_seed(3)
    x = (torch.randn(4, 64) * 10 + 3).to(torch.bfloat16)
    ln, ln_ref = LayerNorm(64).to(torch.bfloat16), nn.LayerNorm(64).to(torch.bfloat16)
    rms, rms_ref = RMSNorm(64).to(torch.bfloat16), nn.RMSNorm(64, eps=1e-6).to(torch.bfloat16)
    assert ln(x).dtype == torch.bfloat16 and rms(x).dtype == torch.bfloat16
    torch.testing.assert_close(ln(x).float(), ln_ref(x).float(), rtol=0, atol=2e-2)
    torch.testing.assert_close(rms(x).float(), rms_ref(x).float(), rtol=0, atol=2e-2)


# --- feed-forward networks --------------------------------------------------------------------


def test_feedforward_exact_gelu_formula():
    torch.manual_seed(4)
    ffn = FeedForward(8, 32)
    x = torch.randn(2, 3, 8)
    h = x @ ffn.linear1.weight.T + ffn.linear1.bias
    gelu = 0.5 * h * (1 + torch.erf(h / math.sqrt(2)))  # exact GELU
    expected = gelu @ ffn.linear2.weight.T + ffn.linear2.bias
    torch.testing.assert_close(ffn(x), expected)
    tanh = FeedForward(8, 32, activation="gelu_tanh")
    tanh.load_state_dict(ffn.state_dict())
    torch.testing.assert_close(tanh(x), ffn(x), rtol=0, atol=1e-2)  # close but not equal
    assert not torch.equal(tanh(x), ffn(x))
    relu = FeedForward(8, 32, activation="relu")
    relu.load_state_dict(ffn.state_dict())
    torch.testing.assert_close(relu(x), ffn.linear2(F.relu(ffn.linear1(x))))


def test_feedforward_parameter_count():
    ffn = FeedForward(64, 256)
    assert sum(p.numel() for p in ffn.parameters()) == 2 * 64 * 256 + 256 + 64


def test_swiglu_matches_direct_formula():
    torch.manual_seed(5)
    ffn = SwiGLU(8, 24)
    x = torch.randn(2, 5, 8)
    wg, wu, wd = ffn.w_gate.weight, ffn.w_up.weight, ffn.w_down.weight
    gate = x @ wg.T
    expected = ((gate * torch.sigmoid(gate)) * (x @ wu.T)) @ wd.T  # silu(a) = a * sigmoid(a)
    torch.testing.assert_close(ffn(x), expected)
    torch.testing.assert_close(ffn(x), (F.silu(x @ wg.T) * (x @ wu.T)) @ wd.T)
    assert sum(p.numel() for p in ffn.parameters()) == 3 * 8 * 24
    assert sum(p.numel() for p in SwiGLU(8, 24, bias=True).parameters()) == 3 * 8 * 24 + 2 * 24 + 8


# --- Transformer block vs nn.TransformerEncoderLayer -------------------------------------------


def make_pair(norm_first, causal=False, d=16, h=4, d_ff=40, seed=6):
    torch.manual_seed(seed)
    ref = nn.TransformerEncoderLayer(
        d, h, d_ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=norm_first
    )
    with torch.no_grad():  # nonzero biases and norm parameters, so every copy matters
        for p in ref.parameters():
            if p.dim() == 1:
                p.normal_(0, 0.5)
    ours = TransformerBlock(d, h, d_ff, norm_first=norm_first, causal=causal)
    return load_torch_encoder_layer(ours, ref), ref


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("train", [False, True])
def test_block_matches_encoder_layer(norm_first, train):
    ours, ref = make_pair(norm_first)
    ours.train(train)
    ref.train(train)  # eval may take PyTorch's fused fast path; train mode the plain path
    x = torch.randn(3, 7, 16)
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_block_with_src_mask_and_causal(norm_first):
    ours, ref = make_pair(norm_first, causal=True)
    ref.train()
    x = torch.randn(2, 6, 16)
    expected = ref(x, src_mask=~causal_mask(6))  # torch: True = blocked
    torch.testing.assert_close(ours(x), expected, rtol=1e-4, atol=1e-5)
    plain, _ = make_pair(norm_first, causal=False)
    torch.testing.assert_close(plain(x, mask=causal_mask(6)), expected, rtol=1e-4, atol=1e-5)
    band = torch.ones(6, 6, dtype=torch.bool).triu(-2)  # a non-causal keep-mask (T, T)
    torch.testing.assert_close(plain(x, mask=band), ref(x, src_mask=~band), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("norm_first", [True, False])
def test_block_with_key_padding(norm_first):
    ours, ref = make_pair(norm_first)
    ref.train()
    x = torch.randn(3, 5, 16)
    pad = padding_mask(torch.tensor([5, 3, 1]), 5)
    expected = ref(x, src_key_padding_mask=~pad[:, 0, 0])
    torch.testing.assert_close(ours(x, mask=pad), expected, rtol=1e-4, atol=1e-5)


def test_block_pre_vs_post_norm_structure():
    """Post-norm output rows are normalized (last op is norm2); pre-norm outputs are not."""
    torch.manual_seed(7)
    x = torch.randn(2, 5, 16) * 3
    post = TransformerBlock(16, 4, 32, norm_first=False)
    pre = TransformerBlock(16, 4, 32, norm_first=True)
    y_post = post(x)
    torch.testing.assert_close(y_post.mean(-1), torch.zeros(2, 5), rtol=0, atol=1e-5)
    assert pre(x).mean(-1).abs().max() > 1e-2


def test_gradient_norms_per_layer_match_autograd():
    torch.manual_seed(8)
    blocks = nn.ModuleList([TransformerBlock(8, 2, 16, norm_first=False) for _ in range(3)])
    x = torch.randn(2, 4, 8)
    norms = gradient_norms_per_layer(blocks, x)
    assert len(norms) == 3
    y = x
    for b in blocks:
        y = b(y)
    for b, n in zip(blocks, norms, strict=True):
        grads = torch.autograd.grad(y.pow(2).mean(), list(b.parameters()), retain_graph=True)
        assert n == pytest.approx(torch.cat([g.flatten() for g in grads]).norm().item(), rel=1e-5)
    # calling again clears old gradients instead of accumulating them
    assert gradient_norms_per_layer(blocks, x) == pytest.approx(norms, rel=1e-6)


# --- devices ------------------------------------------------------------------------------------


def test_modules_on_device(device):
    ours, ref = make_pair(norm_first=True, causal=True)
    ours, ref = ours.to(device).train(), ref.to(device).train()
    x = torch.randn(2, 5, 16, device=device)
    out = ours(x)
    assert out.device.type == device.type
    expected = ref(x, src_mask=~causal_mask(5, device=device))
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    for module in (LayerNorm(16), RMSNorm(16), FeedForward(16, 32), SwiGLU(16, 32)):
        assert module.to(device)(x).device.type == device.type


def test_meta_device_shapes():
    with torch.device("meta"):
        x = torch.empty(2, 5, 16)
        modules = [
            LayerNorm(16),
            RMSNorm(16),
            FeedForward(16, 64),
            SwiGLU(16, 48),
            TransformerBlock(16, 4, 64, norm_first=True, causal=True),
            TransformerBlock(16, 4, 64, norm_first=False),
        ]
        for module in modules:
            out = module(x)
            assert out.is_meta and out.shape == (2, 5, 16)


# --- the assignment's contract: trailing dims, dtypes, eps=None (autograder/checks) -------------


@pytest.mark.parametrize("shape", [(4, 6), [6]])
def test_layernorm_over_trailing_dims_matches_nn_layernorm(shape):
    torch.manual_seed(9)
    ref = nn.LayerNorm(shape, eps=1e-4)
    with torch.no_grad():
        ref.weight.normal_()
        ref.bias.normal_()
    ours = LayerNorm(shape, eps=1e-4)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 4, 6, requires_grad=True)
    g = torch.randn(2, 3, 4, 6)
    torch.testing.assert_close(ours(x), ref(x))
    got = torch.autograd.grad(ours(x), [x, ours.weight, ours.bias], g)
    want = torch.autograd.grad(ref(x), [x, ref.weight, ref.bias], g)
    torch.testing.assert_close(got, want)


@pytest.mark.filterwarnings("ignore:Mismatch dtype")
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_input_float32_parameters_computed_in_float32(dtype):
    """Half input, float32 parameters (a module that was not cast): output in the input dtype,
    equal to torch's modules run on x.float() and rounded once."""
    torch.manual_seed(10)
    x = (torch.randn(3, 5, 32) * 300).to(dtype)  # x^2 overflows float16
    ln_ref, rms_ref = nn.LayerNorm(32), nn.RMSNorm(32)
    with torch.no_grad():
        ln_ref.weight.normal_()
        ln_ref.bias.normal_()
        rms_ref.weight.normal_()
    ln, rms = LayerNorm(32), RMSNorm(32, eps=None)
    ln.load_state_dict(ln_ref.state_dict())
    rms.load_state_dict(rms_ref.state_dict())
    assert ln(x).dtype == dtype and rms(x).dtype == dtype
    torch.testing.assert_close(ln(x), ln_ref(x.float()).to(dtype))
    torch.testing.assert_close(rms(x), rms_ref(x), rtol=1e-3, atol=1e-3)  # torch allows mixing


def test_layernorm_large_common_offset_against_float64():
    torch.manual_seed(11)
    x = torch.randn(4, 6, 64) + 1e4
    exact = F.layer_norm(x.double(), (64,)).float()
    torch.testing.assert_close(LayerNorm(64)(x), exact, rtol=0, atol=5e-3)
    mean = x.mean(-1, keepdim=True)  # the one-pass formula E[x^2] - E[x]^2 breaks down here
    naive = (x - mean) / torch.sqrt((x * x).mean(-1, keepdim=True) - mean**2 + 1e-5)
    assert not torch.allclose(naive, exact, atol=0.1, equal_nan=False)


@pytest.mark.filterwarnings("ignore:Mismatch dtype")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_rmsnorm_eps_none_matches_nn_rmsnorm(dtype):
    """eps=None: torch uses finfo of the computation dtype (float32 for half inputs)."""
    torch.manual_seed(12)
    x = torch.randn(3, 16, dtype=torch.float64) * (1e-9 if dtype == torch.float64 else 1e-4)
    x = x.to(dtype)
    ref = nn.RMSNorm(16)
    ours = RMSNorm(16, eps=None)
    if dtype == torch.float64:
        ref, ours = ref.double(), ours.double()
    tol = {"rtol": 1e-3, "atol": 1e-3} if dtype == torch.float16 else {}
    torch.testing.assert_close(ours(x), ref(x), **tol)
    y = ours(x.float() if dtype == torch.float16 else x)
    assert not torch.allclose(y.double(), (x / x.pow(2).mean(-1, keepdim=True).sqrt()).double())


def test_rmsnorm_gradients_and_no_affine():
    torch.manual_seed(13)
    ref, ours = nn.RMSNorm((3, 8), eps=1e-3), RMSNorm((3, 8), eps=1e-3)
    with torch.no_grad():
        ref.weight.normal_()
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(2, 3, 8, requires_grad=True)
    g = torch.randn(2, 3, 8)
    got = torch.autograd.grad(ours(x), [x, ours.weight], g)
    torch.testing.assert_close(got, torch.autograd.grad(ref(x), [x, ref.weight], g))
    bare = RMSNorm(8, eps=1e-5, elementwise_affine=False)
    assert len(list(bare.parameters())) == 0
    torch.testing.assert_close(bare(x), nn.RMSNorm(8, 1e-5, elementwise_affine=False)(x))
