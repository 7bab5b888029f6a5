"""Plausible student mistakes for assignment ``efficient``
(graded by tests/grader/test_mistakes.py)."""

ASSIGNMENT = "efficient"
MISTAKES = [
    {
        "name": "window_off_by_one",
        "kind": "logic",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S, device=device).unsqueeze(-1)
    j = torch.arange(S, device=device)
    dist = i - j
    keep = (dist >= 0) & (dist <= window) if causal else dist.abs() <= window
    if len(global_tokens) > 0:
        g = torch.zeros(S, dtype=torch.bool, device=device)
        g[torch.tensor(list(global_tokens), device=device)] = True
        keep = keep | g[S - T :].unsqueeze(-1) | g
        if causal:
            keep = keep & (dist >= 0)
    return keep
""",
        "fails": ["test_sliding_window_mask"],
        "says": "창이 한 칸 넓습니다",
    },
    {
        "name": "window_mask_on_default_device",
        "kind": "device",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S).unsqueeze(-1)
    j = torch.arange(S)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    for g in global_tokens:
        keep[:, g] = True
        if g >= S - T:
            keep[g - (S - T)] = True
    if causal:
        keep = keep & (dist >= 0)
    return keep
""",
        "fails": ["test_sliding_window_mask"],
        "says": "장치",
    },
    {
        "name": "window_global_breaks_causality",
        "kind": "logic",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S, device=device).unsqueeze(-1)
    j = torch.arange(S, device=device)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    if len(global_tokens) > 0:
        g = torch.zeros(S, dtype=torch.bool, device=device)
        g[torch.tensor(list(global_tokens), device=device)] = True
        keep = keep | g[S - T :].unsqueeze(-1) | g
    return keep
