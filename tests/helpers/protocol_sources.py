"""Stand-ins for the published files the protocols read, written by the tests: the same shape as
LongMemEval's, mem0's, LoCoMo's, BEAM's and LoCoMo-Plus's scripts (the same functions, assignments, conditions and format
calls), our own placeholder prose. Each template starts with a marker, so a test (and
tests/helpers/llm_server.py) can tell which one a request was built from.

``write_sources(downloads)`` writes them where ``evals fetch`` puts sources and returns the pins
(their digests computed here), for ``evals.benchmarks.protocols.PINS``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from evals.benchmarks import SourceFile

LME, LME_COMMIT = "xiaowu0162/LongMemEval", "9e0b455f4ef0e2ab8f2e582289761153549043fc"
MEM0, MEM0_COMMIT = "mem0ai/mem0", "b3ede5b7c0ac0e847b03786a603c107ac943b3ee"
LOCOMO, LOCOMO_COMMIT = "snap-research/LoCoMo", "3eb6f2c585f5e1699204e3c3bdf7adc5c28cb376"

JUDGE_BODY = "\\nQuestion: {}\\nGold: {}\\nResponse: {}\\nVerdict, yes or no:"

EVALUATE_QA = f'''import json


def get_anscheck_prompt(task, question, answer, response, abstention=False):
    if not abstention:
        if task in ['single-session-user', 'single-session-assistant', 'multi-session']:
            template = "[JUDGE-GENERAL]{JUDGE_BODY}"
            prompt = template.format(question, answer, response)
        elif task == 'temporal-reasoning':
            template = "[JUDGE-TEMPORAL]{JUDGE_BODY}"
            prompt = template.format(question, answer, response)
        elif task == 'knowledge-update':
            template = "[JUDGE-UPDATE]{JUDGE_BODY}"
            prompt = template.format(question, answer, response)
        elif task == 'single-session-preference':
            template = "[JUDGE-RUBRIC]{JUDGE_BODY}"
            prompt = template.format(question, answer, response)
        else:
            raise NotImplementedError
    else:
        template = "[JUDGE-ABSTENTION]{JUDGE_BODY}"
        prompt = template.format(question, answer, response)
    return prompt
'''

RUN_GENERATION = """import json


def prepare_prompt(entry, retriever_type, topk_context, useronly, history_format, cot, tokenizer, tokenizer_backend,
                   max_retrieval_length, merge_key_expansion_into_value, con=False, con_client=None, con_model=None):
    if retriever_type == 'no-retrieval':
        answer_prompt_template = '{}'
        if cot:
            answer_prompt_template += ' step by step'
    else:
        if merge_key_expansion_into_value is None or merge_key_expansion_into_value == 'none':
            if cot:
                answer_prompt_template = '[ANSWER-COT]\\n{}\\n{}\\n{}'
            else:
                answer_prompt_template = '[LME-ANSWER] Read the sessions.\\nSESSIONS:{}\\nTODAY: {}\\nQ: {}\\nA:'
        elif merge_key_expansion_into_value == 'merge':
            answer_prompt_template = '[ANSWER-MERGE]\\n{}\\n{}\\n{}'
        else:
            raise NotImplementedError
    history_string = ''
    for i, cur_item in enumerate(entry):
        (chunk_date, chunk_entry) = cur_item
        sess_string = '\\n' + json.dumps(chunk_entry)
        if retriever_type in ['orig-session', 'flat-session', 'oracle-session']:
            history_string += '\\n=== part {} ===\\nwhen: {}\\nlog:\\n{}\\n'.format(i + 1, chunk_date, sess_string)
        elif retriever_type in ['orig-turn', 'flat-turn', 'oracle-turn']:
            history_string += '\\n=== part {} ===\\nwhen: {}\\nlog:\\n{}\\n'.format(i + 1, chunk_date, sess_string)
    return answer_prompt_template.format(history_string, entry, entry)
"""

MEM0_PROMPTS = '''ANSWER_PROMPT_GRAPH = """[GRAPH] {{question}}"""

ANSWER_PROMPT = """[MEM0-ANSWER] Memories of two people.
Person {{speaker_1_user_id}}:
{{speaker_1_memories}}
Person {{speaker_2_user_id}}:
{{speaker_2_memories}}
Question: {{question}}
Answer:
"""
'''

MEM0_JUDGE = '''import json

ACCURACY_PROMPT = """[MEM0-JUDGE] Grade it.
Question: {question}
Gold: {gold_answer}
Response: {generated_answer}
Reply with a JSON label.
"""


def evaluate_llm_judge(question, gold_answer, generated_answer):
    return ACCURACY_PROMPT.format(question=question, gold_answer=gold_answer, generated_answer=generated_answer)
'''

GPT_UTILS = '''import random

QA_PROMPT = """
[LOCOMO-QA] Short answer please.

