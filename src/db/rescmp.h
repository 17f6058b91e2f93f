/* rescmp.h - do two results denote the same answer? Used by the agent's
** vote between candidates and by the evaluation (EX). */
#ifndef ASKDB_DB_RESCMP_H
#define ASKDB_DB_RESCMP_H

#include <stddef.h>

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
** At most RESCMP_MAX_PERMS column permutations are tried (0 after that).
*/
#define RESCMP_MAX_PERMS 1000000L
int rescmp_equal(const askdb_result *gold, const askdb_result *pred,
                  int order_matters);

/* Whether the official evaluation takes row order into account: the text
** "order by" occurs in the (prepared) gold SQL, ignoring case. */
int rescmp_order_matters(const char *gold_sql);

/*
** Python's str() of a value followed by str(type(value)), e.g.
** "1.0<class 'float'>", into a malloc()ed string (NULL when out of
** memory). Exposed for the unit tests.
*/
char *rescmp_py_key(const askdb_value *v);

/* Python's repr() of a float (shortest round-trip digits) into out. */
void rescmp_py_float_repr(double d, char *out, size_t outlen);

#endif
