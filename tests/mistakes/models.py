"""Plausible student mistakes for assignment ``models`` (graded by tests/grader/test_mistakes.py).

Each source is a whole solution cell; most are the correct cell with one or two lines written
the way a student might get them wrong (``fix`` swaps one snippet for another and insists that
the snippet exists, so a change in the notebook cannot silently turn a mistake into the answer).
"""

ASSIGNMENT = "models"
DEC, MLM, GPT, GPTC, MOD = (
    "test_decoder_block",
    "test_mlm_mask",
    "test_gpt_model",
    "test_gpt_causal",
    "test_modern_block",
)

DECODER = """class DecoderBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, eps=1e-5):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=True)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model, eps=eps)
        self.norm2 = nn.LayerNorm(d_model, eps=eps)
        self.norm3 = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, self_mask=None, memory_mask=None):
        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        h = self.cross_attn(self.norm2(x), context=memory, mask=memory_mask)
        x = x + self.dropout(h)
        return x + self.dropout(self.ffn(self.norm3(x)))
"""

MLM_MASK = """def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, p=0.15):
    g = torch.Generator().manual_seed(seed)
    device = input_ids.device
    choose = torch.rand(input_ids.shape, generator=g).to(device) < p
    action = torch.rand(input_ids.shape, generator=g).to(device)
    random_ids = torch.randint(vocab_size, input_ids.shape, generator=g)
    random_ids = random_ids.to(device=device, dtype=input_ids.dtype)
    special = torch.zeros(input_ids.shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
    chosen = choose & ~special
    inputs = input_ids.masked_fill(chosen & (action < 0.8), mask_id)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)
    labels = input_ids.masked_fill(~chosen, -100)
    return inputs, labels
"""

GPT_MODEL = """class GPTBlock(nn.Module):
    def __init__(self, d_model, num_heads, d_ff):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadAttention(d_model, num_heads, causal=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.ffn(self.norm2(x))


class GPTModel(nn.Module):
    def __init__(
        self, vocab_size, context_length, d_model, num_heads, num_layers, d_ff, tie_weights=False
    ):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers))
        self.final_norm = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        if tie_weights:
            self.lm_head.weight = self.tok_emb.weight

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.final_norm(x))
"""

MODERN = """def apply_rope(x, positions=None, base=10000.0):
    T, d = x.shape[-2], x.shape[-1]
    if positions is None:
        positions = torch.arange(T, device=x.device)
    work = torch.promote_types(x.dtype, torch.float32)
    i = torch.arange(0, d, 2, device=x.device, dtype=work)
    angles = positions.to(work)[:, None] * base ** (-i / d)
    cos, sin = angles.cos(), angles.sin()
    xf = x.to(work)
    a, b = xf[..., : d // 2], xf[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        self.rope_base = rope_base
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, -1)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        return x + self.ffn(self.ffn_norm(x))
"""


def fix(source, old, new):
    """``source`` with the snippet ``old`` (which must occur exactly once) replaced by ``new``."""
    if source.count(old) != 1:
        raise ValueError(f"snippet not found exactly once: {old!r}")
    return source.replace(old, new)


def mistake(name, kind, cell, source, fails, says):
    return {
        "name": name,
        "kind": kind,
        "cell": cell,
        "source": source,
        "fails": fails,
        "says": says,
    }


