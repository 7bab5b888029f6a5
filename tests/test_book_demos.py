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
