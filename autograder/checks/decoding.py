"""Hidden checks for assignment ``decoding`` (chapter 9: 디코딩 전략).

The student's functions take data only: logits, token ids, numbers, and for the decoding loops a
logits table that the notebook's given ``TableLM`` turns into a model (next-token logits from the
last token, or the last two). Every result is compared exactly with ``solutions.decoding`` run on
the same ``TableLM`` (``REFERENCE`` below):

- ``greedy_decode``: argmax per step, EOS per row (finished rows receive EOS, early stop).
- ``top_k_filter`` / ``top_p_filter``: batched and 1-d logits, ties (top-k keeps values equal to
  the k-th; top-p keeps the lower token id first), k > V, the token that crosses p kept, -inf
  inputs, logits in the thousands, float16/bfloat16; dropped entries must be exactly -inf.
- ``apply_repetition_penalty``: the Hugging Face sign rule, repeated ids penalised once.
- ``no_repeat_ngram_ban``: brute-force-proven reference, including the last complete n-gram.
- ``generate``: seeded sampling gives the reference's tokens for the same seed (one
  torch.multinomial call per step on the student's generator), reproducibly.
- ``beam_search``: tokens and GNMT-penalised score (to float64 accuracy: the notebook asks for
  float64 log-probabilities), EOS hypotheses, beam 1 = greedy.
"""

import pytest
import torch
import torch.nn as nn

from autograder.judge.checking import CheckFailed, assert_close, extreme, fail, randn
from solutions import decoding as ref

F16, BF16, F32, F64 = torch.float16, torch.bfloat16, torch.float32, torch.float64
NEG_INF = float("-inf")


# ----------------------------------------------------------------------------- the given model


class TableLM(nn.Module):
    """Same as the notebook's given cell: logits (B, T, V) read from table (V, V) or (V, V, V)."""

    def __init__(self, table):
        super().__init__()
        self.table = table

    def forward(self, idx):
        if self.table.dim() == 2:
            return self.table[idx]
        before = torch.cat([idx[:, :1], idx[:, :-1]], dim=1)
        return self.table[before, idx]


def make_generator(seed, device):
    """Same as the notebook's given helper: a seeded generator for ``device``."""
    device = torch.device(device)
    return torch.Generator(device=device if device.type == "cuda" else "cpu").manual_seed(seed)


def _greedy(table, idx, max_new_tokens, eos_id=None):
    return ref.greedy_decode(TableLM(table), idx, max_new_tokens, eos_id)


def _generate(table, idx, max_new_tokens, seed, **options):
    gen = make_generator(seed, idx.device)
    return ref.generate(TableLM(table), idx, max_new_tokens, generator=gen, **options)


def _beam(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    return ref.beam_search(TableLM(table), idx, beam_size, max_new_tokens, eos_id, length_penalty)


REFERENCE = {
    "greedy_decode": _greedy,
    "top_k_filter": ref.top_k_filter,
    "top_p_filter": ref.top_p_filter,
    "apply_repetition_penalty": ref.apply_repetition_penalty,
    "no_repeat_ngram_ban": ref.no_repeat_ngram_ban,
    "generate": _generate,
    "beam_search": _beam,
    "TableLM": TableLM,
    "make_generator": make_generator,
}


def compare(student, name, case, args, kwargs, inputs, rtol=None, atol=None, hint=""):
    """Call the student's ``name`` and compare with REFERENCE[name] on the same arguments; a
    wrong result that a known misconception gives is named (MISCONCEPTIONS)."""
    expected = REFERENCE[name](*args, **kwargs)
    got = student.call(name, *args, **kwargs)
    known = MISCONCEPTIONS[name](*args, **kwargs)
    try:
        assert_close(got, expected, f"{name} [{case}]", inputs, rtol, atol, misconceptions=known)
    except CheckFailed as e:
        raise CheckFailed(str(e) + hint) from None
    return got


# ----------------------------------------------------------------------------- misconceptions
# Known mistakes, and the value each gives on a check's inputs (None where those inputs cannot
# show it): a wrong result that matches one is named in the feedback (checking.diagnose). The
# *_variant functions are the reference computation with one known mistake switched on.


def greedy_variant(
    table, idx, max_new_tokens, eos_id, force_eos=True, stop_on_any=False, prompt_counts=False
):
    """Greedy decoding where finished rows are not forced to eos_id (force_eos=False), where
    the loop stops once any row has produced eos_id (stop_on_any), or where an eos_id in the
    prompt already finishes its row (prompt_counts)."""
    model, start = TableLM(table), 0 if prompt_counts else idx.shape[1]
    for _ in range(max_new_tokens):
        nxt = model(idx)[:, -1, :].argmax(dim=-1, keepdim=True)
        if force_eos:
            nxt = nxt.masked_fill((idx[:, start:] == eos_id).any(1, keepdim=True), eos_id)
        idx = torch.cat([idx, nxt], dim=1)
        finished = (idx[:, start:] == eos_id).any(1)
        if bool(finished.any() if stop_on_any else finished.all()):
            break
    return idx


EOS_ZERO = (
    "eos_id = 0 을 eos_id 가 없는 것처럼 다뤘습니다: `if eos_id:` 는 토큰 번호 0 을 거짓으로 "
    "봅니다. `if eos_id is not None:` 으로 확인하세요"
)


def greedy_misconceptions(table, idx, max_new_tokens, eos_id=None):
    return {
        EOS_ZERO: lambda: _greedy(table, idx, max_new_tokens) if eos_id == 0 else None,
        "시퀀스 종료 토큰(EOS)을 낸 행이 다음 토큰을 계속 생성했습니다. 끝난 행에는 이후 스텝마다 "
        "eos_id 를 넣고, 모든 행이 끝났을 때 멈추세요": lambda: (
            None if eos_id is None else greedy_variant(table, idx, max_new_tokens, eos_id, False)
        ),
        "프롬프트 안의 eos_id 까지 세어, 그 행을 처음부터 끝난 것으로 보았습니다. 끝났는지는 "
        "새로 생성한 토큰만 보고 정하세요 (프롬프트는 그대로 둡니다)": lambda: (
            None
            if eos_id is None
            else greedy_variant(table, idx, max_new_tokens, eos_id, prompt_counts=True)
        ),
        "한 행이 시퀀스 종료 토큰(EOS)을 내자 모든 행의 생성을 멈췄습니다. 끝난 행에는 eos_id 를 "
        "채우며 계속하고, 모든 행이 끝났을 때만 멈추세요 (done.all())": lambda: (
            None
            if eos_id is None
            else greedy_variant(table, idx, max_new_tokens, eos_id, stop_on_any=True)
        ),
    }


def top_k_misconceptions(logits, k):
    k = min(int(k), logits.shape[-1])
    top = torch.topk(logits, k, dim=-1)
    return {
        "k 번째로 큰 값과 같은 로짓(동점)을 버리고 정확히 k 개만 남겼습니다. k 번째로 큰 값을 구해 "
        "그보다 작은 로짓만 -inf 로 바꾸세요 (logits < kth)": lambda: logits.masked_fill(
            ~torch.zeros_like(logits, dtype=torch.bool).scatter(-1, top.indices, True), NEG_INF
        ),
        '버린 토큰에 -1e9 를 넣었습니다. 버린 자리는 정확히 -inf (float("-inf")) 로 두세요: '
        "-1e9 는 float16 에 담기지 않고, 로짓이 -1e9 보다 작으면 버린 토큰이 남긴 토큰보다 "
        "커집니다": lambda: logits.masked_fill(logits < top.values[..., -1:], -1e9),
    }


def nucleus_variant(logits, p, keep, flip=False):
    """top_p_filter deciding in sorted order with keep(cumsum, probs) (the first token always
    kept); flip: sort ascending, then flip (ties in descending token id order)."""
    if flip:
        sorted_logits, order = torch.sort(logits, dim=-1, stable=True)
        sorted_logits, order = sorted_logits.flip(-1), order.flip(-1)
    else:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    kept = keep(torch.cumsum(probs, dim=-1), probs)
    kept[..., 0] = True
    return logits.masked_fill(~torch.zeros_like(kept).scatter(-1, order, kept), NEG_INF)


def unsorted_nucleus(logits, p):
    """Nucleus decided on the cumulative mass in token id order (the argmax kept)."""
    probs = torch.softmax(logits, dim=-1)
    keep = torch.cumsum(probs, dim=-1) - probs < p
    keep = keep | (logits == logits.amax(dim=-1, keepdim=True))
    return logits.masked_fill(~keep, NEG_INF)


def naive_nucleus(logits, p):
    """Nucleus with probabilities exp(x) / sum(exp(x)) (no max subtracted); None without
    overflow."""
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True, stable=True)
    e = torch.exp(sorted_logits)
    if not bool(torch.isinf(e).any()):
        return None
    probs = e / e.sum(dim=-1, keepdim=True)
    kept = torch.cumsum(probs, dim=-1) - probs < p
    kept[..., 0] = True
    return logits.masked_fill(~torch.zeros_like(kept).scatter(-1, order, kept), NEG_INF)


