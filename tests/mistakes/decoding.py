"""Plausible student mistakes for assignment ``decoding`` (graded by tests/test_mistakes.py)."""

ASSIGNMENT = "decoding"
MISTAKES = [
    {
        "name": "greedy_finished_rows_keep_going",
        "kind": "logic",
        "cell": "greedy_decode",
        "source": '''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens."""
    model = TableLM(table)
    for _ in range(max_new_tokens):
        nxt = model(idx)[:, -1, :].argmax(dim=-1, keepdim=True)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool((idx == eos_id).any(dim=1).all()):
            break
    return idx
''',
        "fails": ["test_greedy_decode"],
        "says": "rows finish at different steps",
    },
    {
        "name": "greedy_done_mask_on_cpu",
        "kind": "device",
        "cell": "greedy_decode",
        "source": '''def greedy_decode(table, idx, max_new_tokens, eos_id=None):
    """Greedy decoding with TableLM(table). idx (B, T) long -> (B, T + n), n <= max_new_tokens."""
    model = TableLM(table)
    done = torch.zeros(idx.shape[0], 1, dtype=torch.bool)
    for _ in range(max_new_tokens):
        nxt = model(idx)[:, -1, :].argmax(dim=-1, keepdim=True)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return idx
''',
        "fails": ["test_greedy_decode"],
        "says": "장치(device)",
    },
    {
        "name": "top_k_keeps_exactly_k",
        "kind": "logic",
        "cell": "top_k_filter",
        "source": '''def top_k_filter(logits, k):
    """Keep the k largest logits per row, the rest -> -inf."""
    k = min(k, logits.shape[-1])
    top = torch.topk(logits, k, dim=-1).indices
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, top, True)
    return logits.masked_fill(~keep, float("-inf"))
''',
        "fails": ["test_top_k_filter"],
        "says": "ties at the k-th value",
    },
    {
        "name": "top_k_k_larger_than_vocab",
        "kind": "logic",
        "cell": "top_k_filter",
        "source": '''def top_k_filter(logits, k):
    """Keep the k largest logits per row, the rest -> -inf."""
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, float("-inf"))
''',
        "fails": ["test_top_k_filter"],
        "says": "out of range",
    },
    {
        "name": "top_k_fills_minus_1e9",
        "kind": "constant",
        "cell": "top_k_filter",
        "source": '''def top_k_filter(logits, k):
    """Keep the k largest logits per row, the rest -> -1e9."""
    k = min(k, logits.shape[-1])
    kth = torch.topk(logits, k, dim=-1).values[..., -1:]
    return logits.masked_fill(logits < kth, -1e9)
''',
        "fails": ["test_top_k_filter"],
        "says": "-inf",
    },
    {
        "name": "top_p_drops_the_crossing_token",
        "kind": "logic",
        "cell": "top_p_filter",
        "source": '''def top_p_filter(logits, p):
    """Nucleus filter: drop the tokens after the cumulative probability exceeds p."""
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    cum = torch.cumsum(torch.softmax(sorted_logits, dim=-1), dim=-1)
    drop_sorted = cum > p
    drop_sorted[..., 0] = False
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    return logits.masked_fill(drop, float("-inf"))
''',
        "fails": ["test_top_p_filter", "test_generate"],
        "says": "crosses p",
    },
    {
        "name": "top_p_without_sorting",
        "kind": "logic",
        "cell": "top_p_filter",
        "source": '''def top_p_filter(logits, p):
    """Nucleus filter (cumulative mass in token order)."""
    probs = torch.softmax(logits, dim=-1)
    mass_before = torch.cumsum(probs, dim=-1) - probs
    keep = mass_before < p
    keep = keep | (logits == logits.amax(dim=-1, keepdim=True))
    return logits.masked_fill(~keep, float("-inf"))
''',
        "fails": ["test_top_p_filter", "test_generate"],
        "says": "top_p_filter [",
    },
    {
        "name": "top_p_writes_into_logits",
        "kind": "in-place",
        "cell": "top_p_filter",
        "source": '''def top_p_filter(logits, p):
    """Nucleus filter, written into the logits."""
    if p >= 1.0:
        return logits
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    drop_sorted = torch.cumsum(probs, dim=-1) - probs >= p
    drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
    logits[drop] = float("-inf")
    return logits
''',
        "fails": ["test_top_p_filter"],
        "says": "in-place",
    },
    {
        "name": "top_p_naive_softmax_overflows",
        "kind": "constant",
        "cell": "top_p_filter",
        "source": '''def top_p_filter(logits, p):
    """Nucleus filter with exp / sum for the probabilities."""
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    e = torch.exp(sorted_logits)
    probs = e / e.sum(dim=-1, keepdim=True)
    keep_sorted = torch.cumsum(probs, dim=-1) - probs < p
    keep_sorted[..., 0] = True
    keep = torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)
    return logits.masked_fill(~keep, float("-inf"))
''',
        "fails": ["test_top_p_filter"],
        "says": "exp overflows",
    },
    {
        "name": "repetition_penalty_divides_every_logit",
        "kind": "logic",
        "cell": "apply_repetition_penalty",
        "source": '''def apply_repetition_penalty(logits, prev_ids, penalty):
    """CTRL paper: divide the logit of every token seen before by penalty."""
    seen = logits.gather(-1, prev_ids)
    return logits.scatter(-1, prev_ids, seen / penalty)
''',
        "fails": ["test_repetition_penalty", "test_generate"],
        "says": "negative logits are multiplied",
    },
    {
        "name": "repetition_penalty_once_per_occurrence",
        "kind": "logic",
        "cell": "apply_repetition_penalty",
        "source": '''def apply_repetition_penalty(logits, prev_ids, penalty):
    """Penalise each token of prev_ids in turn."""
    out = logits.clone()
    for b in range(prev_ids.shape[0]):
        for t in prev_ids[b].tolist():
            z = out[b, t]
            out[b, t] = z / penalty if z > 0 else z * penalty
    return out
''',
        "fails": ["test_repetition_penalty", "test_generate"],
        "says": "repeated ids are penalised once",
    },
    {
        "name": "repetition_penalty_scatter_in_place",
        "kind": "in-place",
        "cell": "apply_repetition_penalty",
        "source": '''def apply_repetition_penalty(logits, prev_ids, penalty):
    """Hugging Face rule, written straight into logits."""
    if prev_ids.shape[-1] == 0:
        return logits
    seen = logits.gather(-1, prev_ids)
    seen = torch.where(seen > 0, seen / penalty, seen * penalty)
    return logits.scatter_(-1, prev_ids, seen)
''',
        "fails": ["test_repetition_penalty"],
        "says": "in-place",
    },
    {
        "name": "ngram_prefix_slice_minus_zero",
        "kind": "logic",
        "cell": "no_repeat_ngram_ban",
        "source": '''def no_repeat_ngram_ban(logits, ids, n):
    """Ban every token that would complete an n-gram already in ids."""
    L = ids.shape[-1]
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, -(n - 1) :].unsqueeze(1)
    match = (grams[..., :-1] == prefix).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
        "fails": ["test_no_repeat_ngram"],
        "says": "grams[..., :-1]",
    },
    {
        "name": "ngram_short_sequence_crashes",
        "kind": "logic",
        "cell": "no_repeat_ngram_ban",
        "source": '''def no_repeat_ngram_ban(logits, ids, n):
    """Ban every token that would complete an n-gram already in ids."""
    if n <= 0:
        return logits.clone()
    L = ids.shape[-1]
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1 :].unsqueeze(1)
    match = (grams[..., :-1] == prefix).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
        "fails": ["test_no_repeat_ngram"],
        "says": "ids.unfold",
    },
    {
        "name": "ngram_ban_mask_on_cpu",
        "kind": "device",
        "cell": "no_repeat_ngram_ban",
        "source": '''def no_repeat_ngram_ban(logits, ids, n):
    """Ban every token that would complete an n-gram already in ids."""
    L = ids.shape[-1]
    if n <= 0 or L < n:
        return logits.clone()
    grams = ids.unfold(-1, n, 1)
    prefix = ids[:, L - n + 1 :].unsqueeze(1)
    match = (grams[..., :-1] == prefix).all(dim=-1)
    hits = torch.zeros(logits.shape, dtype=torch.long)
    hits = hits.scatter_add(-1, grams[..., -1], match.long())
    return logits.masked_fill(hits > 0, float("-inf"))
''',
        "fails": ["test_no_repeat_ngram", "test_generate"],
        "says": "장치(device)",
    },
    {
        "name": "generate_new_generator_every_step",
        "kind": "randomness",
        "cell": "generate",
        "source": '''def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n)."""
    model = TableLM(table)
    done = torch.zeros(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        gen = make_generator(seed, idx.device)
        logits = model(idx)[:, -1, :]
        logits = apply_repetition_penalty(logits, idx, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, idx, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1.0:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return idx
''',
        "fails": ["test_generate"],
        "says": "생성기",
    },
    {
        "name": "generate_multinomial_without_generator",
        "kind": "randomness",
        "cell": "generate",
        "source": '''def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n)."""
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    done = torch.zeros(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(idx)[:, -1, :]
        logits = apply_repetition_penalty(logits, idx, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, idx, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1.0:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return idx
''',
        "fails": ["test_generate"],
        "says": "생성기",
    },
    {
        "name": "generate_gumbel_max_trick",
        "kind": "randomness",
        "cell": "generate",
        "source": '''def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n)."""
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    done = torch.zeros(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(idx)[:, -1, :]
        logits = apply_repetition_penalty(logits, idx, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, idx, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            logits = logits / temperature
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1.0:
                logits = top_p_filter(logits, top_p)
            u = torch.rand(logits.shape, generator=gen, dtype=logits.dtype).to(logits.device)
            nxt = (logits - torch.log(-torch.log(u))).argmax(dim=-1, keepdim=True)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return idx
''',
        "fails": ["test_generate"],
        "says": "생성기",
    },
    {
        "name": "generate_temperature_after_filters",
        "kind": "logic",
        "cell": "generate",
        "source": '''def generate(
    table,
    idx,
    max_new_tokens,
    seed,
    temperature=1.0,
    top_k=None,
    top_p=None,
    repetition_penalty=1.0,
    no_repeat_ngram_size=0,
    eos_id=None,
):
    """Seeded sampling with TableLM(table). idx (B, T) long -> (B, T + n)."""
    model = TableLM(table)
    gen = make_generator(seed, idx.device)
    done = torch.zeros(idx.shape[0], 1, dtype=torch.bool, device=idx.device)
    for _ in range(max_new_tokens):
        logits = model(idx)[:, -1, :]
        logits = apply_repetition_penalty(logits, idx, repetition_penalty)
        logits = no_repeat_ngram_ban(logits, idx, no_repeat_ngram_size)
        if temperature == 0:
            nxt = logits.argmax(dim=-1, keepdim=True)
        else:
            if top_k:
                logits = top_k_filter(logits, top_k)
            if top_p is not None and top_p < 1.0:
                logits = top_p_filter(logits, top_p)
            probs = torch.softmax(logits / temperature, dim=-1)
            nxt = torch.multinomial(probs, num_samples=1, generator=gen)
        if eos_id is not None:
            nxt = nxt.masked_fill(done, eos_id)
            done = done | (nxt == eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        if eos_id is not None and bool(done.all()):
            break
    return idx
''',
        "fails": ["test_generate"],
        "says": "top_p",
    },
    {
        "name": "beam_no_length_penalty",
        "kind": "logic",
        "cell": "beam_search",
        "source": "def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, "
        '''length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens, score)."""
    if max_new_tokens <= 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return 1.0

    beams = idx
    sums = torch.zeros(1, dtype=torch.float64, device=idx.device)
    best, best_score = None, float("-inf")
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (sums[:, None] + logp).reshape(-1)
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        rows, new_sums = [], []
        for rank, (s, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(flat, V)
            seq = torch.cat([beams[b], beams.new_tensor([tok])])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size and s / lp(t) > best_score:
                    best, best_score = seq, s / lp(t)
            elif len(rows) < beam_size:
                rows.append(seq)
                new_sums.append(s)
        if not rows:
            return best.unsqueeze(0), best_score
        beams = torch.stack(rows)
        sums = torch.tensor(new_sums, dtype=torch.float64, device=idx.device)
    final = sums / lp(max_new_tokens)
    i = int(final.argmax())
    if float(final[i]) > best_score:
        best, best_score = beams[i], float(final[i])
    return best.unsqueeze(0), best_score
''',
        "fails": ["test_beam_search"],
        "says": "length penalty changes the winner",
    },
    {
        "name": "beam_length_counts_the_prompt",
        "kind": "logic",
        "cell": "beam_search",
        "source": "def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, "
        '''length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens, score)."""
    if max_new_tokens <= 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5.0 + idx.shape[1] + n) / 6.0) ** length_penalty

    beams = idx
    sums = torch.zeros(1, dtype=torch.float64, device=idx.device)
    best, best_score = None, float("-inf")
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (sums[:, None] + logp).reshape(-1)
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        rows, new_sums = [], []
        for rank, (s, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(flat, V)
            seq = torch.cat([beams[b], beams.new_tensor([tok])])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size and s / lp(t) > best_score:
                    best, best_score = seq, s / lp(t)
            elif len(rows) < beam_size:
                rows.append(seq)
                new_sums.append(s)
        if not rows:
            return best.unsqueeze(0), best_score
        beams = torch.stack(rows)
        sums = torch.tensor(new_sums, dtype=torch.float64, device=idx.device)
    final = sums / lp(max_new_tokens)
    i = int(final.argmax())
    if float(final[i]) > best_score:
        best, best_score = beams[i], float(final[i])
    return best.unsqueeze(0), best_score
''',
        "fails": ["test_beam_search"],
        "says": "length penalty changes the winner",
    },
    {
        "name": "beam_returns_first_finished",
        "kind": "logic",
        "cell": "beam_search",
        "source": "def beam_search(table, idx, beam_size, max_new_tokens, eos_id=None, "
        '''length_penalty=0.0):
    """Beam search with TableLM(table) for one prompt idx (1, T) -> (tokens, score)."""
    if max_new_tokens <= 0:
        return idx, 0.0
    model = TableLM(table)

    def lp(n):
        return ((5.0 + n) / 6.0) ** length_penalty

    beams = idx
    sums = torch.zeros(1, dtype=torch.float64, device=idx.device)
    best, best_score = None, float("-inf")
    for t in range(1, max_new_tokens + 1):
        logp = F.log_softmax(model(beams)[:, -1, :].double(), dim=-1)
        V = logp.shape[-1]
        cand = (sums[:, None] + logp).reshape(-1)
        top = torch.topk(cand, min(2 * beam_size, cand.numel()))
        rows, new_sums = [], []
        for rank, (s, flat) in enumerate(zip(top.values.tolist(), top.indices.tolist())):
            b, tok = divmod(flat, V)
            seq = torch.cat([beams[b], beams.new_tensor([tok])])
            if eos_id is not None and tok == eos_id:
                if rank < beam_size:
                    return seq.unsqueeze(0), s / lp(t)
            elif len(rows) < beam_size:
                rows.append(seq)
                new_sums.append(s)
        if not rows:
            return best.unsqueeze(0), best_score
        beams = torch.stack(rows)
        sums = torch.tensor(new_sums, dtype=torch.float64, device=idx.device)
    final = sums / lp(max_new_tokens)
    i = int(final.argmax())
    if float(final[i]) > best_score:
        best, best_score = beams[i], float(final[i])
    return best.unsqueeze(0), best_score
''',
        "fails": ["test_beam_search"],
        "says": "length penalty changes the winner",
    },
]
