"""Plausible student mistakes for assignment ``attention``
(graded by tests/grader/test_mistakes.py)."""

ASSIGNMENT = "attention"
SIMPLE, SDPA, MASK = "test_simple_self_attention", "test_sdpa", "test_sdpa_mask"
V2V1 = "test_v2_to_v1"

MISTAKES = [
    # ------------------------------------------------------------------ 1. simple_self_attention
    {
        "name": "simple_softmax_over_queries",
        "kind": "logic",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    scores = x @ x.transpose(-2, -1)
    weights = torch.softmax(scores, dim=-2)
    return weights @ x, weights
""",
        "fails": [SIMPLE],
        "says": "쿼리 축(dim=-2)",
    },
    {
        "name": "simple_scaled_by_sqrt_d",
        "kind": "logic",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    scores = x @ x.transpose(-2, -1) / math.sqrt(x.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights
""",
        "fails": [SIMPLE],
        "says": "1/√d 스케일링이 없습니다",
    },
    {
        "name": "simple_dot_T",
        "kind": "logic",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    scores = x @ x.T
    weights = torch.softmax(scores, dim=-1)
    return weights @ x, weights
""",
        "fails": [SIMPLE],
        "says": ".T 는 모든 차원의 순서를 뒤집습니다",
    },
    {
        "name": "simple_naive_exp",
        "kind": "constant",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    scores = x @ x.transpose(-2, -1)
    e = torch.exp(scores)
    weights = e / e.sum(dim=-1, keepdim=True)
    return weights @ x, weights
""",
        "fails": [SIMPLE],
        "says": "최댓값을 빼지 않고 exp",
    },
    {
        "name": "simple_context_only",
        "kind": "logic",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1)
    return weights @ x
""",
        "fails": [SIMPLE],
        "says": "tuple",
    },
    {
        "name": "simple_uses_torch_sdpa",
        "kind": "forbidden",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    weights = torch.softmax(x @ x.transpose(-2, -1), dim=-1)
    return F.scaled_dot_product_attention(x, x, x, scale=1.0), weights
""",
        "fails": [SIMPLE],
        "says": "F.scaled_dot_product_attention",
    },
    # ------------------------------------------------------------------ 2. sdpa (no mask)
    {
        "name": "sdpa_no_scale",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "√d_k 로 나누지 않았습니다",
    },
    {
        "name": "sdpa_scale_by_d_k",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / q.shape[-1]
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "√d_k 가 아니라 d_k 로",
    },
    {
        "name": "sdpa_scale_by_d_v",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.transpose(-2, -1) / math.sqrt(v.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "d_v 의 제곱근으로",
    },
    {
        "name": "sdpa_k_dot_T",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = q @ k.T / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": ".transpose(-2, -1) (또는 .mT)",
    },
    {
        "name": "sdpa_returns_scores",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, scores
""",
        "fails": [SDPA, MASK],
        "says": "소프트맥스 전의 점수를 돌려주었습니다",
    },
    {
        "name": "sdpa_naive_exp",
        "kind": "constant",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    e = torch.exp(scores)
    if mask is not None:
        e = e * mask
    total = e.sum(dim=-1, keepdim=True)
    weights = torch.where(total > 0, e / total, torch.zeros_like(e))
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "최댓값을 빼지 않고 exp",
    },
    {
        "name": "sdpa_upcast_to_float32",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    q, k, v = q.float(), k.float(), v.float()
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "dtype",
    },
    {
        "name": "sdpa_scale_query_in_place",
        "kind": "in-place",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "in-place",
    },
    {
        "name": "sdpa_default_mask_on_cpu",
        "kind": "device",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    if mask is None:
        mask = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool)
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA],
        "says": "장치",
    },
    {
        "name": "sdpa_uses_torch_sdpa",
        "kind": "forbidden",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask), weights
""",
        "fails": [SDPA, MASK],
        "says": "쓸 수 없습니다",
    },
    # ------------------------------------------------------------------ 2. sdpa with a mask
    {
        "name": "mask_fill_minus_1e9",
        "kind": "constant",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "고정된 음수",
    },
    {
        "name": "mask_fill_minus_1e4",
        "kind": "constant",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e4)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "막히지 않은 키의 가중치까지 0",
    },
    {
        "name": "mask_fill_neg_inf_nan_rows",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "-inf 로 채워서",
    },
    {
        "name": "mask_finfo_min_uniform_rows",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "균등 분포(1/S)",
    },
    {
        "name": "mask_true_means_blocked",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "True/False 를 거꾸로",
    },
    {
        "name": "mask_zeroed_after_softmax_no_renorm",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "다시 정규화하지 않았습니다",
    },
    {
        "name": "mask_zero_rows_on_cpu",
        "kind": "device",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        zeros = torch.zeros(weights.shape, dtype=weights.dtype)
        weights = torch.where(mask, weights, zeros)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "장치",
    },
    {
        "name": "mask_inverted_in_place",
        "kind": "in-place",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        blocked = mask.logical_not_()
        scores = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(blocked, 0.0)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "in-place",
    },
    # ------------------------------------------------------------------ 3. v2 -> v1
    {
        "name": "v2_to_v1_no_transpose",
        "kind": "logic",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    return {
        "W_query": state_dict["W_query.weight"].clone(),
        "W_key": state_dict["W_key.weight"].clone(),
        "W_value": state_dict["W_value.weight"].clone(),
    }
""",
        "fails": [V2V1],
        "says": "전치(.T)하지 않았습니다",
    },
    {
        "name": "v2_to_v1_keeps_weight_suffix",
        "kind": "logic",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    return {name: w.T for name, w in state_dict.items()}
""",
        "fails": [V2V1],
        "says": "'.weight'",
    },
    {
        "name": "v2_to_v1_swaps_key_and_value",
        "kind": "logic",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    return {
        "W_query": state_dict["W_query.weight"].T,
        "W_key": state_dict["W_value.weight"].T,
        "W_value": state_dict["W_key.weight"].T,
    }
""",
        "fails": [V2V1],
        "says": "W_value.weight 를 넣었습니다",
    },
    {
        "name": "v2_to_v1_to_float32",
        "kind": "logic",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    names = ("W_query", "W_key", "W_value")
    return {name: state_dict[name + ".weight"].T.float() for name in names}
""",
        "fails": [V2V1],
        "says": "float64",
    },
    {
        "name": "v2_to_v1_transpose_in_place",
        "kind": "in-place",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    names = ("W_query", "W_key", "W_value")
    return {name: state_dict[name + ".weight"].t_() for name in names}
""",
        "fails": [V2V1],
        "says": "in-place",
    },
    {
        "name": "v2_to_v1_new_tensor_on_cpu",
        "kind": "device",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    out = {}
    for name in ("W_query", "W_key", "W_value"):
        w = state_dict[name + ".weight"]
        out[name] = torch.zeros(w.shape[1], w.shape[0], dtype=w.dtype)
        out[name] += w.T
    return out
""",
        "fails": [V2V1],
        "says": "장치",
    },
]