def unstable_nucleus(logits, p):
    """top_p_filter with an unstable sort (ties in whatever order torch.sort leaves them)."""
    sorted_logits, order = torch.sort(logits, dim=-1, descending=True)
    probs = torch.softmax(sorted_logits, dim=-1)
    kept = torch.cumsum(probs, dim=-1) - probs < p
    kept[..., 0] = True
    return logits.masked_fill(~torch.zeros_like(kept).scatter(-1, order, kept), NEG_INF)


def top_p_misconceptions(logits, p):
    """The overflow comes first: where it keeps only the argmax, "the crossing token dropped"
    may give the same, but test_top_p_filter's first case already fails that one."""
    below = p < 1
    return {
        "p = 1 인데 토큰을 버렸습니다: 앞 토큰들의 확률 합이 반올림으로 1.0 이 되면 `< p` 가 "
        "거짓이 됩니다. p >= 1 이면 모든 토큰을 남기세요 (logits.clone())": lambda: (
            None if below else nucleus_variant(logits, p, lambda cum, probs: cum - probs < p)
        ),
        "확률이 같은 토큰의 순서를 정하지 않는 정렬(stable=False, argsort)을 썼습니다. 경계에 "
        "동점이 있으면 id 가 작은 토큰이 먼저 오도록 torch.sort(..., descending=True, "
        "stable=True) 로 정렬하세요": lambda: unstable_nucleus(logits, p) if below else None,
        "확률을 exp(x) / sum(exp(x)) 로 직접 계산해 exp 가 오버플로했습니다 (inf / inf = nan). "
        "torch.softmax 를 쓰거나 최댓값을 뺀 뒤 exp 를 계산하세요": lambda: naive_nucleus(
            logits, p
        ),
        "누적 확률을 p 보다 크게 만드는 토큰까지 버렸습니다 (cumsum > p). 그 토큰도 뉴클리어스에 "
        "들어갑니다: 앞 토큰들의 확률 합(cumsum - probs)이 p 보다 작은 토큰을 남기세요": lambda: (
            nucleus_variant(logits, p, lambda cum, probs: cum <= p)
        ),
        "앞 토큰들의 확률 합이 정확히 p 인 토큰까지 남겼습니다 (<= p). 합이 이미 p 에 이르렀으니 "
        "그 토큰은 버립니다: 앞 토큰들의 합 < p 인 토큰만 남기세요": lambda: (
            nucleus_variant(logits, p, lambda cum, probs: cum - probs <= p) if below else None
        ),
        "확률 순으로 정렬하지 않고 토큰 id 순서로 확률을 누적했습니다. torch.sort(descending=True, "
        "stable=True) 로 정렬해 누적한 뒤, 결정을 원래 자리로 되돌리세요 (scatter)": lambda: (
            unsorted_nucleus(logits, p)
        ),
        "오름차순 정렬을 뒤집어(flip) 내림차순을 만들어서, 확률이 같은 토큰 중 id 가 큰 쪽이 먼저 "
        "왔습니다. torch.sort(descending=True, stable=True) 로 정렬하면 id 가 작은 쪽이 먼저 "
        "옵니다": lambda: (
            nucleus_variant(logits, p, lambda cum, probs: cum - probs < p, True) if below else None
        ),
    }


def penalty_misconceptions(logits, prev_ids, penalty):
    def sign_rule(z, factor):
        return torch.where(z > 0, z / factor, z * factor)

    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, prev_ids, True)
    ones = torch.ones_like(prev_ids, dtype=logits.dtype)
    count = torch.zeros_like(logits).scatter_add(-1, prev_ids, ones)
    return {
        "반복된 토큰의 로짓을 부호와 상관없이 penalty 로 나누었습니다 (CTRL 논문의 식). 음수 "
        "로짓을 나누면 0 에 가까워져 확률이 오히려 커집니다: 양수 로짓은 나누고 음수 로짓은 "
        "곱하세요": lambda: logits.scatter(-1, prev_ids, logits.gather(-1, prev_ids) / penalty),
        "prev_ids 에 여러 번 나온 토큰에 페널티를 나온 횟수만큼 거듭 적용했습니다. 나온 횟수와 "
        "상관없이 한 번만 적용하세요": lambda: torch.where(
            seen, sign_rule(logits, penalty**count), logits
        ),
        "모든 행의 prev_ids 를 합쳐 모든 행에 페널티를 적용했습니다. 각 행은 자기 행의 prev_ids 에 "
        "나온 토큰만 깎습니다": lambda: torch.where(
            seen.any(0, keepdim=True), sign_rule(logits, penalty), logits
        ),
    }


def ngram_misconceptions(logits, ids, n):
    def skip_last_gram():
        L = ids.shape[-1]
        if n <= 0 or L < n:
            return None
        grams = ids.unfold(-1, n, 1)[:, :-1]
        match = (grams[..., :-1] == ids[:, L - n + 1 :].unsqueeze(1)).all(dim=-1)
        hits = torch.zeros(logits.shape, dtype=torch.long, device=logits.device)
        hits = hits.scatter_add(-1, grams[..., -1], match.long())
        return logits.masked_fill(hits > 0, NEG_INF)

    return {
        "L == n 인 ids 를 n-그램이 없는 것처럼 그대로 두었습니다. ids 전체가 n-그램 하나이고, 그 "
        "앞 n - 1 개가 접두사(마지막 n - 1 개)와 같으면 마지막 토큰을 금지합니다 (L < n 일 때만 "
        "그대로)": lambda: logits.clone() if 0 < n == ids.shape[-1] else None,
        "ids 의 마지막 완전한 n-그램을 세지 않았습니다. 마지막 n-그램도 이미 나온 n-그램입니다: "
        "ids.unfold(-1, n, 1) 의 n-그램을 모두 보세요": skip_last_gram,
    }


