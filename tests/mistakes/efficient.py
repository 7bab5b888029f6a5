"""Plausible student mistakes for assignment ``efficient`` (graded by tests/test_mistakes.py)."""

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
        "says": "다릅니다",
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
        "says": "global tokens",
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
        "says": "T < S",
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
        "fails": ["test_grouped_query_attention", "test_kv_cached_attention"],
        "says": "GQA",
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
        "says": "-max(float32)",
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
        "says": "all masked rows",
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
        "fails": ["test_grouped_query_attention", "test_kv_cached_attention"],
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
        "fails": ["test_grouped_query_attention", "test_kv_cached_attention"],
        "says": "다릅니다",
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
        "says": "다릅니다",
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
        "says": "T_new",
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
        "says": "다릅니다",
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
        "says": "다릅니다",
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
        "says": "eps=",
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
        "says": "causal",
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
        "says": "-max(float32)",
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
        "says": "nan",
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
        "says": "다릅니다",
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