MISTAKES = [
    # ------------------------------------------------------------------ DecoderBlock
    mistake(
        "decoder_post_norm",
        "logic",
        "decoder_block",
        fix(
            DECODER,
            """        x = x + self.dropout(self.self_attn(self.norm1(x), mask=self_mask))
        h = self.cross_attn(self.norm2(x), context=memory, mask=memory_mask)
        x = x + self.dropout(h)
        return x + self.dropout(self.ffn(self.norm3(x)))""",
            """        x = self.norm1(x + self.dropout(self.self_attn(x, mask=self_mask)))
        h = self.cross_attn(x, context=memory, mask=memory_mask)
        x = self.norm2(x + self.dropout(h))
        return self.norm3(x + self.dropout(self.ffn(x)))""",
        ),
        [DEC],
        "사후 정규화(post-norm)로 썼습니다",
    ),
    mistake(
        "decoder_cross_attention_keys_from_decoder",
        "logic",
        "decoder_block",
        fix(
            DECODER,
            "self.cross_attn(self.norm2(x), context=memory, mask=memory_mask)",
            "self.cross_attn(self.norm2(x), mask=memory_mask)",
        ),
        [DEC],
        "키와 값을 디코더 입력에서 만들었습니다",
    ),
    mistake(
        "decoder_masks_swapped",
        "logic",
        "decoder_block",
        fix(
            fix(DECODER, "mask=self_mask))", "mask=memory_mask))"),
            "context=memory, mask=memory_mask)",
            "context=memory, mask=self_mask)",
        ),
        [DEC],
        "memory_mask",
    ),
    mistake(
        "decoder_one_norm_for_all",
        "logic",
        "decoder_block",
        fix(
            fix(DECODER, "self.cross_attn(self.norm2(x)", "self.cross_attn(self.norm1(x)"),
            "self.ffn(self.norm3(x))",
            "self.ffn(self.norm1(x))",
        ),
        [DEC],
        "모두 norm1 을 썼습니다",
    ),
    mistake(
        "decoder_dropout_on_residual_sum",
        "randomness",
        "decoder_block",
        fix(
            DECODER,
            "return x + self.dropout(self.ffn(self.norm3(x)))",
            "return self.dropout(x + self.ffn(self.norm3(x)))",
        ),
        [DEC],
        "train(), 같은 시드",
    ),
    mistake(
        "decoder_no_dropout_in_sublayers",
        "randomness",
        "decoder_block",
        fix(
            fix(
                DECODER,
                "MultiHeadAttention(d_model, num_heads, dropout, causal=True)",
                "MultiHeadAttention(d_model, num_heads, causal=True)",
            ),
            "MultiHeadAttention(d_model, num_heads, dropout, causal=False)",
            "MultiHeadAttention(d_model, num_heads, causal=False)",
        ),
        [DEC],
        "self.dropout",
    ),
    mistake(
        "decoder_uses_nn_multiheadattention",
        "forbidden",
        "decoder_block",
        fix(
            fix(
                DECODER,
                "self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout, causal=False)",
                "self.torch_attn = nn.MultiheadAttention(d_model, num_heads, batch_first=True)\n"
                "        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)",
            ),
            "        x = x + self.dropout(h)\n",
            "        x = x + self.dropout(h) + 0 * self.torch_attn(x, memory, memory)[0]\n",
        ),
        [DEC],
        "MultiheadAttention",
    ),
    # ------------------------------------------------------------------ mlm_mask
    mistake(
        "mlm_exact_count_per_row",
        "logic",
        "mlm_mask",
        fix(
            MLM_MASK,
            "    chosen = choose & ~special\n",
            "    n = (~special).sum(dim=1, keepdim=True)\n"
            "    k = torch.round(p * n)\n"
            "    noise = torch.rand(input_ids.shape, generator=g).to(device)\n"
            "    noise = noise.masked_fill(special, 2.0)\n"
            "    rank = noise.argsort(dim=1).argsort(dim=1)\n"
            "    chosen = (rank < k) & ~special\n",
        ),
        [MLM],
        "베르누이",
    ),
    mistake(
        "mlm_masks_special_tokens",
        "logic",
        "mlm_mask",
        fix(MLM_MASK, "    chosen = choose & ~special\n", "    chosen = choose\n"),
        [MLM],
        "특수 토큰",
    ),
    mistake(
        "mlm_always_mask_token",
        "logic",
        "mlm_mask",
        fix(
            MLM_MASK,
            """    inputs = input_ids.masked_fill(chosen & (action < 0.8), mask_id)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)""",
            "    inputs = input_ids.masked_fill(chosen, mask_id)",
        ),
        [MLM],
        "[MASK]",
    ),
    mistake(
        "mlm_labels_zero_not_ignore_index",
        "constant",
        "mlm_mask",
        fix(
            MLM_MASK,
            "labels = input_ids.masked_fill(~chosen, -100)",
            "labels = input_ids.masked_fill(~chosen, 0)",
        ),
        [MLM],
        "-100",
    ),
    mistake(
        "mlm_one_random_token_for_all",
        "randomness",
        "mlm_mask",
        fix(
            MLM_MASK,
            "random_ids = torch.randint(vocab_size, input_ids.shape, generator=g)",
            "random_ids = torch.randint(vocab_size, (1,), generator=g).expand(input_ids.shape)",
        ),
        [MLM],
        "고르게",
    ),
    mistake(
        "mlm_one_draw_for_choice_and_action",
        "randomness",
        "mlm_mask",
        fix(
            MLM_MASK,
            "    action = torch.rand(input_ids.shape, generator=g).to(device)\n",
            "    g = torch.Generator().manual_seed(seed)  # same seed: reproducible\n"
            "    action = torch.rand(input_ids.shape, generator=g).to(device)\n",
        ),
        [MLM],
        "[MASK]",
    ),
    mistake(
        "mlm_writes_into_input_ids",
        "in-place",
        "mlm_mask",
        fix(
            MLM_MASK,
            """    inputs = input_ids.masked_fill(chosen & (action < 0.8), mask_id)
    inputs = torch.where(chosen & (action >= 0.8) & (action < 0.9), random_ids, inputs)
    labels = input_ids.masked_fill(~chosen, -100)""",
            """    labels = input_ids.masked_fill(~chosen, -100)
    inputs = input_ids
    inputs[chosen & (action < 0.8)] = mask_id
    to_random = chosen & (action >= 0.8) & (action < 0.9)
    inputs[to_random] = random_ids[to_random]""",
        ),
        [MLM],
        "제자리",
    ),
    mistake(
        "mlm_special_mask_on_cpu",
        "device",
        "mlm_mask",
        fix(
            MLM_MASK,
            "special = torch.zeros(input_ids.shape, dtype=torch.bool, device=device)",
            "special = torch.zeros(input_ids.shape, dtype=torch.bool)",
        ),
        [MLM],
        "장치",
    ),
    # ------------------------------------------------------------------ GPTModel
    mistake(
        "gpt_forgets_position_embedding",
        "logic",
        "gpt_model",
        fix(GPT_MODEL, "x = self.tok_emb(idx) + self.pos_emb(pos)", "x = self.tok_emb(idx)"),
        [GPT],
        "위치 임베딩을 더하지 않았습니다",
    ),
    mistake(
        "gpt_attention_not_causal",
        "logic",
        "gpt_model",
        fix(
            GPT_MODEL,
            "self.attn = MultiHeadAttention(d_model, num_heads, causal=True)",
            "self.attn = MultiHeadAttention(d_model, num_heads)",
        ),
        [GPT, GPTC],
        "어텐션이 인과적이지 않습니다",
    ),
    mistake(
        "gpt_tie_copies_weights",
        "logic",
        "gpt_model",
        fix(
            GPT_MODEL,
            "self.lm_head.weight = self.tok_emb.weight",
            "self.lm_head.weight.data = self.tok_emb.weight.data",
        ),
        [GPT],
        "같은 Parameter",
    ),
    mistake(
        "gpt_lm_head_with_bias",
        "logic",
        "gpt_model",
        fix(
            GPT_MODEL,
            "self.lm_head = nn.Linear(d_model, vocab_size, bias=False)",
            "self.lm_head = nn.Linear(d_model, vocab_size)",
        ),
        [GPT],
        "lm_head.bias",
    ),
    mistake(
        "gpt_no_final_norm",
        "logic",
        "gpt_model",
        fix(GPT_MODEL, "return self.lm_head(self.final_norm(x))", "return self.lm_head(x)"),
        [GPT],
        "final_norm)를 빠뜨렸습니다",
    ),
    # ------------------------------------------------------------------ ModernBlock
    mistake(
        "rope_interleaved_pairs",
        "logic",
        "modern_block",
        fix(
            MODERN,
            """    a, b = xf[..., : d // 2], xf[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)""",
            """    a, b = xf[..., 0::2], xf[..., 1::2]
    out = torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1)
    return out.flatten(-2).to(x.dtype)""",
        ),
        [MOD],
        "(2i, 2i+1) 을 짝지었습니다",
    ),
    mistake(
        "rope_angles_in_bfloat16",
        "constant",
        "modern_block",
        fix(MODERN, "work = torch.promote_types(x.dtype, torch.float32)", "work = x.dtype"),
        [MOD],
        "입력 dtype(bfloat16)으로 계산했습니다",
    ),
    mistake(
        "gqa_repeat_instead_of_repeat_interleave",
        "logic",
        "modern_block",
        fix(
            MODERN,
            "k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)",
            "k, v = k.repeat(1, r, 1, 1), v.repeat(1, r, 1, 1)",
        ),
        [MOD],
        "repeat 로 통째로 반복했습니다",
    ),
    mistake(
        "rope_only_on_queries",
        "logic",
        "modern_block",
        fix(MODERN, "        k = apply_rope(k, base=self.rope_base)\n", ""),
        [MOD],
        "쿼리에만 적용했습니다",
    ),
    mistake(
        "modern_fill_minus_1e4",
        "constant",
        "modern_block",
        fix(
            MODERN,
            "scores.masked_fill(~keep, torch.finfo(scores.dtype).min)",
            "scores.masked_fill(~keep, -1e4)",
        ),
        [MOD],
        "고정된 음수(-1e4",
    ),
    mistake(
        "modern_causal_mask_on_cpu",
        "device",
        "modern_block",
        fix(MODERN, "i = torch.arange(T, device=x.device)", "i = torch.arange(T)"),
        [MOD],
        "장치",
    ),
    mistake(
        "modern_uses_sdpa",
        "forbidden",
        "modern_block",
        fix(
            MODERN,
            """        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, -1)""",
            """        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=keep)
        out = out.transpose(1, 2).reshape(B, T, -1)""",
        ),
        [MOD],
        "scaled_dot_product_attention",
    ),
]