def generate_variant(table, idx, max_new_tokens, seed, late, **options):
    """The reference generate with late="temperature" (divided by the temperature after top-k
    and top-p), late="penalty" (repetition penalty and n-gram ban after them) or
    late="top_k" (top-p before top-k)."""
    o = {"temperature": 1.0, "repetition_penalty": 1.0, "no_repeat_ngram_size": 0, **options}
    t, k, p = o["temperature"], o.get("top_k"), o.get("top_p")
    gen = make_generator(seed, idx.device)

    def penalise(z, ids):
        z = ref.apply_repetition_penalty(z, ids, o["repetition_penalty"])
        return ref.no_repeat_ngram_ban(z, ids, o["no_repeat_ngram_size"])

    def pick(z, ids):
        if t == 0:
            return penalise(z, ids).argmax(dim=-1, keepdim=True)
        z = z if late == "penalty" else penalise(z, ids)
        z = z if late == "temperature" else z / t
        nucleus = p is not None and p < 1
        if late == "top_k":
            z = ref.top_p_filter(z, p) if nucleus else z
        z = ref.top_k_filter(z, k) if k else z
        if late != "top_k":
            z = ref.top_p_filter(z, p) if nucleus else z
        z = penalise(z, ids) if late == "penalty" else z
        z = z / t if late == "temperature" else z
        return torch.multinomial(torch.softmax(z, dim=-1), 1, generator=gen)

    step = lambda ids: TableLM(table)(ids)[:, -1, :]  # noqa: E731
    return ref._decode_loop(step, None, idx, max_new_tokens, options.get("eos_id"), pick)


def generate_misconceptions(table, idx, max_new_tokens, seed, **options):
    """Where inputs give two of these the same tokens, the first named is the one the earlier
    cases of test_generate do not rule out (top-p before top-k needs both filters, which only
    the last cases use; dividing late by the temperature shows on the second case already)."""
    t = options.get("temperature", 1.0)
    filters = bool(options.get("top_k")) or options.get("top_p", 1.0) not in (None, 1.0)
    penalises = (
        options.get("repetition_penalty", 1.0) != 1 or options.get("no_repeat_ngram_size", 0) > 0
    )
    args = (table, idx, max_new_tokens, seed)
    return {
        "top-p 필터를 top-k 필터보다 먼저 적용했습니다. top-k → top-p 순서로 적용하세요": lambda: (
            generate_variant(*args, "top_k", **options)
            if options.get("top_k") and options.get("top_p", 1.0) not in (None, 1.0)
            else None
        ),
        "top-k/top-p 필터를 적용한 뒤에 온도(temperature)로 나누었습니다. 온도가 분포를 바꾸므로 "
        "온도로 먼저 나눈 뒤 필터를 적용하세요": lambda: (
            generate_variant(*args, "temperature", **options)
            if filters and t not in (0, 1)
            else None
        ),
        "반복 페널티와 n-그램 금지를 온도·top-k·top-p 뒤에 적용했습니다. 반복 페널티 → n-그램 "
        "금지 → 온도 → top-k → top-p 순서로 적용하세요": lambda: (
            generate_variant(*args, "penalty", **options) if filters and penalises else None
        ),
    }


def beam_variant(table, idx, beam_size, max_new_tokens, eos_id, alpha, **mistake):
    """Beam search (as the reference, without its early stop) with one known mistake: alpha=0
    (no length penalty), offset (added to |Y| in lp), width (candidates per step: width *
    beam_size, not 2), any_rank (EOS candidates finish outside the top beam_size), first (the
    first finished hypothesis returned), raw_final (final beams compared by their sums),
    final_wins_tie (a final beam that ties the best finished hypothesis replaces it),
    low (log-probabilities computed in this dtype, then made float64)."""
    if max_new_tokens <= 0:
        return idx, 0.0
    offset, width = mistake.get("offset", 0), mistake.get("width", 2)
    lp = lambda n: ((5.0 + offset + n) / 6.0) ** alpha  # noqa: E731
    model, beams, sums = TableLM(table), idx, torch.zeros(1, dtype=F64, device=idx.device)
    best, best_score = None, NEG_INF
    for t in range(1, max_new_tokens + 1):
        logits = model(beams)[:, -1, :]
        if mistake.get("low") is not None:
            logp = torch.log_softmax(logits.to(mistake["low"]), dim=-1).double()
        else:
            logp = torch.log_softmax(logits.double(), dim=-1)
        cand = (sums[:, None] + logp).flatten()
        top = torch.topk(cand, min(width * beam_size, cand.numel()))
        rows, new_sums = [], []
        for rank, (s, flat) in enumerate(
            zip(top.values.tolist(), top.indices.tolist(), strict=True)
        ):
            b, tok = divmod(flat, logp.shape[-1])
            seq = torch.cat([beams[b], beams.new_tensor([tok])])
            if tok == eos_id and (rank < beam_size or mistake.get("any_rank")):
                if mistake.get("first"):
                    return seq.unsqueeze(0), s / lp(t)
                if s / lp(t) > best_score:
                    best, best_score = seq, s / lp(t)
            elif tok != eos_id and len(rows) < beam_size:
                rows.append(seq)
                new_sums.append(s)
        if not rows:
            return best.unsqueeze(0), best_score
        beams, sums = torch.stack(rows), torch.tensor(new_sums, dtype=F64, device=idx.device)
    final = sums if mistake.get("raw_final") else sums / lp(max_new_tokens)
    i = int(final.argmax())
    if float(final[i]) > best_score or (
        mistake.get("final_wins_tie") and float(final[i]) == best_score
    ):
        best, best_score = beams[i], float(final[i])
    return best.unsqueeze(0), best_score


def same_beam(a, b):
    return torch.equal(a[0], b[0]) and abs(a[1] - b[1]) <= 1e-9 * abs(b[1])


