"""LLM answers and judging against any OpenAI-compatible endpoint, every response cached.

::

    client = ChatClient(base_url="http://127.0.0.1:8080/v1", cache=cache, concurrency=4)
    answers = answer_run(client, asked, answer_model="gpt-4o-mini", judge_model="gpt-4o-mini")
"""

from evals.benchmarks.protocols.prompts import PROMPT_NAMES, prompt, prompt_digests
from evals.run.llm._answers import (
    AnswerRun,
    AskedPoint,
    ChatSummarizer,
    PointAnswer,
    answer_identity,
    answer_run,
)
from evals.run.llm._client import DEFAULT_BASE_URL, ChatClient, LLMError, Reply, RetryPolicy, Usage, exposed_key_warning

__all__ = [
    "DEFAULT_BASE_URL",
    "PROMPT_NAMES",
    "AnswerRun",
    "AskedPoint",
    "ChatClient",
    "ChatSummarizer",
    "LLMError",
    "PointAnswer",
    "Reply",
    "RetryPolicy",
    "Usage",
    "answer_identity",
    "answer_run",
    "exposed_key_warning",
    "prompt",
    "prompt_digests",
]