MISTAKES += [
    # ------------------------------------------------------------------ DecoderBlock
    mistake(
        "decoder_norms_ignore_eps",
        "constant",
        "decoder_block",
        fix(
            fix(
                fix(
                    DECODER,
                    "self.norm1 = nn.LayerNorm(d_model, eps=eps)",
                    "self.norm1 = nn.LayerNorm(d_model)",
                ),
                "self.norm2 = nn.LayerNorm(d_model, eps=eps)",
                "self.norm2 = nn.LayerNorm(d_model)",
            ),
            "self.norm3 = nn.LayerNorm(d_model, eps=eps)",
            "self.norm3 = nn.LayerNorm(d_model)",
        ),
        [DEC],
        "eps 를 넘기지 않아 기본값 1e-5",
    ),
    # ------------------------------------------------------------------ mlm_mask
    mistake(
        "mlm_generator_on_input_device",
        "device",
        "mlm_mask",
        fix(
            fix(
                fix(
                    fix(
                        MLM_MASK,
                        "g = torch.Generator().manual_seed(seed)",
                        "g = torch.Generator(device=input_ids.device).manual_seed(seed)",
                    ),
                    "choose = torch.rand(input_ids.shape, generator=g).to(device) < p",
                    "choose = torch.rand(input_ids.shape, generator=g, device=device) < p",
                ),
                "action = torch.rand(input_ids.shape, generator=g).to(device)",
                "action = torch.rand(input_ids.shape, generator=g, device=device)",
            ),
            "random_ids = torch.randint(vocab_size, input_ids.shape, generator=g)",
            "random_ids = torch.randint(vocab_size, input_ids.shape, generator=g, device=device)",
        ),
        [MLM],
        "mlm_mask",
    ),
    mistake(
        "mlm_random_ids_skip_zero",
        "randomness",
        "mlm_mask",
        fix(
            MLM_MASK,
            "random_ids = torch.randint(vocab_size, input_ids.shape, generator=g)",
            "random_ids = torch.randint(1, vocab_size, input_ids.shape, generator=g)",
        ),
        [MLM],
        "mlm_mask",
    ),
    mistake(
        "mlm_special_ids_tensor_on_cpu",
        "device",
        "mlm_mask",
        fix(
            MLM_MASK,
            """    special = torch.zeros(input_ids.shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
""",
            """    special = torch.isin(input_ids, torch.tensor(special_ids, dtype=input_ids.dtype))
""",
        ),
        [MLM],
        "장치",
    ),
    mistake(
        "mlm_random_ids_stay_int64",
        "logic",
        "mlm_mask",
        fix(
            MLM_MASK,
            "random_ids = random_ids.to(device=device, dtype=input_ids.dtype)",
            "random_ids = random_ids.to(device)",
        ),
        [MLM],
        "dtype",
    ),
    mistake(
        "mlm_global_manual_seed",
        "randomness",
        "mlm_mask",
        fix(
            fix(
                fix(
                    fix(
                        MLM_MASK,
                        "g = torch.Generator().manual_seed(seed)",
                        "torch.manual_seed(seed)",
                    ),
                    "choose = torch.rand(input_ids.shape, generator=g).to(device) < p",
                    "choose = torch.rand(input_ids.shape).to(device) < p",
                ),
                "action = torch.rand(input_ids.shape, generator=g).to(device)",
                "action = torch.rand(input_ids.shape).to(device)",
            ),
            "random_ids = torch.randint(vocab_size, input_ids.shape, generator=g)",
            "random_ids = torch.randint(vocab_size, input_ids.shape)",
        ),
        [MLM],
        "mlm_mask",
    ),
    # ------------------------------------------------------------------ GPTModel
    mistake(
        "gpt_positions_on_cpu",
        "device",
        "gpt_model",
        fix(
            GPT_MODEL,
            "pos = torch.arange(idx.shape[1], device=idx.device)",
            "pos = torch.arange(idx.shape[1])",
        ),
        [GPT, GPTC],
        "장치",
    ),
    mistake(
        "gpt_blocks_plain_list",
        "logic",
        "gpt_model",
        fix(
            GPT_MODEL,
            "nn.ModuleList(GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers))",
            "[GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers)]",
        ),
        [GPT],
        "blocks",
    ),
    mistake(
        "gpt_one_block_repeated",
        "logic",
        "gpt_model",
        fix(
            GPT_MODEL,
            "nn.ModuleList(GPTBlock(d_model, num_heads, d_ff) for _ in range(num_layers))",
            "nn.ModuleList([GPTBlock(d_model, num_heads, d_ff)] * num_layers)",
        ),
        [GPT],
        "모든 층이 같은 블록",
    ),
    # ------------------------------------------------------------------ ModernBlock
    mistake(
        "rope_float64_in_float32",
        "constant",
        "modern_block",
        fix(MODERN, "work = torch.promote_types(x.dtype, torch.float32)", "work = torch.float32"),
        [MOD],
        "float64 입력의 각도와 회전을 float32",
    ),
    mistake(
        "modern_norms_ignore_eps",
        "constant",
        "modern_block",
        fix(
            fix(
                MODERN,
                "self.attn_norm = RMSNorm(d_model, eps)",
                "self.attn_norm = RMSNorm(d_model)",
            ),
            "self.ffn_norm = RMSNorm(d_model, eps)",
            "self.ffn_norm = RMSNorm(d_model)",
        ),
        [MOD],
        "eps 를 넘기지 않아 기본값 1e-6",
    ),
    mistake(
        "gqa_mask_and_in_place",
        "in-place",
        "modern_block",
        fix(
            MODERN,
            """        if mask is not None:
            keep = keep & mask""",
            """        if mask is not None:
            mask &= keep
            keep = mask""",
        ),
        [MOD],
        "ModernBlock",
    ),
]

