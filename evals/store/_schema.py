"""The store's schema, as named migrations applied in order.

``evals_schema`` records each applied migration (version, name, time). A store
whose highest version is above the last migration here was written by a newer
``evals`` and is refused untouched; one below is upgraded step by step, each
step in its own transaction.

Migrations are append-only like the data: never edit one that has shipped,
add the next.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["MIGRATIONS", "SCHEMA_TABLE", "Migration", "current_version"]

SCHEMA_TABLE = "evals_schema"


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


_INITIAL = f"""
CREATE TABLE {SCHEMA_TABLE} (
    version INTEGER PRIMARY KEY,
    name VARCHAR NOT NULL,
    applied_at TIMESTAMP NOT NULL
);

-- One row per run. "timestamp" is when the run started, in UTC.
CREATE TABLE runs (
    run_id VARCHAR PRIMARY KEY,
    "commit" VARCHAR NOT NULL,
    dirty BOOLEAN NOT NULL,
    model VARCHAR NOT NULL,
    "date" DATE NOT NULL,
    "timestamp" TIMESTAMP NOT NULL,
    strategy VARCHAR NOT NULL,
    strategy_config JSON NOT NULL,
    config_key VARCHAR NOT NULL,
    k INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    corpus_name VARCHAR NOT NULL,
    corpus_dir VARCHAR NOT NULL,
    corpus_digest VARCHAR NOT NULL,
    tokenizer VARCHAR NOT NULL,
    package_version VARCHAR NOT NULL,
    mneme_version VARCHAR,
    python_version VARCHAR NOT NULL,
    duration_s DOUBLE NOT NULL,
    conversation_count INTEGER NOT NULL,
    hits INTEGER NOT NULL,
    total INTEGER NOT NULL,
    recall DOUBLE,
    context_tokens BIGINT NOT NULL,
    cache_key VARCHAR,
    appended_at TIMESTAMP NOT NULL
);

-- Each corpus's conversations, stored once per corpus digest however many runs
-- use them: one row per conversation, its turns as parallel lists.
CREATE TABLE conversations (
    corpus_digest VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    description VARCHAR NOT NULL,
    roles VARCHAR[] NOT NULL,
    contents VARCHAR[] NOT NULL,
    PRIMARY KEY (corpus_digest, conversation_id)
);

-- Each corpus's labelled test points (the turn's test_at block).
CREATE TABLE corpus_test_points (
    corpus_digest VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_index INTEGER NOT NULL,
    question VARCHAR NOT NULL,
    expected_fact VARCHAR NOT NULL,
    expected_keywords VARCHAR[] NOT NULL
);

-- One row per test point of a run. The retrieved records, in rank order, are
-- record_turns[i] (the index of the turn whose content record i is) or, where
-- that is NULL, the next entry of record_texts; text_tokens[j] is the token
-- count of record_texts[j].
CREATE TABLE test_points (
    run_id VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_index INTEGER NOT NULL,
    hit BOOLEAN NOT NULL,
    context_tokens BIGINT NOT NULL,
    record_turns INTEGER[] NOT NULL,
    record_texts VARCHAR[] NOT NULL,
    text_tokens INTEGER[] NOT NULL
);