Question: {} Answer:
"""

QA_PROMPT_CAT_5 = """
[LOCOMO-QA5] Pick one.

Question: {} Answer:
"""

CONV_START_PROMPT = "[LOCOMO-START] Two people talk: {} and {}.\\n\\n"


def get_cat_5_answer(model_prediction, answer_key):
    return model_prediction


def prepare_for_rag(args, data):
    dialogs = []
    for dialog in data:
        if 'blip_caption' in dialog:
            dialogs.append(dialog['speaker'] + ' says <' + dialog['text'] + '>' + ' with image ' + dialog['blip_caption'])
        else:
            dialogs.append(dialog['speaker'] + ' says <' + dialog['text'] + '>')
    return dialogs


def get_rag_context(context_database, query_vector, args):
    sorted_context = context_database
    sorted_date_times = context_database
    if args.rag_mode in ['dialog', 'observation']:
        query_context = '\\n'.join([date_time + ' | ' + context for date_time, context in zip(sorted_date_times, sorted_context)])
    else:
        query_context = '\\n\\n'.join([date_time + ' | ' + context
                                      for date_time, context in zip(sorted_date_times, sorted_context)])
    return query_context, []


def get_input_context(data, num_question_tokens, encoding, args):
    query_conv = ''
    for i in range(1, 3):
        if 'session_%s' % i in data:
            query_conv += "\\n\\n"
            for dialog in data['session_%s' % i][::-1]:
                turn = ''
                turn = dialog['speaker'] + ' says <' + dialog['text'] + '>' + '\\n'
                if "blip_caption" in dialog:
                    turn += ' with image %s.' % dialog["blip_caption"]
                turn += '\\n'
                query_conv = turn + query_conv
            query_conv = 'WHEN: ' + data['session_%s_date_time' % i] + '\\n' + 'TALK:\\n' + query_conv
    return query_conv


def get_gpt_answers(in_data, out_data, prediction_key, args):
    for qa in in_data['qa']:
        questions = []
        cat_5_idxs = []
        if qa['category'] == 2:
            questions.append(qa['question'] + ' [HINT: use the dates]')
        elif qa['category'] == 5:
            question = qa['question'] + " Choose: (a) {} (b) {}. "
            if random.random() < 0.5:
                question = question.format('[NOT IN THE TALK]', qa['answer'])
            else:
                question = question.format(qa['answer'], '[NOT IN THE TALK]')
            cat_5_idxs.append(len(questions))
            questions.append(question)
        else:
            questions.append(qa['question'])
        query_conv = ''
        query = (query_conv + '\\n\\n' + QA_PROMPT.format(questions[0]) if len(cat_5_idxs) == 0
                 else query_conv + '\\n\\n' + QA_PROMPT_CAT_5.format(questions[0]))
    return out_data
'''

EVALUATION = '''def eval_question_answering(qas, eval_key='prediction', metric='f1'):
    return [], 0.0, []
'''

BEAM, BEAM_COMMIT = "mohammadtavakoli78/BEAM", "b2a3ee8ba12d68f83143dda191097dc3e028ddd3"
PLUS, PLUS_COMMIT = "xjtuleeyf/Locomo-Plus", "059f4e3d38f7f1f96765e8e2cb7de3097551bffb"

# BEAM's src/prompts.py: its two templates as module-level strings with BEAM's <placeholders> (<question> too, which
# the published judge code never fills), among other constants.
BEAM_PROMPTS = '''plan_prompt = """[PLAN] not used"""

unified_llm_judge_base_prompt = """[BEAM-JUDGE]
Question: <question>
Criterion: <rubric_item>
Response: <llm_response>
End of response. Reply with JSON: a score of 1.0, 0.5 or 0.0.
"""

answer_generation_for_rag = """[BEAM-ANSWER] Answer from the context.
CONTEXT:
<context>
QUESTION:
<question>
"""
'''

BEAM_METRICS = """import json


def semantic_align(reference, system, thr: float = 0.65):
    return reference, system


def event_ordering_score(reference_list, system_list, align_type, llm, thr: float = 0.65):
    return {}
"""

BEAM_REPORT = """def report_llms_accuracies(evaluation_directory, row_names, output_filename):
    return None
