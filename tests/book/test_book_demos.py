"""Every demo does what its text says, read from the built book's printed outputs."""

import re

import pytest


def _outputs(html):
    """The text of a page's cell outputs (the <pre> blocks of output areas), tags removed."""
    blocks = re.findall(r'<div class="cell_output.*?<pre>(.*?)</pre>', html, re.S)
    return "\n".join(re.sub(r"<[^>]+>", "", b) for b in blocks)


def test_tiny_gpt_learns_the_format_and_the_text_says_it_does_not_add(built_book):
    """8.4: the text says the model learns where '+', '=' and spaces go but not the sum, which
    stays at chance (0.1); the printed accuracies, with their counts, must agree."""
    html = (built_book / "book" / "08_models.html").read_text(encoding="utf-8")
    out = _outputs(html)
    fmt = re.search(r"형식 자리 정확도 (\d\.\d{4}) \(([\d,]+)/([\d,]+)\)", out)
    ans = re.search(r"답 자리 정확도\s+(\d\.\d{4}) \(([\d,]+)/([\d,]+), 우연 수준 0\.1\)", out)
    assert fmt and ans, out[:2000]
    for m in (fmt, ans):
        right, total = (int(g.replace(",", "")) for g in m.groups()[1:])
        assert float(m.group(1)) == pytest.approx(right / total, abs=5e-5)
        assert total >= 500
    assert float(fmt.group(1)) >= 0.95
    assert float(ans.group(1)) < 0.25  # chance level, as the text states
    assert "이 모델은 덧셈을 배우지 못했습니다" in html
    assert "더 오래 학습해야" not in html


def test_chapter9_accuracies_show_their_counts(built_book):
    html = (built_book / "book" / "09_decoding.html").read_text(encoding="utf-8")
    found = re.findall(r"정확도:? (\d\.\d{4}) \((\d+)/(\d+)\)", _outputs(html))
    assert len(found) >= 8, found  # greedy, then greedy, two beams and five samplers
    for value, right, total in found:
        assert float(value) == pytest.approx(int(right) / int(total), abs=5e-5)


def test_float16_softmax_demo_shows_float32_accumulation(built_book):
    """1.2's box says a float16 accumulator stalls at 2048 while torch.softmax, which adds in
    float32, gives the exact 1/4096 for 4096 equal scores."""
    out = _outputs((built_book / "book" / "01_softmax.html").read_text(encoding="utf-8"))
    assert re.search(r"float16으로 더한 분모: 2048\.0\s+float32로 더한 분모: 4096\.0", out), out
    m = re.search(r"torch\.softmax\(float16\)의 확률: ([\d.e-]+)\s+합: ([\d.]+)", out)
    assert m and float(m.group(1)) == 1 / 4096 and float(m.group(2)) == pytest.approx(1.0)


def test_trained_heads_specialise_as_the_text_says(built_book):
    """4.3: a tiny model trained on the page predicts the previous and the first token far above
    chance (0.1), and the text says one head puts over 0.9 of its weight on the previous position,
    the other over 0.9 on the first position, each under 0.05 on the other's position."""
    html = (built_book / "book" / "04_multihead.html").read_text(encoding="utf-8")
    out = _outputs(html)
    found = re.findall(r"(바로 앞|첫) 토큰 정확도 (\d\.\d{4}) \(([\d,]+)/([\d,]+)\)", out)
    assert [target for target, *_ in found] == ["바로 앞", "첫"], out[:3000]
    for _, value, right, total in found:
        right, total = int(right.replace(",", "")), int(total.replace(",", ""))
        assert float(value) == pytest.approx(right / total, abs=5e-5)
        assert total >= 1000
        assert right / total > 0.99  # the text: both accuracies exceed 0.99, chance is 0.1
    assert "우연 수준 0.1" in out
    heads = re.findall(r"헤드 (\d): 바로 앞 위치에 평균 (\d\.\d\d), 첫 위치에 평균 (\d\.\d\d)", out)
    assert [int(i) for i, _, _ in heads] == [0, 1], out[:3000]
    prev, first = ([float(h[k]) for h in heads] for k in (1, 2))
    p, f = prev.index(max(prev)), first.index(max(first))
    assert p != f
    assert min(prev[p], first[f]) > 0.9 and max(first[p], prev[f]) < 0.05
    assert "(1000, 2, 8, 8)" in out and "(h, T, S): (2, 8, 8)" in out
    text = re.sub(r"<[^>]+>", "", html)
    assert "평균 0.9가 넘는 가중치" in text and "0.05가 안 되는 가중치" in text
    assert "학습하지 않은 무작위 가중치" not in text
