"""What a failed check tells the student: the catalogue of runtime errors that name a common
mistake (KNOWN_ERRORS), the device hints, the tampering message, and the outcome and message of
an exception a check raised (never check source code). Trusted judge only.
"""

import re

from autograder.judge.checking import CheckFailed

# errors that mean tensors on two devices met (the student made a tensor on the wrong one)
DEVICE_MIX = re.compile(r"same device|expected device|two devices|wrong device", re.I)
GENERATOR_DEVICE = re.compile(r"device type for generator", re.I)
DEVICE_HINT = (
    "서로 다른 장치(device)의 텐서가 섞였습니다. 채점기는 입력을 GPU(cuda:0)에 둔 것처럼 "
    "실행합니다: 장치를 정하지 않고 만든 텐서(torch.arange(T), torch.ones(...))나 .cpu() / "
    ".to('cpu') 로 옮긴 텐서는 CPU에 있습니다. 새 텐서는 torch.arange(T, device=x.device)처럼 "
    "입력과 같은 장치에 만드세요."
)
GENERATOR_HINT = (
    "난수 생성기(torch.Generator)와 난수를 뽑는 텐서의 장치가 다릅니다. 채점기는 입력을 "
    "GPU(cuda:0)에 둔 것처럼 실행합니다: 생성기는 과제가 말하는 장치에 만들고 "
    "(예: torch.Generator(device=x.device)), 난수는 같은 장치에서 뽑으세요."
)
# runtime errors that name a common mistake: (pattern of the error, pattern of the student's line
# that raised it (cell_of) or None, diagnosis in Korean)
KNOWN_ERRORS = (
    (
        re.compile(r"cannot be converted to type c10::(Half|BFloat16) without overflow"),
        None,
        "float16/bfloat16 로 나타낼 수 없는 값(-1e9, float32 의 최솟값 등)으로 채웠습니다: 채울 "
        "값은 점수의 dtype 에 맞추세요 (torch.finfo(scores.dtype).min).",
    ),
    (
        re.compile(r"view size is not compatible with input tensor's size and stride"),
        None,
        "transpose 등으로 메모리 순서가 바뀐 텐서에 .view 를 썼습니다: .contiguous().view(...) "
        "또는 .reshape(...) 를 쓰세요.",
    ),
    (
        re.compile(r"cannot reshape tensor of 0 elements into shape .*-1"),
        None,
        "원소가 0개인 텐서(예: 길이 T=0)에서 -1 로 크기를 추론하게 했습니다: 0개로는 -1 을 정할 "
        "수 없으니 크기를 직접 계산해 넘기세요 (예: h * d_head).",
    ),
    (
        re.compile(
            r"expected scalar type \w+ but found \w+"
            r"|expected (m1 and m2|both .*) to have the same dtype"
        ),
        None,
        "dtype 이 다른 텐서끼리 연산했습니다 (예: float32 누산기와 float16 입력의 행렬곱): 연산 "
        "전에 한 dtype 으로 맞추고, 결과는 입력의 dtype 으로 돌려주세요.",
    ),
    (
        re.compile(r"must match the size of tensor"),
        re.compile(r"\.T(?!\w)"),
        ".T 는 모든 차원의 순서를 뒤집습니다: (B, T, d) 입력이면 (d, T, B) 가 되어 행렬곱의 "
        "모양이 맞지 않습니다. 마지막 두 차원만 바꾸려면 .transpose(-2, -1) (또는 .mT) 를 "
        "쓰세요.",
    ),
    (
        re.compile(r"must be a 3D tensor|Dimension out of range"),
        re.compile(r"\bbmm\("),
        "torch.bmm 은 3차원 (B, n, m) 텐서끼리만 곱합니다: 배치 차원이 없거나 여러 개인 입력에는 "
        "@ (torch.matmul) 를 쓰고, 전치는 .transpose(-2, -1) 로 하세요.",
    ),
    (
        re.compile(r"outer: Expected 1-D argument"),
        None,
        "torch.outer 는 1차원 벡터만 받습니다: 배치 입력 (..., n) 에서는 unsqueeze 와 "
        "브로드캐스팅으로 바깥곱을 만드세요.",
    ),
    (
        re.compile(r"unsupported operand type\(s\) for .*'NoneType'"),
        None,
        "None 인 인자로 연산했습니다: None 은 '주어지지 않음'이니 건너뛰세요.",
    ),
    (
        re.compile(r"selected index k out of range"),
        None,
        "k 가 마지막 차원의 크기보다 큽니다: torch.topk 에 넘기기 전에 k 를 그 크기 이하로 "
        "줄이세요 (과제가 k 가 크면 어떻게 하라고 하는지 확인하세요).",
    ),
)
# what a runtime error means, in Korean, for errors no known mistake explains: shown before the
# raw error (first pattern that matches the error text, else the exception type's line)
ERROR_MEANINGS = (
    (
        re.compile(
            r"must match the size of tensor|cannot be multiplied|is invalid for input of size"
            r"|The expanded size|size mismatch|shape mismatch|not broadcastable"
        ),
        "텐서의 모양이 연산에 맞지 않습니다: 두 텐서가 브로드캐스팅되지 않거나 행렬곱의 안쪽 "
        "차원이 다르거나, 바꾸려는 모양의 원소 수가 다릅니다. 오류가 난 줄에서 각 텐서의 "
        "모양(.shape)을 아래 입력의 모양과 함께 확인하세요.",
    ),
    (
        re.compile(r"Dimension out of range|dimension specified as \S+ but tensor has no"),
        "텐서에 없는 차원(dim)을 골랐습니다: 입력의 차원 수가 생각과 다를 수 있습니다 (배치 "
        "차원이 없거나 여러 개인 입력). 음수 dim(-1, -2)은 뒤에서부터 셉니다.",
    ),
    (
        re.compile(r"out of bounds|index \S+ is out of|out of range"),
        "인덱스가 텐서의 범위를 벗어났습니다: 아래 입력의 모양과 값(길이 0, 마지막 위치 등)에서 "
        "인덱스가 어디까지 가는지 확인하세요.",
    ),
    (
        re.compile(r"NotImplementedError"),
        "아직 구현하지 않았습니다: 셀의 `raise NotImplementedError()` 를 지우고 코드를 채우세요.",
    ),
    (
        re.compile(r"is not defined"),
        "정의되지 않은 이름을 썼습니다: 오타이거나, 채점기가 실행하지 않는 곳(다른 노트북, 테스트 "
        "셀)에 정의한 이름일 수 있습니다. 필요한 것은 답안 셀 안에서 정의하거나 import 하세요.",
    ),
    (
        re.compile(r"unexpected keyword argument|required positional argument|positional argument"),
        "함수를 부른 인자가 정의와 맞지 않습니다: 과제가 정한 함수 이름과 인자(이름, 순서, "
        "기본값)를 그대로 지키세요.",
    ),
)
ERROR_TYPES = {
    "RuntimeError": "PyTorch 연산이 이 입력을 받아들이지 않았습니다",
    "TypeError": "값의 종류(타입)가 연산에 맞지 않습니다",
    "ValueError": "값이 연산이 받아들이는 범위 밖에 있습니다",
    "IndexError": "인덱스가 범위를 벗어났습니다",
    "KeyError": "사전(dict)에 없는 키를 찾았습니다",
    "AttributeError": "객체에 없는 속성이나 메서드를 썼습니다",
    "ZeroDivisionError": "0 으로 나누었습니다",
    "RecursionError": "함수가 끝없이 자기 자신을 불렀습니다",
}