"""

PLUS_PROMPT = '''CONV_START_PROMPT = "unused here"

PROMPT_TEMPLATES = {
    "Cognitive": """
[PLUS-JUDGE-COGNITIVE]
Evidence:
{evidence}
Prediction: {pred}
Label it: {{"label": ..., "reason": ...}}
""",
    "default": """
[PLUS-JUDGE-DEFAULT]
Gold: {gold}
Prediction: {pred}
Evidence: {evidence}
""",
}
'''

PLUS_UTILS = '''CONV_START_PROMPT = (
    "[PLUS-START] {} and {} talk. "
    "Dates first.\\n\\n"
)
INSTRUCTION_QA = "[PLUS-QA] Answer the question.\\n\\n"
INSTRUCTION_COGNITIVE = (
    "[PLUS-COGNITIVE] Reply, remembering.\\n\\n"
)
'''

PLUS_JUDGE = """LABEL_TO_SCORE = {"correct": 1.0, "partial": 0.5, "wrong": 0.0}
"""

FILES = {
    "longmemeval": (
        LME,
        LME_COMMIT,
        {"src/evaluation/evaluate_qa.py": EVALUATE_QA, "src/generation/run_generation.py": RUN_GENERATION},
    ),
    "mem0": (MEM0, MEM0_COMMIT, {"evaluation/metrics/llm_judge.py": MEM0_JUDGE, "evaluation/prompts.py": MEM0_PROMPTS}),
    "locomo": (LOCOMO, LOCOMO_COMMIT, {"task_eval/gpt_utils.py": GPT_UTILS, "task_eval/evaluation.py": EVALUATION}),
    "beam": (
        BEAM,
        BEAM_COMMIT,
        {
            "src/prompts.py": BEAM_PROMPTS,
            "src/evaluation/compute_metrics.py": BEAM_METRICS,
            "src/evaluation/report_results.py": BEAM_REPORT,
        },
    ),
    "locomo_plus": (
        PLUS,
        PLUS_COMMIT,
        {
            "evaluation_framework/task_eval/llm_as_judge.py": PLUS_JUDGE,
            "evaluation_framework/task_eval/prompt.py": PLUS_PROMPT,
            "evaluation_framework/task_eval/evaluate_qa.py": "# stand-in\n",
            "evaluation_framework/task_eval/utils.py": PLUS_UTILS,
            "evaluation_framework/scripts/judge.sh": "#!/bin/bash\n# stand-in: gpt-4o-mini\n",
        },
    ),
}


def write_tree(root: Path, protocol: str) -> tuple[SourceFile, ...]:
    """``protocol``'s stand-ins at their repository paths under ``root`` (a --protocol-source tree)."""
    repo, commit, files = FILES[protocol]
    pins = []
    for path, text in files.items():
        target = Path(root) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        pins.append(SourceFile(repo, commit, path, hashlib.sha256(text.encode("utf-8")).hexdigest()))
    return tuple(pins)


def write_sources(downloads: Path) -> dict[str, tuple[SourceFile, ...]]:
    """Every protocol's stand-ins where `evals fetch` puts sources (downloads/sources/OWNER/REPO/COMMIT/PATH)."""
    return {name: write_tree(Path(downloads) / "sources" / repo / commit, name) for name, (repo, commit, _) in FILES.items()}


def pin_sources(patch, downloads: Path) -> Path:
    """Every protocol's stand-ins written into ``downloads``, their digests made the pins and ``downloads`` the
    downloads folder ($EVALS_DOWNLOADS), through ``patch`` (a pytest.MonkeyPatch, which undoes it all)."""
    from evals.benchmarks.protocols import PINS

    for name, pinned in write_sources(downloads).items():
        patch.setitem(PINS, name, pinned)
    patch.setenv("EVALS_DOWNLOADS", str(downloads))
    return downloads


def served(protocol: str, sources: tuple[SourceFile, ...]) -> tuple[tuple[SourceFile, ...], dict[str, bytes]]:
    """A release's ``sources`` pinned to ``protocol``'s stand-ins, and the stand-ins' bytes by the path a mirror
    serves them at (OWNER/REPO/COMMIT/PATH), for `evals fetch` through tests/helpers/benchmark_server.py."""
    _, _, files = FILES[protocol]
    bodies = {source.path: files[source.path].encode("utf-8") for source in sources}
    pinned = tuple(
        SourceFile(s.repo, s.commit, s.path, hashlib.sha256(bodies[s.path]).hexdigest()) for s in sources
    )
    return pinned, {s.relative: bodies[s.path] for s in pinned}
