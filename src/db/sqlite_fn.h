/* sqlite_fn.h - checked stand-ins for SQLite functions that can run long
** within one call. */
#ifndef ASKDB_SQLITE_FN_H
#define ASKDB_SQLITE_FN_H

#include <sqlite3.h>

/*
** SQLite checks for an interrupt (sqlite3_interrupt(), the progress
** handler) only between the steps of a loop, never inside one function
** call: printf('%.*c', 2147483647, 'x') builds its string for seconds,
** instr(), replace(), trim(), like() and glob() compare every position of
** one argument with the other, and a row can call such functions tens of
** thousands of times with no loop step in between. sqlfn_install()
** registers, on one connection, functions of the same names that
**   - fail with SQLITE_INTERRUPT once the deadline has passed (so the
**     time limit holds between calls of one row),
**   - refuse (SQLITE_TOOBIG) a printf()/format() width or precision over
**     the connection's length limit, which SQLite applies only after
**     building the string, and arguments whose sizes multiplied exceed
**     SQLFN_WORK_CAP for the functions that compare one with the other,
**   - and otherwise return exactly what SQLite's own function returns:
**     the call is made on a private in-memory connection (no file) with
**     the same length limit, where the built-in functions remain.
*/

/* The most work (bytes of one argument times bytes of the other) one
** call of instr(), replace(), trim(), like() or glob() may need: about
** a quarter of a second at most. */
#define SQLFN_WORK_CAP ((long long)1 << 28)

struct sqlfn;

/*
** Register the checked functions on h. *deadline is read at every call
** (ms on db_now_ms()'s clock; 0 = none) and *timed_out set to 1 when a
** call finds it passed; both must outlive the connection. Returns the
** state (freed with sqlfn_free() after sqlite3_close() of h), or NULL
** when out of memory or the private connection cannot be opened: then
** h keeps SQLite's own functions.
*/
struct sqlfn *sqlfn_install(sqlite3 *h, const double *deadline,
                            int *timed_out);
void sqlfn_free(struct sqlfn *f);

#endif