def beam_misconceptions(table, idx, beam_size, max_new_tokens, eos_id=None, length_penalty=0.0):
    """Where inputs give two of these the same value, the first named is the one that the
    earlier cases of test_beam_search do not rule out (the first case, fixed, already fails
    both "no penalty" and "first finished returned", and shows them only together)."""
    args, alpha, eos = (table, idx, beam_size, max_new_tokens, eos_id), length_penalty, eos_id

    def no_penalty():
        return beam_variant(*args, 0.0) if alpha != 0 else None

    def first():
        return beam_variant(*args, alpha, first=True) if eos is not None else None

    def either():  # these inputs cannot tell the two apart
        a, b = no_penalty(), first()
        return a if a is not None and b is not None and same_beam(a, b) else None

    return {
        "로그 확률을 float64 보다 낮은 정밀도(table 의 dtype 이나 float32)로 계산했습니다: 점수는 "
        "float64 정밀도로 비교합니다. F.log_softmax(model(beams)[:, -1, :].double(), dim=-1) "
        "처럼 float64 로 바꾼 뒤 log_softmax 를 계산하세요": lambda: beam_variant(
            *args, alpha, low=F32 if table.dtype == F64 else table.dtype
        ),
        "max_new_tokens 에 이른 살아 있는 빔의 점수를 길이 페널티로 나누지 않았습니다. 살아 있는 "
        "빔도 log P / lp 로 끝난 가설과 비교하고, 그 점수를 돌려주세요": lambda: (
            beam_variant(*args, alpha, raw_final=True) if alpha != 0 else None
        ),
        "스텝마다 후보를 beam_size 개만 골랐습니다. EOS 로 끝나는 후보를 빼고도 살아 있는 빔이 "
        "beam_size 개 남도록 상위 2 * beam_size 개의 후보를 보세요": lambda: (
            beam_variant(*args, alpha, width=1) if eos is not None else None
        ),
        "길이 페널티를 적용하지 않았거나, 처음 끝난(EOS) 가설을 바로 돌려주었습니다 (이 입력에서는 "
        "둘이 같은 결과를 냅니다). 끝난 가설은 모아 두고, 점수 log P / lp, lp = ((5 + |Y|) / 6) "
        "** alpha 가 가장 높은 것을 고르세요": either,
        "길이 페널티를 적용하지 않았습니다. 가설의 점수는 log P / lp, lp = ((5 + |Y|) / 6) ** "
        "alpha (alpha = length_penalty) 입니다": no_penalty,
        "처음 끝난(EOS) 가설을 바로 돌려주었습니다. 끝난 가설은 모아 두고 빔 서치를 계속한 뒤, "
        "점수가 가장 높은 것을 고르세요": first,
        "길이 페널티의 |Y| 에 프롬프트 길이까지 넣었습니다. |Y| 는 생성한 토큰 수(EOS 포함)"
        "입니다": lambda: beam_variant(*args, alpha, offset=idx.shape[1]) if alpha != 0 else None,
        "점수가 같을 때 마지막 스텝의 살아 있는 빔을 골랐습니다. 점수가 같으면 먼저 찾은 가설, "
        "곧 그보다 앞서 끝난(EOS) 가설을 돌려주세요 (비교는 >= 가 아니라 >)": lambda: (
            beam_variant(*args, alpha, final_wins_tie=True) if eos is not None else None
        ),
        "상위 beam_size 밖의 EOS 후보까지 끝난 가설로 받았습니다. EOS 로 끝나는 후보는 그 스텝의 "
        "상위 beam_size 안에 들 때만 끝난 가설이 됩니다": lambda: (
            beam_variant(*args, alpha, any_rank=True) if eos is not None else None
        ),
    }


MISCONCEPTIONS = {
    "greedy_decode": greedy_misconceptions,
    "top_k_filter": top_k_misconceptions,
    "top_p_filter": top_p_misconceptions,
    "apply_repetition_penalty": penalty_misconceptions,
    "no_repeat_ngram_ban": ngram_misconceptions,
    "generate": generate_misconceptions,
    "beam_search": beam_misconceptions,
}


# ----------------------------------------------------------------------------- inputs


def ids(rng, V, *shape, device="cpu"):
    return torch.randint(0, V, shape, generator=rng).to(device)


def table(rng, V, order=1, scale=2.0, dtype=F64, device="cpu"):
    """Random logits table (V, V) or (V, V, V)."""
    return randn(rng, *([V] * (order + 1)), scale=scale, dtype=dtype, device=device)


def chain_table(V, eos, device):
    """Greedy path t -> t + 1 -> ... -> eos (= V - 1) -> 0: a row ends after its own number of
    steps, and the model would go on after eos (so finished rows must be forced to eos)."""
    t = torch.full((V, V), -3.0, dtype=F64)
    nxt = torch.arange(V) + 1
    nxt[eos] = 0
    t[torch.arange(V), nxt] = 3.0
    return t.to(device)


def swap_ids(tab, prompt, a, b):
    """The same model and prompt with token ids a and b exchanged (in every axis of the table):
    what the model does with id a, it now does with id b."""
    perm = torch.arange(tab.shape[0], device=tab.device)
    perm[a], perm[b] = b, a
    for axis in range(tab.dim()):
        tab = tab.index_select(axis, perm)
    return tab, perm[prompt]


def script_table(device):
    """Prompt [1]: [eos] has P ~ 0.5; [2, 3, 4, eos] has P ~ 0.45 * 0.9 ** 3, lower, but wins
    once the GNMT penalty with alpha = 2 divides log P by ((5 + 4) / 6) ** 2. The small
    probabilities are all different, so no two candidates tie."""
    probs = 0.01 + 1e-3 * torch.arange(25, dtype=F64).reshape(5, 5)
    probs[1, 0], probs[1, 1], probs[1, 2] = 0.5, 1e-4, 0.45
    for a, b in ((2, 3), (3, 4), (4, 0), (0, 1)):
        probs[a, b] = 0.9
    return (probs / probs.sum(-1, keepdim=True)).log().to(device)


def rows_table(rows, device):
    """(V, V) log-probabilities from rows of next-token probabilities ({token: p}, the rest of
    the mass spread evenly): small hand-made models for beam search."""
    V = max(len(rows), 1 + max(t for row in rows for t in row))
    probs = torch.zeros(V, V, dtype=F64)
    for a, row in enumerate(rows):
        rest = [t for t in range(V) if t not in row]
        probs[a, rest] = (1.0 - sum(row.values())) / len(rest)
        for t, p in row.items():
            probs[a, t] = p
    return probs.log().to(device)


def eos_ranked_second_table(device):
    """Prompt [1], eos 0, beam 1: at every step the EOS candidate ranks second, so it is dropped
    and the single beam runs on (log P ~ -3.5 after 4 steps). Taking it as a finished
    hypothesis would return [1, 0] (log 0.35 = -1.05)."""
    rows = [
        {1: 0.5, 2: 0.2},
        {2: 0.55, 0: 0.35},
        {3: 0.4, 0: 0.3, 4: 0.2},
        {4: 0.4, 0: 0.3, 1: 0.2},
        {1: 0.4, 0: 0.3, 2: 0.2},
    ]
    return rows_table(rows, device)


def eos_in_top_two_table(device):
    """Prompt [1], eos 0, beam 2, alpha 1: EOS ranks first at step 1 (log 0.3 = -1.20), so the
    two live beams are the candidates ranked 2 and 3 ([2] and [3]). [3, 4, 0] then wins
    (log(0.27 * 0.95 * 0.95) / (8 / 6) = -1.06); looking at only the top beam_size candidates
    keeps [2] alone and returns [1, 0]."""
    rows = [
        {1: 0.5, 2: 0.2},
        {0: 0.3, 2: 0.28, 3: 0.27, 4: 0.1},
        {0: 0.3, 1: 0.25, 2: 0.2, 3: 0.15},
        {4: 0.95},
        {0: 0.95},
    ]
    return rows_table(rows, device)


def finished_ties_final_table(device):
    """Prompt [3], eos 0, beam 2, two steps: [3, 1] leads after step 1 ([3, 2] second, EOS
    ranks last), and row 1 gives EOS and token 2 the same logit, so the finished [3, 1, 0] and
    the final beam [3, 1, 2] get bit-equal scores (log 0.6 + log 0.4, the same two numbers added
    whatever the implementation). The spec breaks the tie for the one found first: [3, 1, 0]."""
    rows = [{}, {0: 0.4, 2: 0.4}, {3: 0.5}, {1: 0.6, 2: 0.3}]
    return rows_table(rows, device)


def seed_of(rng):
    return int(torch.randint(1, 2**31 - 1, (1,), generator=rng))


