"""A benchmark unit with its own QA protocol, declared outside the package as a third party would: one module
and one entry point (``toy_qa_benchmark-0.1.dist-info/entry_points.txt``), written against the kit alone.

Its protocol ``toyqa`` asks with its own prompt (the retrieved records, then the question), judges with its own
judge (a yes/no prompt, model ``toy-judge``) and scores an answer's words with its own scorer (exact match: 1 when
the gold occurs in the answer).
"""

from __future__ import annotations

from evals.benchmarks.kit import (
    CORRECT,
    UNPARSED,
    WRONG,
    AnswerRequest,
    Benchmark,
    JudgeReply,
    JudgeRequest,
    Lexical,
    Protocol,
    ProtocolSpec,
    Unit,
    bleu1,
)

ANSWER = "Answer the question from these memories.\n{memories}\nQuestion: {question}"
JUDGE = "[JUDGE-toyqa] Is the response right?\nGold: {gold}\nResponse: {response}"


def exact_match(answer: str, expected: str, category: str | None = None) -> float:
    """1.0 when the gold occurs in the answer (case-insensitively), else 0.0: the toy's own "F1"."""
    return float(expected.strip().lower() in answer.lower())


class ToyQAProtocol(Protocol):
    name = "toyqa"
    judge_model = "toy-judge"

    @staticmethod
    def extract(sources: object) -> dict[str, str]:
        return {"answer": ANSWER, "judge": JUDGE}  # its own templates: no published file to read them from

    def answer_request(self, point):
        memories = "\n".join(record.text for record in point.records) or "(none)"
        return AnswerRequest(
            [{"role": "user", "content": self.templates["answer"].format(memories=memories, question=point.question)}]
        )

    def judge_request(self, point, answer):
        return JudgeRequest(
            [{"role": "user", "content": self.templates["judge"].format(gold=point.expected_fact, response=answer)}]
        )

    def read_verdict(self, content):
        word = content.strip().lower()
        return JudgeReply(CORRECT if word.startswith("yes") else WRONG if word.startswith("no") else UNPARSED)


def _protocol() -> type:
    return ToyQAProtocol


UNIT = Unit(
    name="toyqa",
    title="Toy QA benchmark",
    releases=(
        Benchmark(
            name="toyqa",
            title="Toy QA benchmark (declared in test code, with its own protocol)",
            homepage="https://example.invalid/toyqa",
            version="1",
            license="CC0",
            non_commercial=False,
            test_points="one question per conversation",
            evidence="turns",
            data=None,
            importer=None,
            not_importable="a test's own benchmark: its corpora are the fixtures'",
        ),
    ),
    protocols={
        "toyqa": ProtocolSpec(_protocol, "toy-judge", lexical=Lexical("toyqa exact match", "harness", exact_match, bleu1))
    },
)