SDPA_TAIL = """    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
"""

MISTAKES += [
    {
        "name": "simple_weights_left_in_float32",
        "kind": "logic",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    xf = x.float()
    weights = torch.softmax(xf @ xf.transpose(-2, -1), dim=-1)
    return (weights @ xf).to(x.dtype), weights
""",
        "fails": [SIMPLE],
        "says": "float32 로 바꾸어 계산했습니다",
    },
    {
        "name": "sdpa_bmm_only_3d",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return torch.bmm(weights, v), weights
""",
        "fails": [SDPA, MASK],
        "says": "torch.bmm 은 3차원",
    },
    {
        "name": "sdpa_softmax_over_queries",
        "kind": "logic",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-2)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v, weights
""",
        "fails": [SDPA, MASK],
        "says": "쿼리 축(dim=-2)",
    },
    {
        "name": "mask_fill_float32_min_for_half",
        "kind": "constant",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(torch.float32).min)
"""
        + SDPA_TAIL,
        "fails": [MASK],
        "says": "막히지 않은 키의 가중치까지 0",
    },
    {
        "name": "mask_zeroing_mask_moved_to_cpu",
        "kind": "device",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask.to(torch.device("cpu"), weights.dtype)
    return weights @ v, weights
""",
        "fails": [MASK],
        "says": "장치",
    },
]

CORRECT = [
    {
        "name": "ok_simple_einsum",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    scores = torch.einsum("...td,...sd->...ts", x, x)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("...ts,...sd->...td", weights, x), weights
""",
        "why": "einsum for both products",
    },
    {
        "name": "ok_sdpa_scaled_query_and_mask_product",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-2, -1)
    if mask is not None:
        scores = torch.where(mask, scores, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights @ v, weights
""",
        "why": "query scaled first, torch.where fill, blocked weights zeroed by multiplying "
        "with the bool mask (keeps the dtype)",
    },
    {
        "name": "ok_sdpa_minus_inf_then_nan_to_num",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = torch.matmul(q / math.sqrt(q.shape[-1]), k.transpose(-2, -1))
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return torch.matmul(weights, v), weights
""",
        "why": "-inf fill; only a fully blocked row becomes NaN and nan_to_num makes it 0",
    },
    {
        "name": "ok_sdpa_float32_inside_for_half",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    dtype = q.dtype
    qf, kf, vf = (t.to(torch.promote_types(dtype, torch.float32)) for t in (q, k, v))
    scores = qf @ kf.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    weights = weights.to(dtype)
    return weights @ v, weights
""",
        "why": "scores and softmax in at least float32, weights cast back, output = weights @ v",
    },
    {
        "name": "ok_v2_to_v1_contiguous_copy",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    return {
        key.removesuffix(".weight"): w.t().contiguous()
        for key, w in state_dict.items()
        if key.endswith(".weight")
    }
""",
        "why": "iterates over the items; .t().contiguous() makes the transposed copy",
    },
    {
        "name": "ok_v2_to_v1_transposed_views",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    return {name: state_dict[name + ".weight"].mT for name in ("W_query", "W_key", "W_value")}
""",
        "why": "transposed views: a new dict, nothing modified; load_state_dict copies the values",
    },
]

OPEN = []

# grader gaps closed since (the spec names float16's overflow of q k^T for a large d_k, and a
# hidden case grades it): graded now
MISTAKES += [
    {
        "name": "sdpa_scale_after_product_half_overflow",
        "kind": "constant",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
"""
        + SDPA_TAIL,
        "fails": [SDPA],
        "says": "q @ kᵀ 를 먼저 계산한 뒤",
    },
]

