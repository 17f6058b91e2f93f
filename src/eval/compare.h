/* compare.h - execution accuracy: do two results denote the same answer? */
#ifndef ASKDB_EVAL_COMPARE_H
#define ASKDB_EVAL_COMPARE_H

#include "askdb.h"

/*
** The rules are those of the official Spider execution evaluation
** (test-suite-sql-eval, exec_eval.py: eval_exec_match and result_eq), with
** the values Python's sqlite3 would hand it: INTEGER -> int, REAL -> float,
** TEXT -> str, BLOB -> bytes, NULL -> None, compared with Python's `==`
** (so 1 == 1.0, '1' != 1, None == None, b'a' != 'a').
**
**   - both results empty: equal (whatever their columns);
**   - different row counts, or different column counts: not equal;
**   - the official quick rejection: each row's values sorted by the text
**     str(v) + str(type(v)) must give the same list of rows (ORDER BY) or
**     the same set of rows (no ORDER BY) - a test that can reject results
**     that differ only in int/float spelling, which we keep on purpose;
**   - then some permutation of the prediction's columns must make the rows
**     equal: as lists when order matters, as multisets otherwise.
** The official code prunes column permutations with 20 random rows; the
** pruning only removes impossible permutations, so trying every bijection
** allowed by all rows (as here) decides the same.
*/

/*
** 1 when pred has the same denotation as gold, 0 when not, -1 when out of
** memory. order_matters: compare rows in order (the gold SQL has ORDER BY).
** At most CMP_MAX_PERMS column permutations are tried (0 after that).
*/
#define CMP_MAX_PERMS 1000000L
int cmp_result_eq(const askdb_result *gold, const askdb_result *pred,
                  int order_matters);

/* Whether the official evaluation takes row order into account: the text
** "order by" occurs in the (prepared) gold SQL, ignoring case. */
int cmp_order_matters(const char *gold_sql);

/*
** The statement as the official evaluation runs it: " value " -> " 1 "
** (predictions only), "> =" / "< =" / "! =" joined, every DISTINCT keyword
** removed unless keep_distinct, YEAR(CURDATE()) -> 2020. Returns a
** malloc()ed string (caller frees) or NULL when out of memory.
*/
char *cmp_prepare_sql(const char *sql, int is_pred, int keep_distinct);

/*
** Python's str() of a value followed by str(type(value)), e.g.
** "1.0<class 'float'>", into a malloc()ed string (NULL when out of
** memory). Exposed for the unit tests.
*/
char *cmp_py_key(const askdb_value *v);

/* Python's repr() of a float (shortest round-trip digits) into out. */
void cmp_py_float_repr(double d, char *out, size_t outlen);

#endif