-- Per run and conversation, the token count (under the run's tokenizer) of each
-- turn that some record referenced, NULL for the others: a record that is a
-- turn counts that turn's tokens.
CREATE TABLE run_turn_tokens (
    run_id VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_tokens INTEGER[] NOT NULL
);
"""

_SQL_VIEWS = """
-- The latest run of each configuration on each corpus (what the leaderboard shows).
CREATE VIEW latest_runs AS
SELECT * FROM runs
QUALIFY row_number() OVER (
    PARTITION BY corpus_digest, config_key ORDER BY "timestamp" DESC, appended_at DESC, run_id DESC
) = 1;

-- One row per turn, for ad-hoc SQL.
CREATE VIEW turns AS
SELECT corpus_digest, conversation_id,
       unnest(range(len(contents))) AS turn_index, unnest(roles) AS role, unnest(contents) AS content
FROM conversations;

-- Test points of every run with their question, for ad-hoc SQL.
CREATE VIEW test_point_results AS
SELECT tp.run_id, tp.conversation_id, tp.turn_index, q.question, q.expected_fact, q.expected_keywords,
       tp.hit, tp.context_tokens, len(tp.record_turns) AS record_count
FROM test_points tp
JOIN runs r USING (run_id)
JOIN corpus_test_points q
  ON q.corpus_digest = r.corpus_digest AND q.conversation_id = tp.conversation_id AND q.turn_index = tp.turn_index;
"""

# Corpus fields added after the seed. Rows stored before this migration come
# from corpora without them, so NULL reads as the field's default: no
# unrecorded turn, no evidence turns, no category, answerable.
_EVIDENCE_CATEGORIES = """
ALTER TABLE conversations ADD COLUMN unrecorded INTEGER[];
ALTER TABLE corpus_test_points ADD COLUMN evidence_turns INTEGER[];
ALTER TABLE corpus_test_points ADD COLUMN category VARCHAR;
ALTER TABLE corpus_test_points ADD COLUMN answerable BOOLEAN;

CREATE OR REPLACE VIEW test_point_results AS
SELECT tp.run_id, tp.conversation_id, tp.turn_index, q.question, q.expected_fact, q.expected_keywords,
       tp.hit, tp.context_tokens, len(tp.record_turns) AS record_count,
       q.category, coalesce(q.answerable, true) AS answerable, coalesce(q.evidence_turns, []) AS evidence_turns,
       CASE WHEN len(q.evidence_turns) > 0 THEN list_has_any(tp.record_turns, q.evidence_turns) END AS evidence_any,
       CASE WHEN len(q.evidence_turns) > 0 THEN list_has_all(tp.record_turns, q.evidence_turns) END AS evidence_all
FROM test_points tp
JOIN runs r USING (run_id)
JOIN corpus_test_points q
  ON q.corpus_digest = r.corpus_digest AND q.conversation_id = tp.conversation_id AND q.turn_index = tp.turn_index;

-- Per run and category: recall and evidence recall over answerable test points, and the
-- unanswerable ones counted apart. category is NULL for test points without one.
CREATE VIEW category_results AS
SELECT run_id, category,
       count(*) FILTER (WHERE answerable) AS total,
       count(*) FILTER (WHERE answerable AND hit) AS hits,
       count(*) FILTER (WHERE answerable AND hit) / nullif(count(*) FILTER (WHERE answerable), 0) AS recall,
       count(*) FILTER (WHERE answerable AND evidence_any IS NOT NULL) AS evidence_total,
       count(*) FILTER (WHERE answerable AND evidence_any) AS evidence_any_hits,
       count(*) FILTER (WHERE answerable AND evidence_all) AS evidence_all_hits,
       count(*) FILTER (WHERE NOT answerable) AS unanswerable
FROM test_point_results
GROUP BY run_id, category;
"""

# Intervals, strict recall, MRR and the embedding cache's work, per run; strict
# hit and rank per test point. Old runs get their recall interval backfilled
# (the Wilson arithmetic of evals.judge.stats.wilson_interval, written out: shipped
# migrations are frozen text, never generated by live code).
_STATS = """
ALTER TABLE runs ADD COLUMN recall_low DOUBLE;
ALTER TABLE runs ADD COLUMN recall_high DOUBLE;
ALTER TABLE runs ADD COLUMN strict_hits INTEGER;
ALTER TABLE runs ADD COLUMN mrr DOUBLE;
ALTER TABLE runs ADD COLUMN cache_hits BIGINT;
ALTER TABLE runs ADD COLUMN cache_misses BIGINT;
UPDATE runs SET recall_low = greatest(0.0, (((hits::DOUBLE / total) + 1.959963984540054 * 1.959963984540054 / (2 * total)) / (1 + 1.959963984540054 * 1.959963984540054 / total)) - (1.959963984540054 * sqrt((hits::DOUBLE / total) * (1 - (hits::DOUBLE / total)) / total + 1.959963984540054 * 1.959963984540054 / (4 * total * total)) / (1 + 1.959963984540054 * 1.959963984540054 / total))), recall_high = least(1.0, (((hits::DOUBLE / total) + 1.959963984540054 * 1.959963984540054 / (2 * total)) / (1 + 1.959963984540054 * 1.959963984540054 / total)) + (1.959963984540054 * sqrt((hits::DOUBLE / total) * (1 - (hits::DOUBLE / total)) / total + 1.959963984540054 * 1.959963984540054 / (4 * total * total)) / (1 + 1.959963984540054 * 1.959963984540054 / total)))
WHERE total > 0;
ALTER TABLE test_points ADD COLUMN strict_hit BOOLEAN;
ALTER TABLE test_points ADD COLUMN "rank" INTEGER;

CREATE OR REPLACE VIEW test_point_results AS
SELECT tp.run_id, tp.conversation_id, tp.turn_index, q.question, q.expected_fact, q.expected_keywords,
       tp.hit, tp.context_tokens, len(tp.record_turns) AS record_count,
       q.category, coalesce(q.answerable, true) AS answerable, coalesce(q.evidence_turns, []) AS evidence_turns,
       CASE WHEN len(q.evidence_turns) > 0 THEN list_has_any(tp.record_turns, q.evidence_turns) END AS evidence_any,
       CASE WHEN len(q.evidence_turns) > 0 THEN list_has_all(tp.record_turns, q.evidence_turns) END AS evidence_all,
       tp.strict_hit, tp."rank"
FROM test_points tp
JOIN runs r USING (run_id)
JOIN corpus_test_points q
  ON q.corpus_digest = r.corpus_digest AND q.conversation_id = tp.conversation_id AND q.turn_index = tp.turn_index;
"""

_ANSWERS = """
-- End-to-end answers (evals run --with-answers / --judge). Every column is NULL
-- for a run made without answers, so older runs read as before.
ALTER TABLE runs ADD COLUMN answer_model VARCHAR;
ALTER TABLE runs ADD COLUMN judge_model VARCHAR;
ALTER TABLE runs ADD COLUMN llm_base_url VARCHAR;
ALTER TABLE runs ADD COLUMN llm_settings JSON;  -- temperature, seed, digests of the prompts
ALTER TABLE runs ADD COLUMN answers_total INTEGER;
ALTER TABLE runs ADD COLUMN answers_judged INTEGER;
ALTER TABLE runs ADD COLUMN answers_correct INTEGER;
ALTER TABLE runs ADD COLUMN answers_keyword_hits INTEGER;
ALTER TABLE runs ADD COLUMN answer_latency_s DOUBLE;  -- mean over the answers
ALTER TABLE runs ADD COLUMN llm_requests_made INTEGER;
ALTER TABLE runs ADD COLUMN llm_requests_cached INTEGER;
ALTER TABLE runs ADD COLUMN llm_prompt_tokens BIGINT;
ALTER TABLE runs ADD COLUMN llm_completion_tokens BIGINT;

-- One row per test point of a run with answers.
CREATE TABLE test_point_answers (
    run_id VARCHAR NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_index INTEGER NOT NULL,
    answer VARCHAR NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s DOUBLE NOT NULL,
    keyword_hit BOOLEAN NOT NULL,
    correct BOOLEAN,  -- the judge's verdict; NULL without a judge
    reason VARCHAR,
    judge_prompt_tokens INTEGER,
    judge_completion_tokens INTEGER,
    answerable BOOLEAN NOT NULL  -- false: answered, but neither judged nor counted
);

-- Each answered test point with its question, retrieval outcome and answer, for ad-hoc SQL.
CREATE VIEW answer_results AS
SELECT t.run_id, t.conversation_id, t.turn_index, t.question, t.expected_fact, t.hit,
       a.answer, a.keyword_hit, a.correct, a.reason, a.answerable,
       a.prompt_tokens + a.completion_tokens + coalesce(a.judge_prompt_tokens, 0) + coalesce(a.judge_completion_tokens, 0) AS llm_tokens,
       a.latency_s
FROM test_point_answers a
JOIN test_point_results t USING (run_id, conversation_id, turn_index);
"""

# Metrics as data (evals.judge.metrics): one row per run and metric, for any metric
# declared now or later, so a new metric needs no migration. Runs stored before
# get the metrics their columns hold; strict recall and MRR only where they
# were recorded (schema 4), evidence recall from the stored turn references,
# the answer metrics where the run has answers. value NULL: no data (no test
# point); no row: not measured. The runs columns recall_low, recall_high,
# strict_hits and mrr are no longer written.
_RUN_METRICS = """
CREATE TABLE run_metrics (
    run_id VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    level VARCHAR,  -- e.g. turn or session, for metrics that have levels
    cutoff INTEGER,  -- the k it is measured at, for metrics at several cutoffs
    value DOUBLE,
    n BIGINT NOT NULL,  -- observations: test points, judged answers...
    low DOUBLE,  -- 95% interval, for proportions
    high DOUBLE
);

CREATE TEMP MACRO evals_wilson_low(h, n) AS CASE WHEN n > 0 THEN greatest(0.0,
    ((h::DOUBLE / n + 1.959963984540054 * 1.959963984540054 / (2 * n)) / (1 + 1.959963984540054 * 1.959963984540054 / n))
    - (1.959963984540054 * sqrt((h::DOUBLE / n) * (1 - h::DOUBLE / n) / n + 1.959963984540054 * 1.959963984540054 / (4 * n * n))
       / (1 + 1.959963984540054 * 1.959963984540054 / n))) END;
CREATE TEMP MACRO evals_wilson_high(h, n) AS CASE WHEN n > 0 THEN least(1.0,
    ((h::DOUBLE / n + 1.959963984540054 * 1.959963984540054 / (2 * n)) / (1 + 1.959963984540054 * 1.959963984540054 / n))
    + (1.959963984540054 * sqrt((h::DOUBLE / n) * (1 - h::DOUBLE / n) / n + 1.959963984540054 * 1.959963984540054 / (4 * n * n))
       / (1 + 1.959963984540054 * 1.959963984540054 / n))) END;
CREATE TEMP MACRO evals_ratio(h, n) AS CASE WHEN n > 0 THEN h::DOUBLE / n END;

INSERT INTO run_metrics
SELECT run_id, 'recall', NULL, NULL, evals_ratio(hits, total), total, evals_wilson_low(hits, total), evals_wilson_high(hits, total)
FROM runs;

INSERT INTO run_metrics
SELECT run_id, 'strict_recall', NULL, NULL, evals_ratio(strict_hits, total), total,
       evals_wilson_low(strict_hits, total), evals_wilson_high(strict_hits, total)
FROM runs WHERE strict_hits IS NOT NULL;

INSERT INTO run_metrics
SELECT run_id, 'mrr', NULL, NULL, mrr, total, NULL, NULL FROM runs WHERE strict_hits IS NOT NULL;

INSERT INTO run_metrics
SELECT run_id, metric, NULL, NULL, evals_ratio(found, n), n, evals_wilson_low(found, n), evals_wilson_high(found, n)
FROM (
    SELECT run_id,
           count(*) FILTER (WHERE evidence_any) AS found_any,
           count(*) FILTER (WHERE evidence_all) AS found_all,
           count(*) AS n
    FROM test_point_results WHERE answerable AND evidence_any IS NOT NULL GROUP BY run_id
) UNPIVOT (found FOR metric IN (found_any AS 'evidence_recall_any', found_all AS 'evidence_recall_all'));

INSERT INTO run_metrics
SELECT run_id, 'tokens_per_test_point', NULL, NULL, evals_ratio(context_tokens, total), total, NULL, NULL FROM runs;

INSERT INTO run_metrics
SELECT run_id, 'answer_accuracy', NULL, NULL, evals_ratio(answers_correct, answers_judged), answers_judged,
       evals_wilson_low(answers_correct, answers_judged), evals_wilson_high(answers_correct, answers_judged)
FROM runs WHERE answer_model IS NOT NULL AND judge_model IS NOT NULL;

INSERT INTO run_metrics
SELECT run_id, 'keyword_accuracy', NULL, NULL, evals_ratio(answers_keyword_hits, answers_total), answers_total,
       evals_wilson_low(answers_keyword_hits, answers_total), evals_wilson_high(answers_keyword_hits, answers_total)
FROM runs WHERE answer_model IS NOT NULL;

INSERT INTO run_metrics
SELECT run_id, 'llm_tokens_per_test_point', NULL, NULL, evals_ratio(llm_prompt_tokens + llm_completion_tokens, total), total, NULL, NULL
FROM runs WHERE answer_model IS NOT NULL;

DROP MACRO evals_wilson_low;
DROP MACRO evals_wilson_high;
DROP MACRO evals_ratio;
"""

# Plug-in strategies (evals.strategies.registry): where a run's strategy came
# from (built-in, a distribution and its version, or module:attr), and the
# source turns a strategy named for its records when they are not the turns
# the records' texts are (a memory that rewrites what it stores). NULL: a run
# stored before, or records whose turns are their texts' (record_turns).
_PLUGINS = """
ALTER TABLE runs ADD COLUMN strategy_source VARCHAR;
ALTER TABLE test_points ADD COLUMN source_turns INTEGER[];
"""

# The field's retrieval metrics (evals.judge.retrieval): the cutoffs a run was measured at and how each
# reads its ranking; per test point with evidence, the turn of every record down to the deepest
# cutoff (NULL: a record that is no turn); the turns' sessions and dates, and each test point's
# evidence sessions, from the corpus; the corpus's published reference figures. And latency against memory size: per run, call kind and
# bucket of records held (powers of two), how many calls and how long they took.
_SESSIONS_CUTOFFS_LATENCY = """
ALTER TABLE runs ADD COLUMN cutoffs INTEGER[];
ALTER TABLE runs ADD COLUMN cutoff_rule VARCHAR;
ALTER TABLE test_points ADD COLUMN ranked_turns INTEGER[];
ALTER TABLE conversations ADD COLUMN sessions VARCHAR[];
ALTER TABLE conversations ADD COLUMN dates VARCHAR[];
ALTER TABLE corpus_test_points ADD COLUMN evidence_sessions VARCHAR[];

-- Published figures shown beside a corpus's runs (references.json), never ranked: the latest run on
-- the corpus digest replaces them, as the file in its folder said then.
CREATE TABLE corpus_references (
    corpus_digest VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    label VARCHAR NOT NULL,
    citation VARCHAR NOT NULL,
    metric VARCHAR NOT NULL,
    level VARCHAR NOT NULL,
    k INTEGER NOT NULL,
    value DOUBLE NOT NULL,
    note VARCHAR
);

CREATE TABLE run_latency (
    run_id VARCHAR NOT NULL,
    call VARCHAR NOT NULL,  -- retrieve (add calls are not bucketed: each adds to the memory it is timed against)
    held_low BIGINT NOT NULL,  -- records held: from held_low to held_high, inclusive
    held_high BIGINT NOT NULL,
    n BIGINT NOT NULL,
    p50_s DOUBLE NOT NULL,
    p95_s DOUBLE NOT NULL,
    mean_s DOUBLE NOT NULL
);
"""

# ndcg_any is trec_eval's ndcg_cut; the LongMemEval paper's NDCG is LongMemEval's own formula, now the
# metric ndcg_any_lme (evals.judge.retrieval). The LongMemEval importer's reference rows (this label) were
# stored as ndcg_any and so were set beside a number computed another way: they move to ndcg_any_lme.
# Runs' stored ndcg_any values were computed as trec_eval's and keep their name.
_NDCG_LME_REFERENCES = """
UPDATE corpus_references SET metric = 'ndcg_any_lme'
WHERE metric = 'ndcg_any' AND label = 'LongMemEval paper, BM25 (session level, _m)';
"""

# The published benchmark a run's corpus declared (benchmark.json), which decides its headline rule
# (evals.judge.headline). Runs stored before it was recorded have none: their corpus declared none either,
# since a declaration changes the corpus digest.
_BENCHMARK = """
ALTER TABLE runs ADD COLUMN benchmark VARCHAR;
"""

# Each stored conversation's sha256 of its canonical content (the JSON the corpus digest hashes for it):
# a run on a corpus already stored compares these, never reading the stored texts back, which DuckDB
# unpacks for every conversation of a vector at once. NULL: stored before (compared text by text).
# And summary_buffer's default summaries are stored as a reference to the turns they fold, "\0summary N"
# (evals.store._records.compact_text), so a stored record text that starts with NUL gets it doubled.
_CONVERSATION_DIGESTS = """
ALTER TABLE conversations ADD COLUMN content_digest VARCHAR;
UPDATE test_points
SET record_texts = [CASE WHEN starts_with(x, chr(0)) THEN chr(0) || x ELSE x END FOR x IN record_texts]
WHERE len([x FOR x IN record_texts IF starts_with(x, chr(0))]) > 0;
"""

# Costs and provenance of LLM requests: per kind of request (answer, judge, memory write),
# what was sent and what came from the cache, tokens apart, the served models and fingerprints, the
# denominator and the price the run was costed at (evals.model.results.RequestTally as JSON); per answer,
# whether it and its verdict came from the cache, the model and fingerprint the endpoint said served
# it, and with --judge-repeats every repeat's verdict. NULL: a run stored before (costs not known apart).
_LLM_COSTS = """
ALTER TABLE runs ADD COLUMN llm_usage JSON;
ALTER TABLE test_point_answers ADD COLUMN answer_cached BOOLEAN;
ALTER TABLE test_point_answers ADD COLUMN judge_cached BOOLEAN;
ALTER TABLE test_point_answers ADD COLUMN served_model VARCHAR;
ALTER TABLE test_point_answers ADD COLUMN fingerprint VARCHAR;
ALTER TABLE test_point_answers ADD COLUMN judge_served_model VARCHAR;
ALTER TABLE test_point_answers ADD COLUMN repeat_verdicts VARCHAR[];
"""

# Answer protocols (evals.benchmarks.protocols): which protocol asked for a run's answers and where its
# templates were read (repository, commit, files -> sha256); per answer, the test point's category, whether
# the protocol counts it, the judge's verdict as read ("correct", "wrong", "unparsed") and the protocol's own
# score where it scores without a judge (LoCoMo's F1). NULL for runs made before: the harness's prompts,
# their answerable points counted.
_ANSWER_PROTOCOLS = """
ALTER TABLE runs ADD COLUMN answer_protocol VARCHAR;
ALTER TABLE runs ADD COLUMN protocol_source JSON;
ALTER TABLE test_point_answers ADD COLUMN category VARCHAR;
ALTER TABLE test_point_answers ADD COLUMN counted BOOLEAN;
ALTER TABLE test_point_answers ADD COLUMN verdict VARCHAR;
ALTER TABLE test_point_answers ADD COLUMN score DOUBLE;
"""

# One row per turn. A conversation's turns were one list value per column, which DuckDB handles a vector of
# 2,048 conversations at a time: writing a corpus held all of its text uncompressed until the checkpoint
# (1.8 GB for a LongMemEval_m corpus of 100 questions), and any read of one conversation's texts
# decompressed the whole column. Rows of turns fill row groups that DuckDB writes out as they fill, and a
# read of some conversations' turns (by corpus digest and position) touches only their row groups.
# `position` is the conversation's position in its corpus (conversations.position); `turn_count` says how
# many turns a conversation has. The `turns` view keeps its columns. Moving a store's turns reads them as
# the lists they were, so this step takes about what reading them always took (once).
_TURN_ROWS = """
CREATE TABLE conversation_turns (
    corpus_digest VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    conversation_id VARCHAR NOT NULL,
    turn_index INTEGER NOT NULL,
    role VARCHAR NOT NULL,
    content VARCHAR NOT NULL,
    session VARCHAR,
    date VARCHAR
);
-- Unnested side by side: a NULL list (no turn had a session, or a date) pads with NULL.
INSERT INTO conversation_turns
SELECT corpus_digest, position, conversation_id,
       unnest(range(len(roles))), unnest(roles), unnest(contents), unnest(sessions), unnest(dates)
FROM conversations;
ALTER TABLE conversations ADD COLUMN turn_count INTEGER;
UPDATE conversations SET turn_count = len(roles);
CREATE OR REPLACE VIEW turns AS
SELECT corpus_digest, conversation_id, turn_index, role, content FROM conversation_turns;
ALTER TABLE conversations DROP COLUMN roles;
ALTER TABLE conversations DROP COLUMN contents;
ALTER TABLE conversations DROP COLUMN sessions;
ALTER TABLE conversations DROP COLUMN dates;
"""

# Graded judges (BEAM's rubric, LoCoMo-Plus's labels): per test point of a corpus, the rubric a graded
# judge checks the answer against (its digest covers it); per answer, the judge's reading of each of its requests
# (BEAM: one per rubric item; NULL inside: that reply had no readable score). NULL for corpora and runs without them.
_GRADED = """
ALTER TABLE corpus_test_points ADD COLUMN rubric VARCHAR[];
ALTER TABLE test_point_answers ADD COLUMN grades DOUBLE[];
"""

# Records that hold several turns (a session, a chunk, a fact citing its sources): per test point,
# per rank of ranked_turns, every turn the record holds. NULL: no record of the point names more than one turn
# (every run stored before), and ranked_turns says it all.
_HELD_TURNS = """
ALTER TABLE test_points ADD COLUMN ranked_held INTEGER[][];
"""

# The rule a run's headline is judged by (evals.judge.headline.Rule as JSON: its metric, label, population, the code
# it follows), fixed when the run is appended, so reading it never depends on which benchmark units are installed
# now. NULL: a run stored before; read as the rule of its corpus's benchmark as registered now (docs/store.md).
_RUN_RULE = """
ALTER TABLE runs ADD COLUMN rule JSON;
"""

# Where a run's corpus came from (benchmark.json): the pinned release whose bytes were imported, else the file
# imported by hand. NULL for runs stored before: their corpus is shown as imported by hand, its source unknown.
_CORPUS_SOURCE = """
ALTER TABLE runs ADD COLUMN corpus_release VARCHAR;
ALTER TABLE runs ADD COLUMN corpus_file VARCHAR;
"""

# Tokens per test point over the test points the headline counts (evals.judge.metrics.over_headline), not over the
# answerable ones: by the run's rule (its stored JSON, else as it was read before: keyword recall where no answerable
# point has evidence, LoCoMo's rule on a LoCoMo corpus, else the evidence rule), every point with evidence for a rule
# that counts unanswerable points (LoCoMo's turn.recall_any@k), the answerable points with evidence for the evidence
# rule, the answerable points for keyword recall (unchanged).
_TOKENS_OVER_HEADLINE = """
UPDATE run_metrics SET value = counted.tokens / nullif(counted.points, 0), n = counted.points
FROM (
    SELECT t.run_id,
           sum(t.context_tokens) FILTER (WHERE CASE p.metric
               WHEN 'recall' THEN t.answerable
               WHEN 'turn.recall_any@k' THEN len(t.evidence_turns) > 0
               ELSE t.answerable AND len(t.evidence_turns) > 0 END)::DOUBLE AS tokens,
           count(*) FILTER (WHERE CASE p.metric
               WHEN 'recall' THEN t.answerable
               WHEN 'turn.recall_any@k' THEN len(t.evidence_turns) > 0
               ELSE t.answerable AND len(t.evidence_turns) > 0 END) AS points
    FROM test_point_results t
    JOIN (
        SELECT r.run_id,
               coalesce(json_extract_string(r.rule, '$.metric'), CASE
                   WHEN NOT EXISTS (
                       SELECT 1 FROM test_point_results e WHERE e.run_id = r.run_id AND e.answerable AND e.evidence_any IS NOT NULL
                   ) THEN 'recall'
                   WHEN r.benchmark = 'locomo' THEN 'turn.recall_any@k'
                   ELSE 'evidence_recall_any' END) AS metric
        FROM runs r
    ) p USING (run_id)
    GROUP BY t.run_id
) counted
WHERE run_metrics.run_id = counted.run_id AND run_metrics.metric = 'tokens_per_test_point';
"""

# Equal budgets by tokens, not by k: per test point with evidence, per rank of ranked_turns (now kept deep enough to
# fill the largest context budget, past the deepest cutoff), the record's token count under the run's tokenizer.
# The budget figures read the ranking up to each budget. NULL: not kept (a run stored before, one without cutoffs,
# a strategy asked once per cutoff): its budget figures read its records within k, as they were computed.
_RANKED_TOKENS = """
ALTER TABLE test_points ADD COLUMN ranked_tokens INTEGER[];
"""

# Runs that failed (a strategy raising, a call past --call-timeout, a crash inside the play-through): kept as what
# they are, never a figure. One row per failed run, with its configuration, corpus, k, commit, date and a one-line
# reason; the boards show each as "failed: <reason>", never ranked. Its own table, so no query over `runs` (every
# figure, the gate, comparisons) can read a failure as a score. tuned_on and writes_with_llm: what the run declared
# (NULL: not declared).
_FAILED_RUNS = """
CREATE TABLE IF NOT EXISTS failed_runs (
    run_id VARCHAR PRIMARY KEY,
    "commit" VARCHAR NOT NULL,
    dirty BOOLEAN NOT NULL,
    model VARCHAR NOT NULL,
    "date" DATE NOT NULL,
    "timestamp" TIMESTAMP NOT NULL,
    strategy VARCHAR NOT NULL,
    strategy_config JSON NOT NULL,
    strategy_source VARCHAR,
    config_key VARCHAR NOT NULL,
    k INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    corpus_name VARCHAR NOT NULL,
    corpus_digest VARCHAR NOT NULL,
    benchmark VARCHAR,
    package_version VARCHAR NOT NULL,
    python_version VARCHAR NOT NULL,
    duration_s DOUBLE NOT NULL,
    reason VARCHAR NOT NULL,
    tuned_on VARCHAR[],
    writes_with_llm BOOLEAN,
    appended_at TIMESTAMP NOT NULL
);
"""

# What a run declares about its system (board files carry it): the benchmarks whose data informed its settings
# (tuned_on; [] when none) and whether its memory writes with an LLM. NULL: a run stored before, declaring nothing.
_DECLARED = """
ALTER TABLE runs ADD COLUMN IF NOT EXISTS tuned_on VARCHAR[];
ALTER TABLE runs ADD COLUMN IF NOT EXISTS writes_with_llm BOOLEAN;
"""

# Who ran the run (evals.judge.origin): NULL for the harness's own run, made in this store; else its mark,
# "submitted" (imported: run by its submitter) or "reproduced" (a board file the harness reran with the same rankings,
# with that rerun's commit, date and point count). NULL for runs stored before: they read as the harness's own.
_ORIGIN = """
ALTER TABLE runs ADD COLUMN IF NOT EXISTS origin JSON;
"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs_conversations_test_points", _INITIAL),
    Migration(2, "sql_views", _SQL_VIEWS),
    Migration(3, "evidence_categories_unanswerable", _EVIDENCE_CATEGORIES),
    Migration(4, "intervals_strict_recall_mrr_cache_counts", _STATS),
    Migration(5, "answers_and_verdicts", _ANSWERS),
    Migration(6, "run_metrics", _RUN_METRICS),
    Migration(7, "strategy_source_and_source_turns", _PLUGINS),
    Migration(8, "sessions_cutoffs_latency", _SESSIONS_CUTOFFS_LATENCY),
    Migration(9, "longmemeval_ndcg_references", _NDCG_LME_REFERENCES),
    Migration(10, "run_benchmark", _BENCHMARK),
    Migration(11, "conversation_digests_compact_summaries", _CONVERSATION_DIGESTS),
    Migration(12, "llm_costs_served_models_judge_repeats", _LLM_COSTS),
    Migration(13, "answer_protocols", _ANSWER_PROTOCOLS),
    Migration(14, "conversation_turns_one_row_each", _TURN_ROWS),
    Migration(15, "rubrics_and_grades", _GRADED),
    Migration(16, "turns_each_record_holds", _HELD_TURNS),
    Migration(17, "run_rule", _RUN_RULE),
    Migration(18, "corpus_source", _CORPUS_SOURCE),
    Migration(19, "tokens_over_the_headlines_points", _TOKENS_OVER_HEADLINE),
    Migration(20, "ranked_tokens_for_budgets", _RANKED_TOKENS),
    Migration(21, "failed_runs", _FAILED_RUNS),
    Migration(22, "declared_tuned_on_writes_with_llm", _DECLARED),
    Migration(23, "origin_submitted_or_reproduced", _ORIGIN),
)


def current_version(migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    return migrations[-1].version