# ----------------------------------------------------------------------------- greedy


def greedy_eos_midway(rng, d):
    tab, prompt = table(rng, 6, device=d), ids(rng, 6, 4, 3, device=d)
    eos = int(_greedy(tab, prompt, 4)[0, 4])  # row 0 reaches it by its second step
    return (tab, prompt, 8), {"eos_id": eos}


def greedy_all_finish(rng, d):
    first = ids(rng, 6, 3, 1, device=d)
    prompt = torch.cat([first, torch.tensor([[0], [2], [4]], device=d)], dim=1)
    return (chain_table(7, 6, d), prompt, 12), {"eos_id": 6}


def greedy_eos_zero(rng, d):
    """greedy_all_finish with eos 6 renamed 0: id 0 is a real EOS."""
    (tab, prompt, n), _ = greedy_all_finish(rng, d)
    tab, prompt = swap_ids(tab, prompt, 0, 6)
    return (tab, prompt, n), {"eos_id": 0}


def greedy_eos_in_prompt(rng, d):
    """Rows 0 and 2 hold eos 6 in their prompt, before their last token: only generated tokens
    count, so each row runs its own chain to eos."""
    prompt = torch.tensor([[6, 1], [2, 3], [6, 4]], device=d)
    return (chain_table(7, 6, d), prompt, 8), {"eos_id": 6}


def greedy_eos_never(rng, d):
    tab = table(rng, 6, device=d)
    tab[:, 2] = -50.0
    return (tab, ids(rng, 6, 2, 3, device=d), 7), {"eos_id": 2}


GREEDY = {
    "eos: 행마다 다른 스텝에서 끝난 뒤 멈춤": greedy_all_finish,
    "중간에 eos 도달": greedy_eos_midway,
    "eos_id가 한 번도 나오지 않음": greedy_eos_never,
    "eos_id 없음, B=3": lambda rng, d: (
        (table(rng, 8, device=d), ids(rng, 8, 3, 4, device=d), 9),
        {},
    ),
    "table (vocab_size, vocab_size, vocab_size): 마지막 두 토큰": lambda rng, d: (
        (table(rng, 7, order=2, device=d), ids(rng, 7, 2, 3, device=d), 8),
        {},
    ),
    "float32 table, 프롬프트 길이 1": lambda rng, d: (
        (table(rng, 9, dtype=F32, device=d), ids(rng, 9, 1, 1, device=d), 6),
        {},
    ),
    "max_new_tokens=0": lambda rng, d: (
        (table(rng, 5, device=d), ids(rng, 5, 2, 3, device=d), 0),
        {},
    ),
    "eos_id = 0 (토큰 번호 0도 EOS)": greedy_eos_zero,
    "프롬프트 안의 eos_id는 세지 않음": greedy_eos_in_prompt,
}


@pytest.mark.parametrize("case", list(GREEDY))
def test_greedy_decode(student, rng, device, case):
    args, kwargs = GREEDY[case](rng, device)
    inputs = {"table": args[0], "idx": args[1], "max_new_tokens": args[2], **kwargs}
    compare(student, "greedy_decode", case, args, kwargs, inputs)


# ----------------------------------------------------------------------------- top-k


def with_neg_inf(x, rng, frac=0.4):
    """Copy of x with about frac of its entries set to -inf (the first of each row kept)."""
    drop = torch.rand(x.shape, generator=rng) < frac
    drop[..., 0] = False
    return x.masked_fill(drop.to(x.device), NEG_INF)


def tied_at_kth(rng, rows, V, k, device):
    """Small-integer logits (rows, V) whose (k+1)-th largest value equals the k-th in every row:
    a tie that an implementation keeping exactly k entries drops, whatever the seed."""
    x = torch.randint(0, 4, (rows, V), generator=rng).to(F32)
    order = torch.argsort(x, dim=-1, descending=True, stable=True)
    x.scatter_(-1, order[:, k : k + 1], x.gather(-1, order[:, k - 1 : k]))
    return x.to(device)


TOP_K = {
    "k번째 값과 동점인 토큰은 남김": lambda rng, d: (tied_at_kth(rng, 5, 10, 3, d), 3),
    "k > vocab_size": lambda rng, d: (randn(rng, 3, 6, device=d), 9),
    "k = vocab_size": lambda rng, d: (randn(rng, 3, 6, device=d), 6),
    "k = 1": lambda rng, d: (randn(rng, 4, 11, scale=3.0, device=d), 1),
    "(B, vocab_size), k = 5": lambda rng, d: (randn(rng, 6, 20, scale=2.0, device=d), 5),
    "1차원 로짓 (vocab_size,)": lambda rng, d: (randn(rng, 12, dtype=F64, device=d), 4),
    "-inf 원소, k > 유한한 값의 개수": lambda rng, d: (
        with_neg_inf(randn(rng, 4, 8, device=d), rng),
        7,
    ),
    "float16": lambda rng, d: (randn(rng, 3, 16, scale=4.0, dtype=F16, device=d), 4),
    "bfloat16": lambda rng, d: (randn(rng, 3, 16, scale=4.0, dtype=BF16, device=d), 4),
    "로짓~-max(float32)": lambda rng, d: (
        randn(rng, 3, 9, scale=1e37, shift=-extreme(F32), device=d),
        3,
    ),
    "앞 축 여러 개 (2, 3, vocab_size)": lambda rng, d: (randn(rng, 2, 3, 10, device=d), 3),
    "연속이 아닌 입력 (2, 3, vocab_size): 앞 두 축을 바꾼 뷰": lambda rng, d: (
        randn(rng, 3, 2, 10, device=d).transpose(0, 1),
        4,
    ),
}


@pytest.mark.spec(returns_new=True)  # the notebook: the logit functions return a new tensor
@pytest.mark.parametrize("case", list(TOP_K))
def test_top_k_filter(student, rng, device, case):
    logits, k = TOP_K[case](rng, device)
    compare(student, "top_k_filter", case, (logits, k), {}, {"logits": logits, "k": k})


# ----------------------------------------------------------------------------- top-p


def nucleus_margin(logits, p):
    """Smallest |mass before a token - p| over the tokens after the first (float64 maths on the
    given values): far from 0, every sensible rounding keeps the same tokens as the reference."""
    x = logits.detach().double().cpu().reshape(-1, logits.shape[-1])
    sorted_x, _ = torch.sort(x, dim=-1, descending=True, stable=True)
    probs = torch.softmax(sorted_x, dim=-1)
    before = (torch.cumsum(probs, dim=-1) - probs)[:, 1:]
    return float((before - p).abs().min()) if before.numel() else 1.0


def top_mass(logits):
    """Largest probability in any row (float64 maths on the given values)."""
    x = logits.detach().double().cpu().reshape(-1, logits.shape[-1])
    return float(torch.softmax(x, dim=-1).max())


def nucleus_case(rng, shape, scale, dtype, d, margin, shift=0.0, several=False):
    """Random logits and the p in [0.3, 0.95] farthest from every token's mass before it.
    ``several``: p above every row's largest probability, so each row keeps two or more tokens
    (an implementation that keeps only the argmax cannot pass by luck)."""
    for _ in range(100):
        logits = randn(rng, *shape, scale=scale, shift=shift, dtype=dtype, device=d)
        low = top_mass(logits) + margin if several else 0.3
        grid = [q for q in (0.3 + 0.65 * i / 200 for i in range(201)) if q >= low]
        if not grid:
            continue
        p = max(grid, key=lambda q: nucleus_margin(logits, q))
        if nucleus_margin(logits, p) >= margin:
            return logits, round(p, 4)
    raise RuntimeError("p와 충분히 떨어진 top-p 검사 입력을 찾지 못했습니다")


