"""book/numwords.py: the Korean number-word data, the split, the decoding wrappers, the weight
cache, and the trained model as the built chapters 8 and 9 show it.

The number words are checked against hand-written readings and against an independent parser
(words -> int, written separately here) over every number 0..99999.
"""

import re
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "book"))
import numwords as nw  # noqa: E402

HAND = {
    0: "영",
    1: "일",
    7: "칠",
    10: "십",
    11: "십일",
    20: "이십",
    99: "구십구",
    100: "백",
    101: "백일",
    105: "백오",
    110: "백십",
    111: "백십일",
    321: "삼백이십일",
    1000: "천",
    1001: "천일",
    1010: "천십",
    2019: "이천십구",
    9999: "구천구백구십구",
    10000: "만",
    10001: "만 일",
    11000: "만 천",
    21000: "이만 천",
    30405: "삼만 사백오",
    50000: "오만",
    60006: "육만 육",
    99999: "구만 구천구백구십구",
}


@pytest.mark.parametrize(("n", "word"), HAND.items())
def test_hand_written_readings(n, word):
    assert nw.korean_number_words(n) == word


@pytest.mark.parametrize("n", [-1, 100000])
def test_out_of_range(n):
    with pytest.raises(ValueError):
        nw.korean_number_words(n)


DIGITS = {c: i for i, c in enumerate("영일이삼사오육칠팔구")}
SMALL_UNITS = {"십": 10, "백": 100, "천": 1000}


def parse(word):
    """Independent reader: accumulate digit x unit inside a 만 group (a bare unit counts 1)."""
    total, group, digit = 0, 0, None
    for ch in word.replace(" ", ""):
        if ch in DIGITS:
            assert digit is None, f"two digit syllables in a row in {word!r}"
            digit = DIGITS[ch]
        elif ch in SMALL_UNITS:
            group += (1 if digit is None else digit) * SMALL_UNITS[ch]
            digit = None
        elif ch == "만":
            total += ((group + (digit or 0)) or 1) * 10000
            group, digit = 0, None
        else:
            raise AssertionError(f"unexpected character {ch!r} in {word!r}")
    return total + group + (digit or 0)


def test_every_number_reads_back_and_words_are_unique():
    words = [nw.korean_number_words(n) for n in range(nw.MAX_N + 1)]
    assert len(set(words)) == len(words)
    bad = [(n, w) for n, w in enumerate(words) if parse(w) != n]
    assert not bad, bad[:10]


def test_reading_rules_hold_everywhere():
    for n in range(nw.MAX_N + 1):
        w = nw.korean_number_words(n)
        assert ("영" in w) == (n == 0), w
        assert not re.search("일[십백천만]", w), w  # 1 is not read before a unit
        # one space, only after 만 and only when something follows (spacing by 만 units)
        assert w.count(" ") == (1 if n >= 10000 and n % 10000 else 0), w
        assert " " not in w or w[w.index(" ") - 1] == "만", w


def test_split_is_disjoint_complete_and_seeded():
    train, test = nw.split_numbers()
    a, b = set(train.tolist()), set(test.tolist())
    assert not a & b
    assert a | b == set(range(nw.MAX_N + 1))
    assert len(b) == 10000
    again = nw.split_numbers()
    assert torch.equal(again[1], test)
    assert not torch.equal(nw.split_numbers(seed=1)[1], test)


def test_training_batches_come_only_from_the_training_split(monkeypatch):
    """Every source row that train() feeds to the model reads a training number."""
    config = replace(nw.Config(), steps=3, batch_size=64, d_model=16, num_heads=2, d_ff=32)
    train_words = {nw.korean_number_words(n) for n in nw.split_numbers()[0].tolist()}
    seen = []
    real_forward = nw.NumberReader.forward

    def spy(self, src, tgt):
        seen.extend("".join(nw.SRC_TOKENS[i] for i in row.tolist() if i != nw.PAD) for row in src)
        return real_forward(self, src, tgt)

    monkeypatch.setattr(nw.NumberReader, "forward", spy)
    nw.train(config, progress=False)
    assert len(seen) == 3 * 64
    assert set(seen) <= train_words


def test_length_weights_balance_digit_counts():
    train, _ = nw.split_numbers()
    w = nw.length_weights(train)
    lengths = torch.tensor([len(str(n)) for n in train.tolist()])
    mass = torch.stack([w[lengths == k].sum() for k in range(1, 6)])
    torch.testing.assert_close(mass, torch.ones(5, dtype=mass.dtype))


def test_encode_decode():
    src = nw.encode_source(["삼백이십일", "이만 천", "영"])
    assert src.shape == (3, 5)
    assert src[2, 1:].eq(nw.PAD).all() and src[1, 2] == nw.SRC_ID[" "]
    tgt = nw.encode_target([321, 21000, 0])
    assert tgt.shape == (3, 7)
    assert tgt[:, 0].eq(nw.BOS).all()
    assert [nw.decode_target(r) for r in tgt] == ["321", "21000", "0"]
    assert nw.decode_target(torch.tensor([nw.BOS, 4, nw.EOS, 5, 6])) == "1"