# Correct solutions written another way: each must keep full marks.
CORRECT = [
    {
        "name": "gpt_position_rows_sliced",
        "cell": "gpt_model",
        "source": fix(
            fix(GPT_MODEL, "        pos = torch.arange(idx.shape[1], device=idx.device)\n", ""),
            "x = self.tok_emb(idx) + self.pos_emb(pos)",
            "x = self.tok_emb(idx) + self.pos_emb.weight[: idx.shape[1]]",
        ),
        "why": "the first T rows of the position table are pos_emb(arange(T))",
    },
    {
        "name": "rope_rotate_half",
        "cell": "modern_block",
        "source": fix(
            MODERN,
            """    a, b = xf[..., : d // 2], xf[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)""",
            """    cos, sin = torch.cat((cos, cos), dim=-1), torch.cat((sin, sin), dim=-1)
    rotated = torch.cat((-xf[..., d // 2 :], xf[..., : d // 2]), dim=-1)  # rotate_half
    return (xf * cos + rotated * sin).to(x.dtype)""",
        ),
        "why": "Hugging Face LLaMA's x cos + rotate_half(x) sin is the same half pairing",
    },
    {
        "name": "rope_complex_numbers",
        "cell": "modern_block",
        "source": fix(
            MODERN,
            """    cos, sin = angles.cos(), angles.sin()
    xf = x.to(work)
    a, b = xf[..., : d // 2], xf[..., d // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)""",
            """    xf = x.to(work)
    z = torch.complex(xf[..., : d // 2], xf[..., d // 2 :])
    z = z * torch.polar(torch.ones_like(angles), angles)
    return torch.cat((z.real, z.imag), dim=-1).to(x.dtype)""",
        ),
        "why": "a pair (a, b) as a + ib times exp(i theta) is the rotation",
    },
    {
        "name": "gqa_expand_and_einsum",
        "cell": "modern_block",
        "source": fix(
            fix(
                fix(
                    MODERN,
                    "k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)",
                    "kv_shape = (B, self.num_kv_heads, r, T, self.d_head)\n"
                    "        k = k[:, :, None].expand(kv_shape).reshape(B, -1, T, self.d_head)\n"
                    "        v = v[:, :, None].expand(kv_shape).reshape(B, -1, T, self.d_head)",
                ),
                "scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)",
                'scores = torch.einsum("bhtd,bhsd->bhts", q, k) / math.sqrt(self.d_head)',
            ),
            "out = (weights @ v).transpose(1, 2).reshape(B, T, -1)",
            'out = torch.einsum("bhts,bhsd->bthd", weights, v).reshape(B, T, -1)',
        ),
        "why": "expand + reshape puts kv head g at query heads g r ... g r + r - 1, as"
        " repeat_interleave does",
    },
    {
        "name": "gqa_rope_after_repeat",
        "cell": "modern_block",
        "source": fix(
            fix(
                MODERN,
                """        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)""",
                """        r = self.num_heads // self.num_kv_heads
        k, v = k.repeat_interleave(r, dim=1), v.repeat_interleave(r, dim=1)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)""",
            ),
            "scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)",
            "scores = torch.where(keep, scores, torch.finfo(scores.dtype).min)",
        ),
        "why": "RoPE acts on each head alone, so it commutes with copying heads; torch.where"
        " fills like masked_fill",
    },
    {
        "name": "mlm_special_by_broadcast",
        "cell": "mlm_mask",
        "source": fix(
            MLM_MASK,
            """    special = torch.zeros(input_ids.shape, dtype=torch.bool, device=device)
    for s in special_ids:
        special = special | (input_ids == s)
""",
            """    ids = torch.tensor(list(special_ids), dtype=input_ids.dtype, device=device)
    special = (input_ids.unsqueeze(-1) == ids).any(dim=-1)
""",
        ),
        "why": "one broadcast comparison with every special id (an empty list gives no match)",
    },
]