def crossing_token(rng, d):
    """probs (0.5, 0.3, 0.15, 0.05) in a random order per row, p = 0.7: the nucleus is the two
    most likely tokens (0.5 < 0.7 <= 0.8)."""
    base = torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=F64).log()
    rows = [base[torch.randperm(4, generator=rng)] for _ in range(3)]
    return torch.stack(rows).to(d, F32), 0.7


def ties(rng, d):
    rows = [[1.0, 3.0, 1.0, 3.0, 1.0, 0.0], [0.0] * 6, [2.0, 2.0, 2.0, -1.0, 2.0, -1.0]]
    return torch.tensor(rows, device=d), 0.3


def many_ties(rng, d):
    """48 tokens in three groups of equal logits (2, 1, 0, by id mod 3), p = 0.5: the cut falls
    inside the top group, so which of its tokens stay depends on the order of equal values (an
    unstable sort of 33 or more values reorders them on the CPU)."""
    row = (2.0 - torch.arange(48) % 3).to(F32)
    return torch.stack([row, row.roll(1)]).to(d), 0.5


def swapped_leading(logits, p):
    """The same (A, B, vocab_size) values as a view with the two leading axes swapped in memory,
    where .view(-1, vocab_size) fails (the grader's wire keeps such a layout)."""
    return logits.transpose(0, 1).contiguous().transpose(0, 1), p


def dominant_p_one(rng, d):
    """p = 1 and one logit 20 above the rest: in float32 the top probability rounds to 1.0, so
    the mass before every other token is 1.0 and a `< p` rule without p = 1 kept as is drops
    them all."""
    x = randn(rng, 3, 10, device=d)
    return x.index_fill(-1, torch.tensor([2], device=d), 25.0), 1.0


def mass_equals_p(rng, d):
    """Equal logits give probabilities 1/8 and 1/4 exactly, so the mass before the third (first
    row) or second (second row) token equals p = 0.25 exactly: that token is dropped."""
    rows = torch.zeros(2, 8)
    rows[1, 4:] = float("-inf")
    return rows.to(d), 0.25


TOP_P = {
    "누적 확률이 p를 넘게 만드는 토큰은 남김": crossing_token,
    "앞 토큰들의 확률 합이 정확히 p인 토큰은 버림": mass_equals_p,
    "동점: 토큰 id가 작은 쪽이 먼저": ties,
    "p = 1이면 모두 남김": lambda rng, d: (randn(rng, 3, 7, device=d), 1.0),
    "아주 작은 p는 argmax만 남김": lambda rng, d: (randn(rng, 4, 9, device=d), 1e-4),
    "로짓~1000": lambda rng, d: (randn(rng, 3, 10, scale=1000.0, device=d), 0.9),
    "(B, vocab_size) float32": lambda rng, d: nucleus_case(rng, (3, 12), 2.0, F32, d, 1e-3),
    "로짓이 모두 ~100 (float32에서 exp 오버플로)": lambda rng, d: nucleus_case(
        rng, (2, 10), 1.0, F32, d, 1e-3, shift=100.0, several=True
    ),
    "1차원 로짓 (vocab_size,), float64": lambda rng, d: nucleus_case(rng, (15,), 1.5, F64, d, 1e-3),
    "-inf 원소": lambda rng, d: (
        with_neg_inf(torch.tensor([[2.0, 1.0, 0.5, 0.2, 0.0, -1.0]] * 3, device=d), rng),
        0.75,
    ),
    "float16": lambda rng, d: nucleus_case(rng, (2, 8), 2.0, F16, d, 0.02),
    "bfloat16": lambda rng, d: nucleus_case(rng, (2, 6), 2.0, BF16, d, 0.03),
    "p = 1, 확률 하나가 float32에서 1.0으로 반올림됨": dominant_p_one,
    "동점 48개 토큰, 경계가 동점 가운데": many_ties,
    "앞 축 여러 개 (2, 3, vocab_size)": lambda rng, d: nucleus_case(
        rng, (2, 3, 9), 1.5, F32, d, 1e-3
    ),
    "연속이 아닌 입력 (2, 3, vocab_size): 앞 두 축을 바꾼 뷰": lambda rng, d: swapped_leading(
        *nucleus_case(rng, (2, 3, 11), 1.5, F32, d, 1e-3)
    ),
}


@pytest.mark.spec(returns_new=True)  # the notebook: the logit functions return a new tensor
@pytest.mark.parametrize("case", list(TOP_P))
def test_top_p_filter(student, rng, device, case):
    logits, p = TOP_P[case](rng, device)
    compare(student, "top_p_filter", case, (logits, p), {}, {"logits": logits, "p": p})


# ----------------------------------------------------------------------------- repetition penalty


def signs(rng, d):
    logits = torch.tensor([[2.0, -2.0, 0.5, -1.0, 3.0], [1.5, -0.5, 0.0, -3.0, 0.25]], device=d)
    return logits, torch.tensor([[1, 0, 3], [3, 1, 2]], device=d), 1.5


def repeated(rng, d):
    logits = randn(rng, 3, 6, scale=2.0, device=d)
    prev = torch.tensor([[2, 2, 2, 2], [0, 5, 0, 5], [1, 1, 3, 1]], device=d)
    return logits, prev, 2.0


PENALTY = {
    "음수 로짓에는 페널티를 곱함": signs,
    "여러 번 나온 id도 페널티는 한 번": repeated,
    "penalty < 1": lambda rng, d: (randn(rng, 4, 10, device=d), ids(rng, 10, 4, 6, device=d), 0.7),
    "행마다 다른 prev_ids": lambda rng, d: (
        randn(rng, 5, 12, scale=3.0, device=d),
        ids(rng, 12, 5, 9, device=d),
        1.3,
    ),
    "빈 prev_ids (B, 0)": lambda rng, d: (
        randn(rng, 2, 5, device=d),
        torch.zeros(2, 0, dtype=torch.long, device=d),
        1.2,
    ),
    "-inf 원소": lambda rng, d: (
        with_neg_inf(randn(rng, 3, 8, device=d), rng),
        ids(rng, 8, 3, 5, device=d),
        1.4,
    ),
    "float64": lambda rng, d: (
        randn(rng, 3, 7, dtype=F64, device=d),
        ids(rng, 7, 3, 4, device=d),
        1.25,
    ),
    "float16": lambda rng, d: (
        randn(rng, 3, 9, scale=3.0, dtype=F16, device=d),
        ids(rng, 9, 3, 5, device=d),
        1.5,
    ),
    "bfloat16": lambda rng, d: (
        randn(rng, 3, 9, scale=3.0, dtype=BF16, device=d),
        ids(rng, 9, 3, 5, device=d),
        1.5,
    ),
}


@pytest.mark.spec(returns_new=True)  # the notebook: the logit functions return a new tensor
@pytest.mark.parametrize("case", list(PENALTY))
def test_repetition_penalty(student, rng, device, case):
    logits, prev, penalty = PENALTY[case](rng, device)
    inputs = {"logits": logits, "prev_ids": prev, "penalty": penalty}
    compare(student, "apply_repetition_penalty", case, (logits, prev, penalty), {}, inputs)