def test_digit_spans():
    assert nw.digit_spans(2111) == [[0, 1], [2], [3], [4]]
    assert nw.digit_spans(20101) == [[0, 1], [], [3], [], [4]]
    assert nw.digit_spans(105) == [[0], [], [1]]
    assert nw.digit_spans(10000) == [[0], [], [], [], []]
    for n in range(0, nw.MAX_N + 1, 7):
        w = nw.korean_number_words(n)
        spans = nw.digit_spans(n)
        covered = sorted(p for s in spans for p in s)
        assert covered == [i for i, c in enumerate(w) if c != " "], (n, w, spans)
        for i, (s, d) in enumerate(zip(spans, str(n), strict=True)):
            assert bool(s) == (d != "0" or n == 0), (n, spans)
            if s:  # the span alone reads its digit times its place value
                place = len(str(n)) - 1 - i
                assert parse("".join(w[p] for p in s)) == int(d) * 10**place, (n, s)


def _small_model(seed=0):
    torch.manual_seed(seed)
    cfg = replace(nw.Config(), d_model=16, num_heads=2, d_ff=32)
    return nw.build_model(cfg).eval(), cfg


def test_conditioned_matches_the_full_model():
    model, _ = _small_model()
    words = ["삼백이십일", "이만 천", "영"]
    src = nw.encode_source(words)
    tgt = nw.encode_target([321, 21000, 0])[:, :-1]
    with torch.no_grad():
        full = model(src, tgt)
        torch.testing.assert_close(nw.conditioned(model, src)(tgt), full)
        one = nw.conditioned(model, src[1:2])(tgt[:2])  # one source, two "beams"
        torch.testing.assert_close(one, model(src[1:2].expand(2, -1), tgt[:2]))


def test_cross_attention_weights():
    model, _ = _small_model()
    words, numbers = ["이천백십일", "백오"], [2111, 105]
    maps = nw.cross_attention(model, words, numbers)
    assert len(maps) == len(model.decoder)
    assert maps[0].shape == (2, 2, 5, 5)  # (B, h, T = 4 digits + <s>, S)
    for m in maps:
        torch.testing.assert_close(m.sum(-1), torch.ones(m.shape[:-1]))
        assert m[1, :, :, 2:].eq(0).all()  # padding columns of "백오"
    assert all(not layer.multihead_attn._forward_hooks for layer in model.decoder)
    # the first layer's weights from the hook equal a direct call on the same inputs
    src = nw.encode_source(words)
    tgt = nw.encode_target(numbers)[:, :-1]
    T = tgt.shape[1]
    with torch.no_grad():
        memory = model.encode(src)
        x = model.embed(model.digit_table, tgt)
        layer = model.decoder[0]
        h = layer.norm1(x)
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        x = x + layer.self_attn(h, h, h, attn_mask=future, need_weights=False)[0]
        h = layer.norm2(x)
        _, w = layer.multihead_attn(
            h, memory, memory, key_padding_mask=model.source_padding(src),
            need_weights=True, average_attn_weights=False,
        )  # fmt: skip
    torch.testing.assert_close(maps[0], w)


def test_train_is_deterministic_and_cache_round_trips(tmp_path, monkeypatch):
    monkeypatch.setattr(nw, "CACHE_DIR", tmp_path)
    cfg = replace(nw.Config(), steps=4, batch_size=16, d_model=16, num_heads=2, d_ff=32)
    m1, l1 = nw.train(cfg, progress=False)
    m2, l2 = nw.train(cfg, progress=False)
    assert len(l1) == 4 and l1 == l2
    model, losses, loaded = nw.load_or_train(cfg)  # nothing saved yet: trains and saves
    assert not loaded and losses == l1 and nw.cache_path(cfg).is_file()
    model, losses, loaded = nw.load_or_train(cfg)
    assert loaded and losses == l1
    for (k, a), b in zip(m1.state_dict().items(), model.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, msg=k)
    assert nw.cache_key(replace(cfg, seed=1)) != nw.cache_key(cfg)


def test_exact_match():
    assert nw.exact_match(["321", "21000", "7"], [321, 21000, 8]) == pytest.approx(2 / 3)
    assert nw.exact_match(["0321"], [321]) == 0.0


# ---------------------------------------------------------------------------------------------
# The built book


def test_chapter8_prints_held_out_accuracy(built_book):
    html = (built_book / "book" / "08_models.html").read_text(encoding="utf-8")
    values = re.findall(
        r"정확도\(exact match\): (\d\.\d{4}) \(맞힌 수 ([\d,]+)개 / 평가용 ([\d,]+)개\)", html
    )
    assert len(values) == 1, values
    accuracy, right, total = float(values[0][0]), *(int(v.replace(",", "")) for v in values[0][1:])
    assert accuracy >= 0.95
    assert accuracy == pytest.approx(right / total, abs=5e-5)  # four digits: one error shows


def test_chapter9_decodes_with_the_trained_model(built_book):
    html = (built_book / "book" / "09_decoding.html").read_text(encoding="utf-8")
    # the output line of the loading cell, followed by the greedy accuracy (not the cell source)
    greedy = re.search(
        r"(?:8장에서 저장한 가중치를 불러왔습니다|같은 설정으로 학습했습니다)\.\s*"
        r"탐욕적 디코딩 정확도: (\d\.\d+)",
        html,
    )
    assert greedy and float(greedy.group(1)) >= 0.95
    strategies = re.findall(r"(빔 4, α=\S+|τ=[\d.]+[^<\n]*?)\s+정확도 (\d\.\d+)", html)
    assert len(strategies) >= 6, strategies