def error_meaning(error):
    """A Korean sentence on what the runtime error ``error`` ("TypeError: ...") means, to show
    before it: ERROR_MEANINGS, else the exception type's line, else a general one."""
    for pattern, meaning in ERROR_MEANINGS:
        if pattern.search(error):
            return meaning
    kind = ERROR_TYPES.get(error.split(":", 1)[0].strip())
    general = "아래는 파이썬/PyTorch 가 낸 원래 오류 메시지와 오류가 난 줄입니다."
    return f"코드가 이 입력에서 오류를 냈습니다{': ' + kind if kind else ''}. {general}"


# the worker's blocked operators raise this (worker.block_operators)
FORBIDDEN_OP = re.compile(r"forbidden operator (aten::[\w.]+)")


class StudentCrashed(CheckFailed):
    """The student's worker died (crash, exit, memory or CPU limit)."""


class StudentTimeout(CheckFailed):
    """The student's worker ran past its wall-clock limit."""


def input_label(path):
    """Label of an input tensor at ``path`` of a request's values, as the worker names it:
    '인자 0', '인자 1[2]', 'mask', 'state_dict[w]'."""
    head, rest = path[0], list(path[1:])
    if head in ("args", "inputs") and rest:
        label, rest = f"인자 {rest[0]}", rest[1:]
    elif head in ("kwargs", "input_kwargs", "init_kwargs") and rest:
        label, rest = str(rest[0]), rest[1:]
    else:
        label = str(head)
    return label + "".join(f"[{r}]" for r in rest)


# the ' (`f` 셀, 5행: `...`)' part the worker appends to an error (worker.cell_location)
CELL_OF = re.compile(r" \((?:[^`()]|`[^`]*`)* 셀, \d+행: `(.*)`\)$", re.S)


def cell_of(error):
    """The ' (`f` 셀, 5행: `...`)' part the worker appends to an error, else ''."""
    m = CELL_OF.search(error)
    return m.group(0) if m else ""


def line_of(error):
    """The student's line quoted in cell_of(error), else ''."""
    m = CELL_OF.search(error)
    return m.group(1) if m else ""


def tamper_message(hit):
    text, cell, line = hit
    return (
        f"`{text}` ({cell}, {line}행): 채점기나 파이썬 인터프리터, torch 자체를 들여다보거나 "
        "바꾸는 코드입니다. 이런 코드가 실행된 검사는 점수를 받을 수 없고, 강사에게 보고됩니다. "
        "과제에 필요한 계산만 작성하세요."
    )


def feedback(exc):
    """(outcome, message) for an exception raised by a check item (never check source code)."""
    if isinstance(exc, StudentTimeout):
        return "timeout", str(exc)
    if isinstance(exc, StudentCrashed):
        return "crashed", str(exc)
    if isinstance(exc, CheckFailed):
        return "failed", str(exc)
    if isinstance(exc, AssertionError):  # a plain assert: its own message, never its source
        text = str(exc).split("\nassert ", 1)[0]
        if not text or text.startswith("assert "):
            text = "검사 실패 (check failed)"
        return "failed", text
    return "failed", f"결과를 검사할 수 없습니다 ({type(exc).__name__}: {str(exc)[:200]})"