# ----------------------------------------------------------------------------- n-gram ban


def fixed(rows, V, n, d):
    return torch.zeros(len(rows), V, device=d), torch.tensor(rows, device=d), n


NGRAM = {
    "마지막 n-그램도 셈": lambda rng, d: fixed([[3, 1, 2, 2], [0, 4, 4, 4]], 5, 2, d),
    "n=3, 손으로 만든 예": lambda rng, d: fixed([[5, 6, 7, 5, 6], [1, 2, 3, 4, 5]], 9, 3, d),
    "앞에서 여러 번 일치": lambda rng, d: fixed([[1, 2, 1, 3, 1, 0, 1]], 4, 2, d),
    "n=1이면 나온 토큰을 모두 금지": lambda rng, d: (
        randn(rng, 3, 10, device=d),
        ids(rng, 10, 3, 4, device=d),
        1,
    ),
    "L < n: 그대로": lambda rng, d: (randn(rng, 2, 6, device=d), ids(rng, 6, 2, 3, device=d), 4),
    "n = 0: 그대로": lambda rng, d: (randn(rng, 2, 6, device=d), ids(rng, 6, 2, 3, device=d), 0),
    "무작위 ids, n=2": lambda rng, d: (randn(rng, 5, 5, device=d), ids(rng, 5, 5, 12, device=d), 2),
    "무작위 ids, n=3": lambda rng, d: (randn(rng, 5, 3, device=d), ids(rng, 3, 5, 15, device=d), 3),
    "무작위 ids, n=4, float16": lambda rng, d: (
        randn(rng, 4, 2, dtype=F16, device=d),
        ids(rng, 2, 4, 16, device=d),
        4,
    ),
    "-inf 원소": lambda rng, d: (
        with_neg_inf(randn(rng, 3, 4, device=d), rng),
        ids(rng, 4, 3, 10, device=d),
        2,
    ),
    "L = n: ids 전체가 n-그램 하나": lambda rng, d: fixed(
        [[4, 4, 4], [1, 2, 1], [3, 3, 3]], 6, 3, d
    ),
}


@pytest.mark.spec(returns_new=True)  # the notebook: the logit functions return a new tensor
@pytest.mark.parametrize("case", list(NGRAM))
def test_no_repeat_ngram(student, rng, device, case):
    logits, prev, n = NGRAM[case](rng, device)
    inputs = {"logits": logits, "ids": prev, "n": n}
    compare(student, "no_repeat_ngram_ban", case, (logits, prev, n), {}, inputs)


# ----------------------------------------------------------------------------- seeded sampling

SAMPLING_HINT = (
    "\n같은 seed 에서 참조 구현과 다른 토큰을 뽑았습니다. 순서(반복 페널티 → n-그램 금지 → 온도 → "
    "top-k → top-p → 소프트맥스)와, 함수 시작에서 make_generator(seed, idx.device) 로 생성기를 "
    "한 번만 만들고 스텝마다 torch.multinomial(probs, num_samples=1, generator=gen) 을 "
    "(B, vocab_size) 전체에 한 번 부르는지 확인하세요."
)


def peaked_table(rng, d):
    """(6, 6) rows of the logits (3, 1, 0.5, 0, -0.5, -1) in random orders: the top token has
    probability 0.76 at temperature 1 (a top_p=0.6 nucleus of one token) and 0.39 at 2.5
    (a nucleus of three), so filtering before dividing by the temperature always differs."""
    base = torch.tensor([3.0, 1.0, 0.5, 0.0, -0.5, -1.0], dtype=F64)
    return torch.stack([base[torch.randperm(6, generator=rng)] for _ in range(6)]).to(d)


def eos_table(rng, d):
    tab = table(rng, 8, scale=1.5, device=d)
    tab[:, 5] += 2.0  # eos_id 5 is likely, so rows finish at different steps
    return tab


def self_loop_table(d):
    """(5, 5): token t's likeliest successor is t itself (logit 2), then t + 1 (logit 1). After
    'x x' the last complete 2-gram is (x, x), so a 2-gram ban must rule x out: argmax decoding
    then reads 1 1 2 2 3 3 ..., and a ban that skips the last gram repeats x a third time."""
    t = torch.full((5, 5), -2.0, dtype=F64)
    t[torch.arange(5), torch.arange(5)] = 2.0
    t[torch.arange(5), (torch.arange(5) + 1) % 5] = 1.0
    return t.to(d)


def tied_top_table(d):
    """(5, 5): token t's two likeliest successors, t + 1 and t + 3, have the same logit. At
    temperature 0 the argmax takes the first (t + 1) every time; sampling, even at a tiny
    temperature, takes either one with equal probability (24 draws: all first with 2 ** -24)."""
    t = torch.full((5, 5), -2.0, dtype=F64)
    rows = torch.arange(5)
    t[rows, (rows + 1) % 5] = 2.0
    t[rows, (rows + 3) % 5] = 2.0
    return t.to(d)


def penalised_top_table(d):
    """(4, 4), every row (2, 1.5, -1, -1): with token 0 in the prompt and repetition_penalty=2,
    token 0 falls to 1 < 1.5, so top_k=1 after the penalty keeps token 1 (the only one left:
    no draw can hide the order), while filtering first keeps token 0."""
    return torch.tensor([2.0, 1.5, -1.0, -1.0], dtype=F64).repeat(4, 1).to(d)