# grader gaps closed since: each now loses exactly its fails
MISTAKES += [
    {
        "name": "v2_to_v1_via_numpy",
        "kind": "device",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    names = ("W_query", "W_key", "W_value")
    return {n: torch.from_numpy(state_dict[n + ".weight"].cpu().numpy().T.copy()) for n in names}
""",
        "fails": [V2V1],
        "says": "장치",
    },
]

# grader gaps closed since: each now loses exactly its fails
MISTAKES += [
    {
        "name": "v2_to_v1_renames_input_dict",
        "kind": "in-place",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    for name in ("W_query", "W_key", "W_value"):
        state_dict[name] = state_dict.pop(name + ".weight").T.clone()
    return state_dict
""",
        "fails": [V2V1],
        "says": "v2_to_v1_state_dict",
    },
]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_simple_attention_bmm_manual_softmax",
        "cell": "simple_self_attention",
        "source": (
            "def simple_self_attention(x):\n"
            "    '''Flatten the batch dims, bmm, hand-written max-shifted softmax, "
            "reshape back.'''\n"
            "    T, d = x.shape[-2], x.shape[-1]\n"
            "    lead = x.shape[:-2]\n"
            "    flat = x.reshape(-1, T, d)\n"
            "    scores = torch.bmm(flat, flat.transpose(1, 2))\n"
            "    e = torch.exp(scores - scores.amax(dim=-1, keepdim=True))\n"
            "    weights = e / e.sum(dim=-1, keepdim=True)\n"
            "    context = torch.bmm(weights, flat)\n"
            "    return context.reshape(*lead, T, d), weights.reshape(*lead, T, T)\n"
        ),
        "why": (
            "Batched bmm on a (N, T, d) view gives the same X X^T per sequence; the softmax is "
            "the stable exp(s - max)/sum form."
        ),
    },
    {
        "name": "ok_simple_attention_float64_einsum",
        "cell": "simple_self_attention",
        "source": """def simple_self_attention(x):
    '''Scores, weights and context in float64 via einsum, cast back to x.dtype.'''
    h = x.to(torch.float64)
    scores = torch.einsum('...id,...jd->...ij', h, h)
    weights = torch.softmax(scores, dim=-1)
    context = torch.einsum('...ij,...jd->...id', weights, h)
    return context.to(x.dtype), weights.to(x.dtype)
""",
        "why": (
            "einsum('...id,...jd->...ij') is X X^T over any batch dims; float64 keeps the scores "
            "finite even near the float32 range, and both outputs are cast back."
        ),
    },
    {
        "name": "ok_sdpa_query_row_loop",
        "cell": "sdpa",
        "source": """def scaled_dot_product_attention(q, k, v, mask=None):
    '''Loop over query positions; each row gets its own masked softmax.'''
    T = q.shape[-2]
    work = torch.promote_types(q.dtype, torch.float32)
    scores = (q.to(work) @ k.to(work).transpose(-2, -1)) / math.sqrt(q.shape[-1])
    if mask is not None:
        keep = torch.broadcast_to(mask, scores.shape)
    rows = []
    for t in range(T):
        s = scores[..., t, :]
        if mask is None:
            rows.append(torch.softmax(s, dim=-1))
            continue
        kt = keep[..., t, :]
        filled = torch.where(kt, s, torch.full_like(s, torch.finfo(work).min))
        p = torch.softmax(filled, dim=-1)
        rows.append(torch.where(kt, p, torch.zeros_like(p)))
    if rows:
        weights = torch.stack(rows, dim=-2).to(q.dtype)
    else:
        weights = scores.to(q.dtype)
    return weights @ v, weights
""",
        "why": (
            "Each query row is independent in softmax attention, so computing the (masked) "
            "softmax row by row in float32 and stacking along -2 gives the same weights; output ="
            " weights @ v."
        ),
    },
    {
        "name": "ok_v2_to_v1_loop_removesuffix",
        "cell": "v2_to_v1",
        "source": """def v2_to_v1_state_dict(state_dict):
    '''Loop over the items, strip .weight, store a transposed copy.'''
    out = {}
    for key, weight in state_dict.items():
        name = key.removesuffix('.weight')
        out[name] = weight.detach().t().clone()
    return out
""",
        "why": (
            "Each v2 key 'W_*.weight' (d_out, d_in) becomes 'W_*' holding the transposed (d_in, "
            "d_out) copy; x @ W.T == x @ (transposed W)."
        ),
    },
]
