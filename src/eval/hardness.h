/* hardness.h - Spider's difficulty levels (easy/medium/hard/extra) from
** gold SQL. */
#ifndef ASKDB_EVAL_HARDNESS_H
#define ASKDB_EVAL_HARDNESS_H

/*
** Spider's evaluation.py (Evaluator.eval_hardness) sorts a question by the
** structure of its gold SQL: count_component1 (WHERE, GROUP BY, ORDER BY,
** LIMIT, each JOINed table, each OR, each LIKE), count_component2 (nested
** queries in conditions, INTERSECT/UNION/EXCEPT) and count_others (more
** than one aggregate, select column, WHERE condition or GROUP BY column).
** We compute the same counts over a light parse made with sqlx_token():
** clauses are found at the query's own parenthesis depth, conditions are
** split at AND/OR (the AND of BETWEEN excepted). The official counting is
** kept where it is surprising, because the published levels come from it:
** its aggregate count treats a WHERE/HAVING condition with NOT (x NOT IN,
** NOT LIKE, NOT BETWEEN) as one aggregate, and each AND/OR between HAVING
** conditions too, while HAVING count(*) > 1 itself adds none.
** Approximations (queries the official parser rejects or reads otherwise):
** a parenthesized group of conditions counts as one condition; FROM a, b
** counts two tables like a JOIN; IS NOT is not a NOT condition; only the
** first set operator at the top counts (as in the official parse).
** docs/eval.md lists them with examples.
*/

struct hardness_counts {
    int comp1, comp2, others;
};

/* "easy", "medium", "hard" or "extra" (static strings); c (optional)
** receives the three counts. Never fails: unparsable text gets counts
** from whatever clauses it shows. */
const char *hardness_classify(const char *sql, struct hardness_counts *c);

#endif