MISTAKES += [
    mistake(
        "rope_ignores_positions",
        "logic",
        "modern_block",
        fix(
            MODERN,
            """    if positions is None:
        positions = torch.arange(T, device=x.device)""",
            "    positions = torch.arange(T, device=x.device)",
        ),
        [MOD],
        "positions 인자를 무시",
    ),
    mistake(
        "mlm_labels_from_corrupted_inputs",
        "logic",
        "mlm_mask",
        fix(
            MLM_MASK,
            "labels = input_ids.masked_fill(~chosen, -100)",
            "labels = inputs.masked_fill(~chosen, -100)",
        ),
        [MLM],
        "mlm_mask",
    ),
]

# Missed by the checks on first contact with the blind sample of 2026-11-27
# (tests/mistakes/BLIND.md), caught by the cases added for them on 2026-11-28.
MISTAKES += [
    {
        "name": "gqa_masked_fill_minus_1e9",
        "kind": "logic",
        "cell": "modern_block",
        "source": r'''def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d_head = x.shape[-2], x.shape[-1]
    work = torch.promote_types(x.dtype, torch.float32)          # float32, or float64 for float64
    if positions is None:
        positions = torch.arange(T, device=x.device)
    inv_freq = base ** (-torch.arange(0, d_head, 2, device=x.device, dtype=work) / d_head)
    angle = positions.to(device=x.device, dtype=work)[:, None] * inv_freq   # (T, d_head / 2)
    cos, sin = angle.cos(), angle.sin()
    xw = x.to(work)
    a, b = xw[..., : d_head // 2], xw[..., d_head // 2 :]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), dim=-1).to(x.dtype)

class GroupedQueryAttention(nn.Module):
    """Causal GQA with RoPE, no biases: forward(x (B, T, d_model), mask=None) -> (B, T, d_model)."""

    def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        self.rope_base = rope_base
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        group = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(group, dim=1)
        v = v.repeat_interleave(group, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        pos = torch.arange(T, device=x.device)
        keep = pos[None, :] <= pos[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, -1e9)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)

class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        return x + self.ffn(self.ffn_norm(x))
''',
        "fails": ["test_modern_block"],
        "says": "고정된 음수",
    },
]