SAMPLING = {
    "temperature=1, 필터 없음": lambda rng, d: (
        table(rng, 9, device=d),
        ids(rng, 9, 3, 3, device=d),
        10,
        {},
    ),
    "temperature=2.5가 top_p=0.6 뉴클리어스를 넓힘": lambda rng, d: (
        peaked_table(rng, d),
        ids(rng, 6, 4, 2, device=d),
        12,
        {"temperature": 2.5, "top_p": 0.6},
    ),
    "temperature=0.7, top_k=4": lambda rng, d: (
        table(rng, 10, device=d),
        ids(rng, 10, 4, 2, device=d),
        10,
        {"temperature": 0.7, "top_k": 4},
    ),
    "temperature=1.3, top_p=0.8": lambda rng, d: (
        table(rng, 10, device=d),
        ids(rng, 10, 4, 2, device=d),
        12,
        {"temperature": 1.3, "top_p": 0.8},
    ),
    "repetition_penalty=1.5, top_k=6": lambda rng, d: (
        table(rng, 8, device=d),
        ids(rng, 8, 3, 4, device=d),
        10,
        {"repetition_penalty": 1.5, "top_k": 6},
    ),
    "top_k=1보다 repetition_penalty=2가 먼저": lambda rng, d: (
        penalised_top_table(d),
        torch.tensor([[0, 2], [3, 0], [1, 1]], device=d),
        4,
        {"repetition_penalty": 2.0, "top_k": 1},
    ),
    "top_k=0은 필터 없음": lambda rng, d: (
        table(rng, 8, device=d),
        ids(rng, 8, 3, 2, device=d),
        8,
        {"top_k": 0, "temperature": 1.2},
    ),
    "no_repeat_ngram_size=2": lambda rng, d: (
        table(rng, 12, device=d),
        ids(rng, 12, 3, 3, device=d),
        10,
        {"no_repeat_ngram_size": 2, "temperature": 0.9},
    ),
    "'x x' 뒤 no_repeat_ngram_size=2, temperature=0": lambda rng, d: (
        self_loop_table(d),
        torch.tensor([[1, 1], [3, 4], [0, 0]], device=d),
        8,
        {"no_repeat_ngram_size": 2, "temperature": 0},
    ),
    "eos_id: 행마다 다른 스텝에서 끝남": lambda rng, d: (
        eos_table(rng, d),
        ids(rng, 8, 4, 2, device=d),
        15,
        {"eos_id": 5},
    ),
    "로그 확률 table (로짓이 모두 < 0), repetition_penalty=2": lambda rng, d: (
        torch.log_softmax(table(rng, 6, device=d), dim=-1),
        ids(rng, 6, 3, 2, device=d),
        12,
        {"repetition_penalty": 2.0},
    ),
    "temperature=0 (argmax, 뽑기 없음)": lambda rng, d: (
        table(rng, 7, order=2, device=d),
        ids(rng, 7, 2, 3, device=d),
        8,
        {"temperature": 0, "repetition_penalty": 1.2},
    ),
    "모든 옵션, table (vocab_size, vocab_size, vocab_size)": lambda rng, d: (
        table(rng, 12, order=2, device=d),
        ids(rng, 12, 3, 3, device=d),
        12,
        {
            "temperature": 0.8,
            "top_k": 8,
            "top_p": 0.9,
            "repetition_penalty": 1.3,
            "no_repeat_ngram_size": 3,
            "eos_id": 0,
        },
    ),
    "프롬프트 안의 eos_id는 세지 않음, temperature=0": lambda rng, d: (
        chain_table(7, 6, d),
        torch.tensor([[6, 1], [2, 3], [6, 4]], device=d),
        8,
        {"eos_id": 6, "temperature": 0},
    ),
    "temperature=0, 가장 큰 로짓 둘이 같음: argmax (첫 번째)": lambda rng, d: (
        tied_top_table(d),
        torch.tensor([[0], [2], [4]], device=d),
        8,
        {"temperature": 0},
    ),
}


@pytest.mark.given(
    top_k_filter=ref.top_k_filter,
    top_p_filter=ref.top_p_filter,
    apply_repetition_penalty=ref.apply_repetition_penalty,
    no_repeat_ngram_ban=ref.no_repeat_ngram_ban,
)
@pytest.mark.spec(draws_on="input")  # the notebook: make_generator(seed, idx.device)
def test_generate(student, rng, device):
    """Every case in one process, one after another as a notebook calls generate (a generator
    kept from an earlier call shows). Each call has a seed of its own and must give the
    reference's tokens for that seed, so no memo of earlier calls can help; and no call may
    draw on the global generator (the spec's ``draws_on`` rule, checked on every call)."""
    for case, make in SAMPLING.items():
        tab, prompt, n, options = make(rng, device)
        args = (tab, prompt, n, seed_of(rng))
        inputs = {"table": tab, "idx": prompt, "max_new_tokens": n, "seed": args[3], **options}
        compare(student, "generate", case, args, options, inputs, hint=SAMPLING_HINT)


# ----------------------------------------------------------------------------- beam search


def beam_random(rng, d, V=6, order=1, T=2, eos=0, boost=1.0, dtype=F64):
    tab = table(rng, V, order=order, scale=1.5, dtype=dtype, device=d)
    if eos is not None:
        tab[..., eos] += boost
    return tab, ids(rng, V, 1, T, device=d)


BEAM = {
    "길이 페널티가 승자를 바꿈 (alpha=2)": lambda rng, d: (
        (script_table(d), torch.tensor([[1]], device=d), 3, 4),
        {"eos_id": 0, "length_penalty": 2.0},
    ),
    "같은 모델, alpha=0이면 짧은 쪽이 이김": lambda rng, d: (
        (script_table(d), torch.tensor([[1]], device=d), 3, 4),
        {"eos_id": 0, "length_penalty": 0.0},
    ),
    "eos, alpha=0.6, 빔 크기 3": lambda rng, d: (
        (*beam_random(rng, d), 3, 6),
        {"eos_id": 0, "length_penalty": 0.6},
    ),
    "eos, alpha=1.0, 빔 크기 2, table (vocab_size, vocab_size, vocab_size)": lambda rng, d: (
        (*beam_random(rng, d, V=5, order=2, eos=4), 2, 7),
        {"eos_id": 4, "length_penalty": 1.0},
    ),
    "넓은 빔 (전수 탐색), alpha=0.7": lambda rng, d: (
        (*beam_random(rng, d, V=4, boost=0.5), 64, 4),
        {"eos_id": 0, "length_penalty": 0.7},
    ),
    "빔 크기 1 = 탐욕적 디코딩 (eos 없음)": lambda rng, d: (
        (*beam_random(rng, d, V=7, eos=None), 1, 6),
        {},
    ),
    "eos 없음: 끝까지 생성, 빔 크기 3": lambda rng, d: (
        (*beam_random(rng, d, V=5, T=3, eos=None), 3, 6),
        {},
    ),
    "eos 없음, alpha=0.6: 살아 있는 빔이 이기고 점수는 길이로 정규화": lambda rng, d: (
        (*beam_random(rng, d, V=5, eos=None), 3, 4),
        {"length_penalty": 0.6},
    ),
    "float32 table, 빔 크기 4, alpha=0.5": lambda rng, d: (
        (*beam_random(rng, d, V=6, dtype=F32), 4, 5),
        {"eos_id": 0, "length_penalty": 0.5},
    ),
    "빔 크기 1: 2위인 EOS는 버림": lambda rng, d: (
        (eos_ranked_second_table(d), torch.tensor([[1]], device=d), 1, 4),
        {"eos_id": 0},
    ),
    "빔 크기 2: 스텝 1에서 EOS가 1위, 살아 있는 빔은 2위와 3위": lambda rng, d: (
        (eos_in_top_two_table(d), torch.tensor([[1]], device=d), 2, 3),
        {"eos_id": 0, "length_penalty": 1.0},
    ),
    "동점: 완성된 가설이 마지막 빔보다 먼저 찾은 것 (빔 크기 2)": lambda rng, d: (
        (finished_ties_final_table(d), torch.tensor([[3]], device=d), 2, 2),
        {"eos_id": 0, "length_penalty": 1.0},
    ),
    "max_new_tokens=0": lambda rng, d: ((*beam_random(rng, d, V=4), 2, 0), {"eos_id": 0}),
}


@pytest.mark.parametrize("case", list(BEAM))
def test_beam_search(student, rng, device, case):
    args, kwargs = BEAM[case](rng, device)
    inputs = {
        "table": args[0],
        "idx": args[1],
        "beam_size": args[2],
        "max_new_tokens": args[3],
        **kwargs,
    }
    # the notebook: log-probabilities in float64, so the score is held to float64 accuracy
    got = compare(student, "beam_search", case, args, kwargs, inputs, rtol=1e-9, atol=1e-12)
    if type(got[1]) is not float:
        fail(
            f"beam_search [{case}]: score 는 파이썬 float 이어야 하는데 "
            f"{type(got[1]).__name__} 입니다 (max_new_tokens=0 이면 (idx, 0.0))",
            inputs,
        )