""",
        "fails": ["test_sliding_window_mask"],
        "says": "인과적 규칙을 다시 적용하지 않았습니다",
    },
    {
        "name": "window_ignores_key_offset",
        "kind": "logic",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(T, device=device).unsqueeze(-1)
    j = torch.arange(S, device=device)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    if len(global_tokens) > 0:
        g = torch.zeros(S, dtype=torch.bool, device=device)
        g[torch.tensor(list(global_tokens), device=device)] = True
        keep = keep | g[:T].unsqueeze(-1) | g
        if causal:
            keep = keep & (dist >= 0)
    return keep
""",
        "fails": ["test_sliding_window_mask"],
        "says": "쿼리 위치를 0 부터 셌습니다",
    },
    {
        "name": "gqa_repeat_tiles_heads",
        "kind": "logic",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    h, h_kv = q.shape[-3], k.shape[-3]
    k = k.repeat(1, h // h_kv, 1, 1)
    v = v.repeat(1, h // h_kv, 1, 1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": ["test_grouped_query_attention"],
        "says": "repeat 로 통째로 반복했습니다",
    },
    {
        "name": "gqa_fill_minus_1e9",
        "kind": "constant",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    r = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(r, dim=-3)
    v = v.repeat_interleave(r, dim=-3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": ["test_grouped_query_attention"],
        "says": "고정된 음수(-1e4, -1e9 등)로 채웠습니다",
    },
    {
        "name": "gqa_blocked_rows_uniform",
        "kind": "logic",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    r = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(r, dim=-3)
    v = v.repeat_interleave(r, dim=-3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    return torch.softmax(scores, dim=-1) @ v
""",
        "fails": ["test_grouped_query_attention"],
        "says": "균등 분포(1/S)",
    },
    {
        "name": "gqa_uses_torch_sdpa",
        "kind": "forbidden",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    r = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(r, dim=-3)
    v = v.repeat_interleave(r, dim=-3)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    return torch.nan_to_num(out)
""",
        "fails": ["test_grouped_query_attention"],
        "says": "쓸 수 없습니다",
    },
    {
        "name": "gqa_no_scale",
        "kind": "logic",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    r = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(r, dim=-3)
    v = v.repeat_interleave(r, dim=-3)
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": ["test_grouped_query_attention"],
        "says": "√d_k 로 나누지 않았습니다",
    },
    {
        "name": "kv_scales_query_in_place",
        "kind": "in-place",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    if k_cache is not None:
        k_new = torch.cat([k_cache, k_new], dim=-2)
        v_new = torch.cat([v_cache, v_new], dim=-2)
    T, S = q_new.shape[-2], k_new.shape[-2]
    q_new /= math.sqrt(q_new.shape[-1])
    r = q_new.shape[-3] // k_new.shape[-3]
    k = k_new.repeat_interleave(r, dim=-3)
    v = v_new.repeat_interleave(r, dim=-3)
    scores = q_new @ k.transpose(-2, -1)
    i = torch.arange(T, device=q_new.device).unsqueeze(-1)
    j = torch.arange(S, device=q_new.device)
    scores = scores.masked_fill(j > i + (S - T), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v, k_new, v_new
""",
        "fails": ["test_kv_cached_attention"],
        "says": "제자리",
    },
    {
        "name": "kv_new_keys_before_cache",
        "kind": "logic",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    if k_cache is not None:
        k_new = torch.cat([k_new, k_cache], dim=-2)
        v_new = torch.cat([v_new, v_cache], dim=-2)
    T, S = q_new.shape[-2], k_new.shape[-2]
    i = torch.arange(T, device=q_new.device).unsqueeze(-1)
    j = torch.arange(S, device=q_new.device)
    out = grouped_query_attention(q_new, k_new, v_new, mask=j <= i + (S - T))
    return out, k_new, v_new
""",
        "fails": ["test_kv_cached_attention"],
        "says": "캐시 앞에 붙였습니다",
    },
    {
        "name": "kv_no_mask_for_chunks",
        "kind": "logic",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    # the newest token may look at everything in the cache, so no mask is needed
    if k_cache is not None:
        k_new = torch.cat([k_cache, k_new], dim=-2)
        v_new = torch.cat([v_cache, v_new], dim=-2)
    return grouped_query_attention(q_new, k_new, v_new), k_new, v_new
""",
        "fails": ["test_kv_cached_attention"],
        "says": "마스크 없이 계산했습니다",
    },
    {
        "name": "kv_causal_mask_top_left",
        "kind": "logic",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    if k_cache is not None:
        k_new = torch.cat([k_cache, k_new], dim=-2)
        v_new = torch.cat([v_cache, v_new], dim=-2)
    T, S = q_new.shape[-2], k_new.shape[-2]
    mask = torch.ones(T, S, dtype=torch.bool, device=q_new.device).tril()
    return grouped_query_attention(q_new, k_new, v_new, mask), k_new, v_new
""",
        "fails": ["test_kv_cached_attention"],
        "says": "왼쪽 위에 맞췄습니다",
    },
    {
        "name": "linear_relu_feature_map",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q, phi_k = F.relu(q) + 1, F.relu(k) + 1
    if causal:
        kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(phi_k, dim=-2)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)
    else:
        kv = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ kv
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
""",
        "fails": ["test_linear_attention"],
        "says": "relu(x) + 1 을 썼습니다",
    },
    {
        "name": "linear_eps_outside_denominator",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if causal:
        kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(phi_k, dim=-2)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)
    else:
        kv = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ kv
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / den + eps
""",
        "fails": ["test_linear_attention"],
        "says": "eps 를 분모가 아니라 결과에",
    },
    {
        "name": "linear_causal_ignored",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    kv = phi_k.transpose(-2, -1) @ v
    z = phi_k.sum(dim=-2, keepdim=True)
    return (phi_q @ kv) / ((phi_q * z).sum(dim=-1, keepdim=True) + eps)
""",
        "fails": ["test_linear_attention"],
        "says": "causal=True 를 무시하고",
    },
    {
        "name": "tiled_running_max_starts_at_minus_1e9",
        "kind": "constant",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        i = torch.arange(T, device=q.device).unsqueeze(-1)
        j = torch.arange(S, device=q.device)
        keep = (j <= i + (S - T)) if keep is None else keep & (j <= i + (S - T))
    m = torch.full((*q.shape[:-1], 1), -1e9, dtype=q.dtype, device=q.device)
    l = torch.zeros_like(m)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale
        if keep is not None:
            scores = scores.masked_fill(~keep[..., s0:s1], float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        alpha = torch.exp(m - m_new)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        o = o * alpha + p @ v[..., s0:s1, :]
        m = m_new
    return torch.where(l > 0, o / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(o))
""",
        "fails": ["test_tiled_attention"],
        "says": "러닝 최댓값을 -1e9 에서 시작했습니다",
    },
    {
        "name": "tiled_nan_on_fully_masked_tile",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        i = torch.arange(T, device=q.device).unsqueeze(-1)
        j = torch.arange(S, device=q.device)
        keep = (j <= i + (S - T)) if keep is None else keep & (j <= i + (S - T))
    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
    l = torch.zeros_like(m)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale
        if keep is not None:
            scores = scores.masked_fill(~keep[..., s0:s1], float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        p = torch.exp(scores - m_new)
        alpha = torch.exp(m - m_new)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        o = o * alpha + p @ v[..., s0:s1, :]
        m = m_new
    return o / l
""",
        "fails": ["test_tiled_attention"],
        "says": "exp(-inf - (-inf))",
    },
    {
        "name": "tiled_forgets_rescaling",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        i = torch.arange(T, device=q.device).unsqueeze(-1)
        j = torch.arange(S, device=q.device)
        keep = (j <= i + (S - T)) if keep is None else keep & (j <= i + (S - T))
    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
    l = torch.zeros_like(m)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale
        if keep is not None:
            scores = scores.masked_fill(~keep[..., s0:s1], float("-inf"))
        m = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        p = torch.exp(scores - shift)
        l = l + p.sum(dim=-1, keepdim=True)
        o = o + p @ v[..., s0:s1, :]
    return torch.where(l > 0, o / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(o))
""",
        "fails": ["test_tiled_attention"],
        "says": "다시 스케일하지 않았습니다",
    },
    {
        "name": "tiled_softmax_on_full_matrix",
        "kind": "forbidden",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        c = torch.ones(T, S, dtype=torch.bool, device=q.device).tril(S - T)
        keep = c if keep is None else keep & c
    if keep is not None:
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if keep is not None:
        weights = weights.masked_fill(~keep, 0.0)
    return weights @ v
""",
        "fails": ["test_tiled_attention"],
        "says": "쓸 수 없습니다",
    },
    {
        "name": "tiled_accumulators_on_default_device",
        "kind": "device",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        i = torch.arange(T, device=q.device).unsqueeze(-1)
        j = torch.arange(S, device=q.device)
        keep = (j <= i + (S - T)) if keep is None else keep & (j <= i + (S - T))
    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype)
    l = torch.zeros((*q.shape[:-1], 1), dtype=q.dtype)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype)
    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale
        if keep is not None:
            scores = scores.masked_fill(~keep[..., s0:s1], float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - shift)
        alpha = torch.exp(m - shift)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        o = o * alpha + p @ v[..., s0:s1, :]
        m = m_new
    return torch.where(l > 0, o / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(o))
""",
        "fails": ["test_tiled_attention"],
        "says": "장치",
    },
]

SW, GQA, KV = "test_sliding_window_mask", "test_grouped_query_attention", "test_kv_cached_attention"
LIN, TILED = "test_linear_attention", "test_tiled_attention"

GQA_REF = """def grouped_query_attention(q, k, v, mask=None):
    h, h_kv = q.shape[-3], k.shape[-3]
    if h % h_kv != 0:
        raise ValueError("h must be a multiple of h_kv")
    k = k.repeat_interleave(h // h_kv, dim=-3)
    v = v.repeat_interleave(h // h_kv, dim=-3)
"""

TILED_HEAD = """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    T, S = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    keep = mask
    if causal:
        i = torch.arange(T, device=q.device).unsqueeze(-1)
        j = torch.arange(S, device=q.device)
        keep = (j <= i + (S - T)) if keep is None else keep & (j <= i + (S - T))
"""

TILED_LOOP = """    for s0 in range(0, S, block_size):
        s1 = min(s0 + block_size, S)
        scores = (q @ k[..., s0:s1, :].transpose(-2, -1)) * scale
        if keep is not None:
            block_keep = keep[..., s0:s1] if keep.shape[-1] == S else keep
            scores = scores.masked_fill(~block_keep, float("-inf"))
        m_new = torch.maximum(m, scores.amax(dim=-1, keepdim=True))
        shift = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(scores - shift)
        alpha = torch.exp(m - shift)
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        o = o * alpha + p @ v[..., s0:s1, :]
        m = m_new
"""

TILED_ACC = """    m = torch.full((*q.shape[:-1], 1), float("-inf"), dtype=q.dtype, device=q.device)
    l = torch.zeros_like(m)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=q.dtype, device=q.device)
"""

TILED_END = """    safe = torch.where(l > 0, l, torch.ones_like(l))
    return torch.where(l > 0, o / safe, torch.zeros_like(o))
"""

MISTAKES += [
    {
        "name": "window_global_rows_by_query_index",
        "kind": "logic",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S, device=device).unsqueeze(-1)
    j = torch.arange(S, device=device)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    for g in global_tokens:
        keep[:, g] = True
        if g < T:
            keep[g] = True
    if causal:
        keep = keep & (dist >= 0)
    return keep
""",
        "fails": [SW],
        "says": "쿼리 번호 g 로 골랐습니다",
    },
    {
        "name": "window_global_index_tensor_on_cpu",
        "kind": "device",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S, device=device).unsqueeze(-1)
    j = torch.arange(S, device=device)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    if len(global_tokens) > 0:
        g = torch.isin(j, torch.tensor(list(global_tokens)))
        keep = keep | g[S - T :].unsqueeze(-1) | g
        if causal:
            keep = keep & (dist >= 0)
    return keep
""",
        "fails": [SW],
        "says": "장치",
    },
    {
        "name": "gqa_fill_with_float32_min",
        "kind": "constant",
        "cell": "grouped_query_attention",
        "source": GQA_REF
        + """    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(torch.float32).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": [GQA],
        "says": "grouped_query_attention",
    },
    {
        "name": "gqa_scales_query_in_place",
        "kind": "in-place",
        "cell": "grouped_query_attention",
        "source": GQA_REF
        + """    q /= math.sqrt(q.shape[-1])
    scores = q @ k.transpose(-2, -1)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": [GQA],
        "says": "제자리",
    },
    {
        "name": "gqa_zero_rows_on_default_device",
        "kind": "device",
        "cell": "grouped_query_attention",
        "source": GQA_REF
        + """    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(torch.isnan(weights), torch.zeros(weights.shape, dtype=q.dtype), weights)
    return weights @ v
""",
        "fails": [GQA],
        "says": "장치",
    },
    {
        "name": "kv_mask_arange_on_default_device",
        "kind": "device",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    k_all = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=-2)
    v_all = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=-2)
    T, S = q_new.shape[-2], k_all.shape[-2]
    i = torch.arange(T).unsqueeze(-1)
    j = torch.arange(S)
    out = grouped_query_attention(q_new, k_all, v_all, mask=j <= i + (S - T))
    return out, k_all, v_all
""",
        "fails": [KV],
        "says": "장치",
    },
    {
        "name": "kv_mask_excludes_own_position",
        "kind": "logic",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    k_all = k_new if k_cache is None else torch.cat([k_cache, k_new], dim=-2)
    v_all = v_new if v_cache is None else torch.cat([v_cache, v_new], dim=-2)
    T, S = q_new.shape[-2], k_all.shape[-2]
    i = torch.arange(T, device=q_new.device).unsqueeze(-1)
    j = torch.arange(S, device=q_new.device)
    out = grouped_query_attention(q_new, k_all, v_all, mask=j < i + (S - T))
    return out, k_all, v_all
""",
        "fails": [KV],
        "says": "자기 위치의 키를 보지 못하게",
    },
    {
        "name": "linear_phi_elu_without_plus_one",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q, phi_k = F.elu(q), F.elu(k)
    if causal:
        kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(phi_k, dim=-2)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)
    else:
        kv = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ kv
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
""",
        "fails": [LIN],
        "says": "+ 1 을 빠뜨렸습니다",
    },
    {
        "name": "linear_causal_cumsum_over_features",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if causal:
        kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-2)
        z = torch.cumsum(phi_k, dim=-1)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)
    else:
        kv = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ kv
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
""",
        "fails": [LIN],
        "says": "특징 축을 따라 계산했습니다",
    },
    {
        "name": "linear_float32_result",
        "kind": "logic",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    q, k, v = q.float(), k.float(), v.float()
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    if causal:
        kv = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-3)
        z = torch.cumsum(phi_k, dim=-2)
        num = (phi_q.unsqueeze(-1) * kv).sum(dim=-2)
    else:
        kv = phi_k.transpose(-2, -1) @ v
        z = phi_k.sum(dim=-2, keepdim=True)
        num = phi_q @ kv
    den = (phi_q * z).sum(dim=-1, keepdim=True)
    return num / (den + eps)
""",
        "fails": [LIN],
        "says": "dtype",
    },
    {
        "name": "tiled_drops_short_last_block",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD
        + TILED_ACC
        + TILED_LOOP.replace("range(0, S, block_size)", "range(0, S - block_size + 1, block_size)")
        + TILED_END,
        "fails": [TILED],
        "says": "마지막의 짧은 블록을 빠뜨렸습니다",
    },
    {
        "name": "tiled_causal_arange_on_default_device",
        "kind": "device",
        "cell": "tiled_attention",
        "source": TILED_HEAD.replace(", device=q.device)", ")")
        + TILED_ACC
        + TILED_LOOP
        + TILED_END,
        "fails": [TILED],
        "says": "장치",
    },
    {
        "name": "tiled_empty_rows_divide_by_zero",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD + TILED_ACC + TILED_LOOP + "    return o / l\n",
        "fails": [TILED],
        "says": "o / l (0 / 0)",
    },
    {
        "name": "tiled_accumulators_in_float32",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD
        + TILED_ACC.replace("dtype=q.dtype", "dtype=torch.float32")
        + TILED_LOOP
        + TILED_END,
        "fails": [TILED],
        "says": "tiled_attention",
    },
    {
        "name": "tiled_fill_finfo_min",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD
        + TILED_ACC
        + TILED_LOOP.replace('float("-inf"))', "torch.finfo(scores.dtype).min)")
        + TILED_END,
        "fails": [TILED],
        "says": "finfo.min 으로 채워서",
    },
    {
        "name": "tiled_no_scale",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD.replace("1.0 / math.sqrt(q.shape[-1])", "1.0")
        + TILED_ACC
        + TILED_LOOP
        + TILED_END,
        "fails": [TILED],
        "says": "√d_k 로 나누지 않았습니다",
    },
]

MISTAKES += []

CORRECT = [
    {
        "name": "ok_window_by_tril_and_triu",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    ones = torch.ones(T, S, dtype=torch.bool, device=device)
    past = ones.tril(S - T)
    band = past & ones.triu(S - T - window + 1)
    if not causal:
        band = band | (ones.triu(S - T) & ones.tril(S - T + window - 1))
    for g in global_tokens:
        band[:, g] = True
        if g >= S - T:
            band[g - (S - T)] = True
    if causal:
        band = band & past
    return band
""",
        "why": "diagonal offsets of tril/triu instead of a distance matrix; a loop for globals",
    },
    {
        "name": "ok_gqa_grouped_queries_broadcast",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    B, h, T, d = q.shape
    h_kv = k.shape[-3]
    if h % h_kv != 0:
        raise ValueError("h must be a multiple of h_kv")
    r = h // h_kv
    qg = q.reshape(B, h_kv, r, T, d)
    scores = qg @ k.unsqueeze(2).transpose(-2, -1) / math.sqrt(d)
    scores = scores.reshape(B, h, T, -1)
    if mask is not None:
        scores = torch.where(mask, scores, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = torch.where(mask, weights, 0.0)
    out = weights.reshape(B, h_kv, r, T, -1) @ v.unsqueeze(2)
    return out.reshape(B, h, T, v.shape[-1])
""",
        "why": "queries grouped (B, h_kv, r, T, d) against unrepeated k/v; -inf fill, NaN rows "
        "of fully blocked queries replaced by torch.where(mask, w, 0)",
    },
    {
        "name": "ok_gqa_expand_einsum",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    B, h, T, d = q.shape
    h_kv, S = k.shape[-3], k.shape[-2]
    if h % h_kv != 0:
        raise ValueError("h must be a multiple of h_kv")
    r = h // h_kv
    k = k[:, :, None].expand(B, h_kv, r, S, d).reshape(B, h, S, d)
    v = v[:, :, None].expand(B, h_kv, r, S, v.shape[-1]).reshape(B, h, S, v.shape[-1])
    scores = torch.einsum("bhtd,bhsd->bhts", q / math.sqrt(d), k)
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return torch.einsum("bhts,bhsd->bhtd", weights, v)
""",
        "why": "expand+reshape in group order, einsum, query scaled before the product",
    },
    {
        "name": "ok_kv_tril_mask",
        "cell": "kv_cached_attention",
        "source": """def kv_cached_attention(q_new, k_new, v_new, k_cache=None, v_cache=None):
    if k_cache is not None:
        k_new = torch.cat((k_cache, k_new), dim=2)
        v_new = torch.cat((v_cache, v_new), dim=2)
    T, S = q_new.shape[2], k_new.shape[2]
    mask = torch.ones(T, S, dtype=torch.bool, device=q_new.device).tril(S - T)
    return grouped_query_attention(q_new, k_new, v_new, mask), k_new, v_new
""",
        "why": "tril with diagonal S - T instead of two aranges",
    },
    {
        "name": "ok_linear_float64_and_loop",
        "cell": "linear_attention",
        "source": """def linear_attention(q, k, v, causal=False, eps=1e-6):
    phi_q = (F.elu(q.double()) + 1)
    phi_k = (F.elu(k.double()) + 1)
    vd = v.double()
    if not causal:
        kv = torch.einsum("...sk,...sv->...kv", phi_k, vd)
        z = phi_k.sum(dim=-2)
        num = torch.einsum("...tk,...kv->...tv", phi_q, kv)
        den = torch.einsum("...tk,...k->...t", phi_q, z).unsqueeze(-1)
        return (num / (den + eps)).to(q.dtype)
    kv = torch.zeros(*phi_k.shape[:-2], k.shape[-1], v.shape[-1], dtype=vd.dtype, device=q.device)
    z = torch.zeros(*phi_k.shape[:-2], k.shape[-1], dtype=vd.dtype, device=q.device)
    outs = []
    for t in range(q.shape[-2]):
        kv = kv + phi_k[..., t, :, None] * vd[..., t, None, :]
        z = z + phi_k[..., t, :]
        num = (phi_q[..., t, :, None] * kv).sum(dim=-2)
        den = (phi_q[..., t, :] * z).sum(dim=-1, keepdim=True)
        outs.append(num / (den + eps))
    return torch.stack(outs, dim=-2).to(q.dtype)
""",
        "why": "float64 inside, cast back to q.dtype; causal sums by an explicit running loop",
    },
    {
        "name": "ok_tiled_float64_inside",
        "cell": "tiled_attention",
        "source": """def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
"""
        + TILED_HEAD.split("\n", 1)[1]
        + TILED_ACC
        + TILED_LOOP
        + TILED_END.replace("return ", "out = ")
        + "    return out.to(dtype)\n",
        "why": "the reference algorithm run in float64, result cast back to q.dtype",
    },
]

