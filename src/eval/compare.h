/* compare.h - the statements as the official Spider evaluation runs them. */
#ifndef ASKDB_EVAL_COMPARE_H
#define ASKDB_EVAL_COMPARE_H

/* Result equality (rescmp_equal) is one layer down, in db/rescmp.h: the
** agent votes with it too. */

/*
** The statement as the official evaluation runs it: " value " -> " 1 "
** (predictions only), "> =" / "< =" / "! =" joined, every DISTINCT keyword
** removed unless keep_distinct, YEAR(CURDATE()) -> 2020. Returns a
** malloc()ed string (caller frees) or NULL when out of memory.
*/
char *cmp_prepare_sql(const char *sql, int is_pred, int keep_distinct);

#endif