# Missed on first contact with the blind sample of 2026-11-28 (tests/mistakes/BLIND.md),
# caught by the cases added for them the same day.
MISTAKES += [
    {
        "name": "gqa_fill_neg_inf",
        "kind": "logic",
        "cell": "modern_block",
        "source": r'''
def apply_rope(x, positions=None, base=10000.0):
    """RoPE with the "half" pairing (dim i with i + d/2): x (B, h, T, d_head) -> same shape."""
    T, d = x.shape[-2], x.shape[-1]
    ct = torch.promote_types(x.dtype, torch.float32)
    if positions is None:
        positions = torch.arange(T, device=x.device)
    half = d // 2
    inv = base ** (-torch.arange(half, device=x.device, dtype=ct) * 2 / d)
    theta = positions.to(ct)[:, None] * inv[None, :]  # (T, half)
    cos, sin = theta.cos(), theta.sin()
    xf = x.to(ct)
    a, b = xf[..., :half], xf[..., half:]
    out = torch.cat([a * cos - b * sin, a * sin + b * cos], dim=-1)
    return out.to(x.dtype)


class GroupedQueryAttention(nn.Module):
    """Causal GQA with RoPE, no biases: forward(x (B, T, d_model), mask=None) -> (B, T, d_model)."""

    def __init__(self, d_model, num_heads, num_kv_heads, rope_base=10000.0):
        super().__init__()
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.d_head = d_model // num_heads
        self.rope_base = rope_base
        self.W_query = nn.Linear(d_model, d_model, bias=False)
        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, bias=False)
        self.out_proj = nn.Linear(d_model, d_model, bias=False)

    def forward(self, x, mask=None):
        B, T, _ = x.shape
        q = self.W_query(x).view(B, T, self.num_heads, self.d_head).transpose(1, 2)
        k = self.W_key(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        v = self.W_value(x).view(B, T, self.num_kv_heads, self.d_head).transpose(1, 2)
        q = apply_rope(q, base=self.rope_base)
        k = apply_rope(k, base=self.rope_base)
        r = self.num_heads // self.num_kv_heads
        k = k.repeat_interleave(r, dim=1)
        v = v.repeat_interleave(r, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_head)
        i = torch.arange(T, device=x.device)
        keep = i[None, :] <= i[:, None]
        if mask is not None:
            keep = keep & mask
        scores = scores.masked_fill(~keep, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        out = (w @ v).transpose(1, 2).reshape(B, T, self.num_heads * self.d_head)
        return self.out_proj(out)


class ModernBlock(nn.Module):
    """LLaMA-style block: x + attn(attn_norm(x)), then x + ffn(ffn_norm(x))."""

    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, eps=1e-6, rope_base=10000.0):
        super().__init__()
        self.attn_norm = RMSNorm(d_model, eps)
        self.attn = GroupedQueryAttention(d_model, num_heads, num_kv_heads, rope_base)
        self.ffn_norm = RMSNorm(d_model, eps)
        self.ffn = SwiGLU(d_model, d_ff)

    def forward(self, x, mask=None):
        x = x + self.attn(self.attn_norm(x), mask=mask)
        x = x + self.ffn(self.ffn_norm(x))
        return x
''',
        "fails": ["test_modern_block"],
        "says": "모든 키가 막힌 시퀀스에서 NaN/inf",
    },
]

# Graded full marks although they break the spec (the grader's gaps, kept out of MISTAKES): the
# why says what the grader did.
_OPEN_WHY = {}
OPEN = [dict(m, why=_OPEN_WHY[m["name"]]) for m in MISTAKES if m["name"] in _OPEN_WHY]
MISTAKES = [m for m in MISTAKES if m["name"] not in _OPEN_WHY]