OPEN = [
    {
        "name": "window_built_on_cpu_then_moved",
        "kind": "device",
        "cell": "sliding_window_mask",
        "source": """\
def sliding_window_mask(T, window, global_tokens=(), causal=True, device=None, S=None):
    if S is None:
        S = T
    i = torch.arange(S - T, S).unsqueeze(-1)
    j = torch.arange(S)
    dist = i - j
    keep = (dist >= 0) & (dist < window) if causal else dist.abs() < window
    if len(global_tokens) > 0:
        g = torch.zeros(S, dtype=torch.bool)
        g[list(global_tokens)] = True
        keep = keep | g[S - T :].unsqueeze(-1) | g
        if causal:
            keep = keep & (dist >= 0)
    return keep.to(device)
""",
        "fails": [SW],
        "says": "장치",
        "why": (
            "full marks: the mask is built on CPU and moved with .to(device), which the spec "
            "forbids; only the result's device is checked"
        ),
    },
]

# grader gaps closed since: each now loses exactly its fails
MISTAKES += [
    {
        "name": "gqa_no_value_error",
        "kind": "logic",
        "cell": "grouped_query_attention",
        "source": """def grouped_query_attention(q, k, v, mask=None):
    r = q.shape[-3] // k.shape[-3]
    k = k.repeat_interleave(r, dim=-3)
    v = v.repeat_interleave(r, dim=-3)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ v
""",
        "fails": [GQA],
        "says": "ValueError",
    },
    {
        "name": "tiled_mask_sliced_without_broadcast_check",
        "kind": "logic",
        "cell": "tiled_attention",
        "source": TILED_HEAD
        + TILED_ACC
        + TILED_LOOP.replace(
            "keep[..., s0:s1] if keep.shape[-1] == S else keep", "keep[..., s0:s1]"
        )
        + TILED_END,
        "fails": [TILED],
        "says": "tiled_attention",
    },
]