# correct variants written on 2026-11-28 by an author who saw only the release notebook and
# the book (loops, library-style code, float64 inside): full marks on first contact
CORRECT += [
    {
        "name": "ok_decoder_block_residual_helper",
        "cell": "decoder_block",
        "source": (
            "class DecoderBlock(nn.Module):\n"
            "    '''Pre-norm decoder layer: causal self-attention, cross-attention "
            "on memory, FFN.'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, "
            "eps=1e-5):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout, causal=True)\n"
            "        self.cross_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout, causal=False)\n"
            "        self.ffn = FeedForward(d_model, d_ff, dropout)\n"
            "        self.norm1 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.norm2 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.norm3 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.dropout = nn.Dropout(dropout)\n"
            "\n"
            "    def _residual(self, x, norm, sublayer):\n"
            "        return x + self.dropout(sublayer(norm(x)))\n"
            "\n"
            "    def forward(self, x, memory, self_mask=None, memory_mask=None):\n"
            "        x = self._residual(x, self.norm1, lambda h: self.self_attn(h, "
            "mask=self_mask))\n"
            "        x = self._residual(x, self.norm2, lambda h: self.cross_attn(h,"
            " context=memory, mask=memory_mask))\n"
            "        x = self._residual(x, self.norm3, self.ffn)\n"
            "        return x\n"
        ),
        "why": (
            "A pre-norm residual helper applied to self-attention (causal, plus self_mask), "
            "cross-attention (queries from LN2(x), keys/values from memory, memory_mask) and FFN,"
            " in that order, with self.dropout once per sublayer."
        ),
    },
    {
        "name": "ok_decoder_block_sublayer_loop",
        "cell": "decoder_block",
        "source": (
            "class DecoderBlock(nn.Module):\n"
            "    '''Pre-norm decoder layer: causal self-attention, cross-attention "
            "on memory, FFN.'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, d_ff, dropout=0.0, "
            "eps=1e-5):\n"
            "        super().__init__()\n"
            "        self.self_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout, causal=True)\n"
            "        self.cross_attn = MultiHeadAttention(d_model, num_heads, "
            "dropout, causal=False)\n"
            "        self.ffn = FeedForward(d_model, d_ff, dropout)\n"
            "        self.norm1 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.norm2 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.norm3 = nn.LayerNorm(d_model, eps=eps)\n"
            "        self.dropout = nn.Dropout(dropout)\n"
            "\n"
            "    def forward(self, x, memory, self_mask=None, memory_mask=None):\n"
            "        plan = [\n"
            "            (self.norm1, self.self_attn, {'mask': self_mask}),\n"
            "            (self.norm2, self.cross_attn, {'context': memory, 'mask': "
            "memory_mask}),\n"
            "            (self.norm3, self.ffn, {}),\n"
            "        ]\n"
            "        for norm, layer, kwargs in plan:\n"
            "            x = x + self.dropout(layer(norm(x), **kwargs))\n"
            "        return x\n"
        ),
        "why": (
            "Iterates the three (norm, sublayer, extra args) triples in the formula's order, so "
            "outputs and dropout draws are identical."
        ),
    },
    {
        "name": "ok_mlm_bernoulli_chain",
        "cell": "mlm_mask",
        "source": (
            "def mlm_mask(input_ids, vocab_size, mask_id, special_ids, seed, "
            "p=0.15):\n"
            "    '''Hugging Face collator style: bernoulli(p), then bernoulli(0.8),"
            " then bernoulli(0.5).'''\n"
            "    gen = torch.Generator(device='cpu')\n"
            "    gen.manual_seed(seed)\n"
            "    shape = tuple(input_ids.shape)\n"
            "    device = input_ids.device\n"
            "    prob = torch.full(shape, float(p))\n"
            "    special = torch.zeros(shape, dtype=torch.bool, device=device)\n"
            "    for sid in special_ids:\n"
            "        special = special | (input_ids == sid)\n"
            "    selected = torch.bernoulli(prob, generator=gen).bool().to(device) "
            "& ~special\n"
            "    labels = input_ids.masked_fill(~selected, -100)\n"
            "    replaced = torch.bernoulli(torch.full(shape, 0.8), "
            "generator=gen).bool().to(device) & selected\n"
            "    inputs = input_ids.masked_fill(replaced, mask_id)\n"
            "    randomised = torch.bernoulli(torch.full(shape, 0.5), "
            "generator=gen).bool().to(device) & selected & ~replaced\n"
            "    words = torch.randint(vocab_size, shape, generator=gen, "
            "dtype=torch.long).to(device).to(input_ids.dtype)\n"
            "    inputs = torch.where(randomised, words, inputs)\n"
            "    return inputs, labels\n"
        ),
        "why": (
            "Independent Bernoulli(p) selection of non-special tokens; of those, 80% -> mask_id "
            "and half of the remaining 20% -> random id (10%), the rest kept (10%); masked_fill "
            "is out-of-place; every draw uses the seeded CPU generator."
        ),
    },
    {
        "name": "ok_gpt_reduce_blocks",
        "cell": "gpt_model",
        "source": (
            "class GPTBlock(nn.Module):\n"
            "    '''Pre-norm causal block: x + attn(norm1(x)), then x + "
            "ffn(norm2(x)). (B, T, d) -> (B, T, d).'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, d_ff):\n"
            "        super().__init__()\n"
            "        self.norm1 = nn.LayerNorm(d_model)\n"
            "        self.attn = MultiHeadAttention(d_model, num_heads, "
            "dropout=0.0, causal=True)\n"
            "        self.norm2 = nn.LayerNorm(d_model)\n"
            "        self.ffn = FeedForward(d_model, d_ff, dropout=0.0)\n"
            "\n"
            "    def forward(self, x):\n"
            "        x = torch.add(x, self.attn(self.norm1(x)))\n"
            "        return torch.add(x, self.ffn(self.norm2(x)))\n"
            "\n"
            "\n"
            "class GPTModel(nn.Module):\n"
            "    '''Decoder-only LM: forward(idx (B, T) long) -> logits (B, T, "
            "vocab_size).'''\n"
            "\n"
            "    def __init__(\n"
            "        self, vocab_size, context_length, d_model, num_heads, "
            "num_layers, d_ff, tie_weights=False\n"
            "    ):\n"
            "        super().__init__()\n"
            "        self.tok_emb = nn.Embedding(vocab_size, d_model)\n"
            "        self.pos_emb = nn.Embedding(context_length, d_model)\n"
            "        self.blocks = nn.ModuleList([GPTBlock(d_model, num_heads, "
            "d_ff) for _ in range(num_layers)])\n"
            "        self.final_norm = nn.LayerNorm(d_model)\n"
            "        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)\n"
            "        if tie_weights:\n"
            "            self.lm_head.weight = self.tok_emb.weight\n"
            "\n"
            "    def forward(self, idx):\n"
            "        import functools\n"
            "        pos = torch.arange(idx.shape[-1], device=idx.device)\n"
            "        x = self.tok_emb(idx) + self.pos_emb(pos).unsqueeze(0)\n"
            "        x = functools.reduce(lambda h, blk: blk(h), self.blocks, x)\n"
            "        x = self.final_norm(x)\n"
            "        return x @ self.lm_head.weight.T\n"
        ),
        "why": (
            "functools.reduce applies the blocks in order; x @ W^T is the bias-free linear head; "
            "everything else is the specified GPT forward."
        ),
    },
    {
        "name": "ok_modern_pair_loop_rope_head_loop",
        "cell": "modern_block",
        "source": (
            "def apply_rope(x, positions=None, base=10000.0):\n"
            "    '''Rotate pair (i, i + d/2) for each i in a Python loop.'''\n"
            "    d = x.shape[-1]\n"
            "    half = d // 2\n"
            "    work = torch.promote_types(x.dtype, torch.float32)\n"
            "    if positions is None:\n"
            "        positions = torch.arange(x.shape[-2], device=x.device)\n"
            "    p = positions.to(work)\n"
            "    xw = x.to(work)\n"
            "    first, second = [], []\n"
            "    for i in range(half):\n"
            "        theta = p * (base ** (-2.0 * i / d))\n"
            "        c, s = theta.cos(), theta.sin()\n"
            "        a, b = xw[..., i], xw[..., i + half]\n"
            "        first.append(a * c - b * s)\n"
            "        second.append(a * s + b * c)\n"
            "    if half == 0:\n"
            "        return x.clone()\n"
            "    return torch.stack(first + second, dim=-1).to(x.dtype)\n"
            "\n"
            "\n"
            "class GroupedQueryAttention(nn.Module):\n"
            "    '''Causal GQA with RoPE, no biases: forward(x (B, T, d_model), "
            "mask=None) -> (B, T, d_model).'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, num_kv_heads, "
            "rope_base=10000.0):\n"
            "        super().__init__()\n"
            "        self.num_heads, self.num_kv_heads = num_heads, num_kv_heads\n"
            "        self.d_head = d_model // num_heads\n"
            "        self.rope_base = rope_base\n"
            "        self.W_query = nn.Linear(d_model, d_model, bias=False)\n"
            "        self.W_key = nn.Linear(d_model, num_kv_heads * self.d_head, "
            "bias=False)\n"
            "        self.W_value = nn.Linear(d_model, num_kv_heads * self.d_head, "
            "bias=False)\n"
            "        self.out_proj = nn.Linear(d_model, d_model, bias=False)\n"
            "\n"
            "    def forward(self, x, mask=None):\n"
            "        B, T, _ = x.shape\n"
            "        dh = self.d_head\n"
            "        r = self.num_heads // self.num_kv_heads\n"
            "        pos = torch.arange(T, device=x.device)\n"
            "        Q = apply_rope(self.W_query(x).view(B, T, self.num_heads, "
            "dh).transpose(1, 2), pos, self.rope_base)\n"
            "        K = apply_rope(self.W_key(x).view(B, T, self.num_kv_heads, "
            "dh).transpose(1, 2), pos, self.rope_base)\n"
            "        V = self.W_value(x).view(B, T, self.num_kv_heads, "
            "dh).transpose(1, 2)\n"
            "        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, "
            "device=x.device))\n"
            "        keep = causal if mask is None else torch.broadcast_to(mask & "
            "causal, (B, self.num_heads, T, T))\n"
            "        heads = []\n"
            "        for i in range(self.num_heads):\n"
            "            s = Q[:, i] @ K[:, i // r].transpose(-2, -1) / "
            "math.sqrt(dh)\n"
            "            ki = keep if keep.dim() == 2 else keep[:, i]\n"
            "            s = s.masked_fill(~ki, torch.finfo(s.dtype).min)\n"
            "            heads.append(torch.softmax(s, dim=-1) @ V[:, i // r])\n"
            "        return self.out_proj(torch.cat(heads, dim=-1))\n"
            "\n"
            "\n"
            "class ModernBlock(nn.Module):\n"
            "    '''LLaMA-style block: x + attn(attn_norm(x)), then x + "
            "ffn(ffn_norm(x)).'''\n"
            "\n"
            "    def __init__(self, d_model, num_heads, num_kv_heads, d_ff, "
            "eps=1e-6, rope_base=10000.0):\n"
            "        super().__init__()\n"
            "        self.attn_norm = RMSNorm(d_model, eps)\n"
            "        self.attn = GroupedQueryAttention(d_model, num_heads, "
            "num_kv_heads, rope_base)\n"
            "        self.ffn_norm = RMSNorm(d_model, eps)\n"
            "        self.ffn = SwiGLU(d_model, d_ff)\n"
            "\n"
            "    def forward(self, x, mask=None):\n"
            "        x = torch.add(x, self.attn(self.attn_norm(x), mask=mask))\n"
            "        return torch.add(x, self.ffn(self.ffn_norm(x)))\n"
        ),
        "why": (
            "Per-pair rotation loop and a per-query-head loop (head i uses kv head i // r); "
            "concatenating head outputs along features equals transpose+reshape; no dropout, so "
            "looping is exact."
        ),
    },
]