# gaps closed since (the simulated GPU reports a CPU tensor moved to the device): graded now
CLOSED = {"window_built_on_cpu_then_moved"}
MISTAKES += [dict(m, says="CPU에 만든 뒤") for m in OPEN if m["name"] in CLOSED]
OPEN = [m for m in OPEN if m["name"] not in CLOSED]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_sliding_window_row_loop",
        "cell": "sliding_window_mask",
        "source": (
            "def sliding_window_mask(T, window, global_tokens=(), causal=True, "
            "device=None, S=None):\n"
            "    '''One query row at a time.'''\n"
            "    S = S if S is not None else T\n"
            "    keys = torch.arange(S, device=device)\n"
            "    gset = set(int(t) for t in global_tokens)\n"
            "    col_global = torch.zeros(S, dtype=torch.bool, device=device)\n"
            "    for t in gset:\n"
            "        if 0 <= t < S:\n"
            "            col_global = col_global | (keys == t)\n"
            "    rows = []\n"
            "    for i in range(T):\n"
            "        p = i + S - T\n"
            "        if causal:\n"
            "            row = (keys <= p) & (keys > p - window)\n"
            "            if p in gset:\n"
            "                row = keys <= p\n"
            "            row = row | (col_global & (keys <= p))\n"
            "        else:\n"
            "            row = (keys - p).abs() < window\n"
            "            if p in gset:\n"
            "                row = torch.ones(S, dtype=torch.bool, device=device)\n"
            "            row = row | col_global\n"
            "        rows.append(row)\n"
            "    if not rows:\n"
            "        return torch.zeros((0, S), dtype=torch.bool, device=device)\n"
            "    return torch.stack(rows)\n"
        ),
        "why": (
            "Each row applies the window rule for its position p = i + S - T, becomes all keys "
            "(or all past keys when causal) if p is a global position, and ORs in the global key "
            "columns (past only when causal)."
        ),
    },
    {
        "name": "ok_gqa_head_loop",
        "cell": "grouped_query_attention",
        "source": (
            "def grouped_query_attention(q, k, v, mask=None):\n"
            "    '''Python loop over query heads, each using kv head i // r.'''\n"
            "    B, h, T, _ = q.shape\n"
            "    h_kv, S = k.shape[1], k.shape[2]\n"
            "    if h % h_kv != 0:\n"
            "        raise ValueError('h must be a multiple of h_kv')\n"
            "    r = h // h_kv\n"
            "    keep = None if mask is None else torch.broadcast_to(mask, (B, h, "
            "T, S))\n"
            "    outs = []\n"
            "    for i in range(h):\n"
            "        g = i // r\n"
            "        s = q[:, i] @ k[:, g].transpose(-2, -1) / "
            "math.sqrt(q.shape[-1])\n"
            "        if keep is None:\n"
            "            w = torch.softmax(s, dim=-1)\n"
            "        else:\n"
            "            ki = keep[:, i]\n"
            "            w = torch.softmax(s.masked_fill(~ki, "
            "torch.finfo(s.dtype).min), dim=-1) * ki\n"
            "        outs.append(w @ v[:, g])\n"
            "    return torch.stack(outs, dim=1)\n"
        ),
        "why": (
            "Each query head attends with kv head i // r; multiplying the finfo.min-filled "
            "softmax by the bool keep-mask zeroes blocked keys (and fully blocked rows); heads "
            "stacked back on dim 1."
        ),
    },
    {
        "name": "ok_kv_cache_per_query_prefix",
        "cell": "kv_cached_attention",
        "source": (
            "def kv_cached_attention(q_new, k_new, v_new, k_cache=None, "
            "v_cache=None):\n"
            "    '''Loop over the new queries: query i attends, unmasked, to the "
            "key prefix of length S - T + i + 1.'''\n"
            "    k_all = k_new.clone() if k_cache is None else torch.cat([k_cache, "
            "k_new], dim=2)\n"
            "    v_all = v_new.clone() if v_cache is None else torch.cat([v_cache, "
            "v_new], dim=2)\n"
            "    T, S = q_new.shape[2], k_all.shape[2]\n"
            "    outs = []\n"
            "    for i in range(T):\n"
            "        n = S - T + i + 1\n"
            "        outs.append(grouped_query_attention(q_new[:, :, i:i + 1], "
            "k_all[:, :, :n], v_all[:, :, :n]))\n"
            "    if outs:\n"
            "        out = torch.cat(outs, dim=2)\n"
            "    else:\n"
            "        out = q_new.new_zeros(q_new.shape[:3] + (v_all.shape[-1],))\n"
            "    return out, k_all, v_all\n"
        ),
        "why": (
            "Restricting the keys to the prefix j <= i + (S - T) is the causal rule, so unmasked "
            "attention on that prefix equals the masked attention; outputs are concatenated in "
            "query order."
        ),
    },
    {
        "name": "ok_linear_attention_recurrent_loop",
        "cell": "linear_attention",
        "source": (
            "def linear_attention(q, k, v, causal=False, eps=1e-6):\n"
            "    '''Causal: RNN-style running state updated token by token. Non-"
            "causal: one global state.'''\n"
            "    fq = torch.where(q > 0, q + 1, torch.exp(torch.clamp(q, max=0)))\n"
            "    fk = torch.where(k > 0, k + 1, torch.exp(torch.clamp(k, max=0)))\n"
            "    if not causal:\n"
            "        state = fk.transpose(-2, -1) @ v\n"
            "        norm = fk.sum(dim=-2, keepdim=True).transpose(-2, -1)\n"
            "        return (fq @ state) / (fq @ norm + eps)\n"
            "    T = q.shape[-2]\n"
            "    state = torch.zeros(q.shape[:-2] + (q.shape[-1], v.shape[-1]), "
            "dtype=q.dtype, device=q.device)\n"
            "    norm = torch.zeros(q.shape[:-2] + (q.shape[-1],), dtype=q.dtype, "
            "device=q.device)\n"
            "    outs = []\n"
            "    for t in range(T):\n"
            "        kt, vt, qt = fk[..., t, :], v[..., t, :], fq[..., t, :]\n"
            "        state = state + kt.unsqueeze(-1) * vt.unsqueeze(-2)\n"
            "        norm = norm + kt\n"
            "        num = (qt.unsqueeze(-2) @ state).squeeze(-2)\n"
            "        den = (qt * norm).sum(dim=-1, keepdim=True)\n"
            "        outs.append(num / (den + eps))\n"
            "    if not outs:\n"
            "        return v.new_zeros(q.shape[:-1] + (v.shape[-1],))\n"
            "    return torch.stack(outs, dim=-2)\n"
        ),
        "why": (
            "elu(x) + 1 is x + 1 for x > 0 and exp(x) otherwise; the causal sums over j <= i are "
            "accumulated in a running state, exactly the prefix sums of the formula."
        ),
    },
    {
        "name": "ok_tiled_query_row_loop",
        "cell": "tiled_attention",
        "source": (
            "def tiled_attention(q, k, v, block_size=64, causal=False, mask=None):\n"
            "    '''Outer loop over query rows, inner loop over key blocks, scalar-"
            "per-row online statistics.'''\n"
            "    T, S = q.shape[-2], k.shape[-2]\n"
            "    scale = 1.0 / math.sqrt(q.shape[-1])\n"
            "    keep_all = None\n"
            "    if mask is not None:\n"
            "        keep_all = mask.reshape((1,) * max(0, 2 - mask.dim()) + "
            "tuple(mask.shape))\n"
            "        keep_all = keep_all.expand(*keep_all.shape[:-2], T, S)\n"
            "    lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2])\n"
            "    rows = []\n"
            "    for i in range(T):\n"
            "        qi = q[..., i:i + 1, :]\n"
            "        m = q.new_full(lead + (1, 1), float('-inf'))\n"
            "        l = q.new_zeros(lead + (1, 1))\n"
            "        o = q.new_zeros(lead + (1, v.shape[-1]))\n"
            "        limit = i + S - T\n"
            "        for b0 in range(0, S, block_size):\n"
            "            b1 = min(b0 + block_size, S)\n"
            "            s = (qi @ k[..., b0:b1, :].transpose(-2, -1)) * scale\n"
            "            keep = torch.ones((1, b1 - b0), dtype=torch.bool, "
            "device=q.device)\n"
            "            if causal:\n"
            "                keep = keep & (torch.arange(b0, b1, device=q.device) "
            "<= limit).unsqueeze(0)\n"
            "            if keep_all is not None:\n"
            "                keep = keep & keep_all[..., i:i + 1, b0:b1]\n"
            "            s = torch.where(keep, s, torch.full_like(s, "
            "float('-inf')))\n"
            "            m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))\n"
            "            base = torch.where(torch.isfinite(m_new), m_new, "
            "torch.zeros_like(m_new))\n"
            "            p = torch.exp(s - base)\n"
            "            c = torch.exp(m - base)\n"
            "            l = l * c + p.sum(dim=-1, keepdim=True)\n"
            "            o = o * c + p @ v[..., b0:b1, :]\n"
            "            m = m_new\n"
            "        rows.append(torch.where(l > 0, o / torch.where(l > 0, l, "
            "torch.ones_like(l)), torch.zeros_like(o)))\n"
            "    if not rows:\n"
            "        return q.new_zeros(lead + (0, v.shape[-1]))\n"
            "    return torch.cat(rows, dim=-2)\n"
        ),
        "why": (
            "Softmax attention rows are independent, so running the same online max/sum/output "
            "recurrence per query row over the key blocks [0, bs), [bs, 2bs), ... gives the exact"
            " result; the causal limit is i + S - T."
        ),
    },
]
