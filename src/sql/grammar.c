/* grammar.c - GBNF for constrained decoding: one read-only query over the
** database's own names. */
#include "sql/grammar.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "db/schema.h"

/*
** Design
** ======
** The grammar covers the whole reply, in the form the prompt asks for:
**
**     root ::= "```sql\n" ws (select-stmt | with-stmt) ws (";" ws)? "\n```"
**
** so the model keeps its natural format, cannot add prose, and has to stop
** after the closing fence (only the end-of-generation token fits there).
**
** Statement. One SELECT (compound with UNION [ALL], INTERSECT, EXCEPT;
** ORDER BY, LIMIT/OFFSET) or one WITH statement. No rule produces another
** statement, a second statement or a comment, so DELETE, DROP, ATTACH,
** PRAGMA or "SELECT 1; DROP ..." cannot be generated. Between two words
** whitespace is required, so "SELECTname" cannot be read as two tokens.
**
** Names. A table position takes one of the schema's tables or views, a
** column position one of its columns (of any table: GBNF has no scope;
** rowid, oid and _rowid_ too). A name may be written bare when it is a
** plain word and not a reserved word (kw_hard[], and on the other
** engines their own, which their drivers read from the server into the
** schema: db_schema.reserved), and always quoted as
** "name", `name` or [name]; both case-insensitively, as SQLite compares
** names. A column may be qualified by a table name or by a table alias,
** and a table alias (with or without AS) is any word of up to 4
** characters that a name could be bare: T1, e, emp, dept, sub, but not
** on, join, left, null or an engine's reserved word such as user
** (emit_tab_alias(): the same words bare_ok() keeps out of names). The
** cap is what keeps the model on real names: with free qualifiers
** SmolLM2 wrote an invented column as a qualifier
** ("created_date_time_in_seconds.name") and the grammar let it through;
** now a word that is not a name must turn into "." within 4 characters,
** and the likelier path is the real column it resembles. The cap alone
** let every short reserved word through as an alias ("FROM employees
** join", "null.name") while it kept the longer ones out. Column aliases
** (AS x) and CTE names are any identifier, and inside a WITH statement
** so is a table alias (tab-alias-w).
**
** What GBNF cannot check, and the choices made:
** - Scope. A column of one table is accepted on another, and qualifiers
**   are not checked against the FROM clause: the database reports those
**   and the agent repairs them.
** - Output names. When the first SELECT of a statement defines an alias
**   in its select list (expr AS x, or expr x), its GROUP BY, HAVING and
**   ORDER BY may also use any bare identifier as an operand (ORDER BY
**   total DESC). The grammar knows without ambiguity: the select list is
**   read column by column by right recursion (cols, then cols-a once an
**   alias is seen) and the clauses after it continue from the rule that
**   saw its end (rules_tail, written for both states). Everywhere else -
**   the SELECT list, WHERE, JOIN ... ON/USING, and GROUP BY, HAVING and
**   ORDER BY of a statement without aliases - a column must be a real
**   one, and that is where an unknown column is refused. So a derived
**   table's own aliases used outside it (SELECT t.n FROM (SELECT count(*)
**   AS n ...) t) are refused unless n happens to be a column name.
** - WITH. A CTE introduces tables and columns the grammar cannot know, so
**   a statement that starts with WITH is generated from a second copy of
**   the statement rules (names ending in -w) where a table or a column is
**   any identifier: names are not checked there. A plain SELECT and its
**   subqueries are strict.
** - Syntax is checked loosely where SQLite does the job anyway:
**   expressions are a flat sequence of operands and operators (no
**   precedence; "x BETWEEN a AND b" reads as two operators), functions
**   are SQLite's built-ins with any number of arguments, CAST type names
**   are free words. Not covered: table-valued functions (json_each),
**   schema-qualified names of the tables the name alone reaches (main.t),
**   bound parameters, VALUES, comments. A table of another schema (a
**   namespace, schema.h) is taken only qualified, sales.t or "sales"."t",
**   and sales.t and t serve as its qualifiers.
** - String literals take single quotes. A double-quoted "text" is also
**   taken where a value is expected - right of an operator and in IN
**   lists - because models trained on Spider write literals that way and
**   SQLite reads it as a string when no column has that name; refusing it
**   would push the model into a quoted column name it did not mean.
**   Elsewhere "x" must be one of the schema's names.
**
** Size and speed. llama.cpp keeps one stack per live alternative and, at
** each sampling step, checks every candidate token against every stack
** until one takes it, so the cost of a step grows with the number of
** alternatives alive at a position. Hence: names are tries of rules (one
** alternative per next character, chains of single characters inline),
** each name once bare and once for all three quotes; at an operand the
** words it may start with - bare columns, functions, NOT, CASE, CAST,
** EXISTS, NULL, TRUE, FALSE, CURRENT_* - share one trie (word) whose
** nodes say how each word goes on; a free identifier is one flat
** character class, so all word-like tokens advance as one group;
** operators are factored by first character; clause keywords after the
** select list take their whitespace once (rules_tail). The grammar grows
** linearly with the schema: 36 KB for Spider's largest database, 545 KB
** for 2,000 tables and 18,000 columns, which llama.cpp parses in about 15
** ms. A step that filters a whole vocabulary still costs 40-90 ms at an
** operand for SmolLM2's 49k tokens, 100-200 ms for Qwen2.5's 152k, while
** checking one token costs 0.1-0.2 ms: a caller should sample first, ask
** the grammar only about the chosen token, and filter the whole
** vocabulary only when that token is refused.
**
** Bounds, so that generation cannot run away inside one kind of token:
** whitespace between two tokens is at most 17 characters (spaces, tabs,
** newlines), a number at most 20 digits, a string literal at most 400
** characters, a free identifier at most 64. Nesting and the length of
** expressions are bounded only by the caller's token limit.
*/

/* ---- names and words ---------------------------------------------------- */

/* Words that cannot be a bare table or column name (SQLite has no
** fallback to an identifier for them); such schema names are only
** accepted quoted. Other keywords ("end", "match", "no", "range") SQLite
** takes as names, and so does the grammar. On every engine: the other
** engines' own reserved words come with the schema (bare_ok()). */
static const char *const kw_hard[] = {
    "all", "and", "as", "between", "case", "collate", "cross",
    "current_date", "current_time", "current_timestamp", "distinct",
    "else", "escape", "except", "exists", "from", "full", "group",
    "having", "in", "inner", "intersect", "is", "isnull", "join", "left",
    "limit", "natural", "not", "notnull", "null", "on", "or", "order",
    "outer", "right", "select", "then", "union", "using", "values",
    "when", "where", NULL
};

/* Every keyword the rules use; each becomes kw-<word> ::= [wW] [oO] ... */
static const char *const kw_used[] = {
    "all", "and", "as", "asc", "between", "by", "collate", "cross",
    "current", "desc", "distinct", "else", "end", "escape", "except",
    "filter", "first", "following", "from", "full", "glob", "group",
    "groups", "having", "in", "inner", "intersect", "is", "join", "last",
    "left", "like", "limit", "match", "materialized", "natural", "not",
    "null", "nulls", "offset", "on", "or", "order", "outer", "over",
    "partition", "preceding", "range", "recursive", "regexp", "right",
    "row", "rows", "select", "then", "unbounded", "union", "using", "when",
    "where", "with", NULL
};

/* SQLite's built-in functions (core, date, math, JSON, aggregate,
** window). load_extension is left out on purpose. */
static const char *const functions[] = {
    /* aggregate */
    "avg", "count", "group_concat", "max", "min", "string_agg", "sum",
    "total", "json_group_array", "json_group_object",
    /* window */
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    /* scalar */
    "abs", "changes", "char", "coalesce", "concat", "concat_ws", "format",
    "glob", "hex", "ifnull", "iif", "if", "instr", "last_insert_rowid",
    "length", "like", "likelihood", "likely", "lower", "ltrim", "nullif",
    "octet_length", "printf", "quote", "random", "randomblob", "replace",
    "round", "rtrim", "sign", "soundex", "sqlite_source_id",
    "sqlite_version", "substr", "substring", "total_changes", "trim",
    "typeof", "unhex", "unicode", "unlikely", "upper", "zeroblob",
    /* date and time */
    "date", "time", "datetime", "julianday", "unixepoch", "strftime",
    "timediff",
    /* math */
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil",
    "ceiling", "cos", "cosh", "degrees", "exp", "floor", "ln", "log",
    "log10", "log2", "mod", "pi", "pow", "power", "radians", "sin",
    "sinh", "sqrt", "tan", "tanh", "trunc",
    /* JSON */
    "json", "jsonb", "json_array", "json_array_length", "json_extract",
    "json_insert", "json_object", "json_patch", "json_pretty",
    "json_remove", "json_replace", "json_set", "json_type", "json_valid",
    "json_quote", NULL
};

/* PostgreSQL's common built-ins (aggregate, window, string, number,
** date). Those with their own syntax inside the parentheses
** (EXTRACT(f FROM x) aside, which the rules know) are left out. */
static const char *const functions_pg[] = {
    "avg", "count", "max", "min", "sum", "string_agg", "array_agg",
    "bool_and", "bool_or", "every", "stddev", "stddev_pop", "stddev_samp",
    "variance", "var_pop", "var_samp", "corr",
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    "abs", "ceil", "ceiling", "floor", "round", "trunc", "mod", "power",
    "sqrt", "cbrt", "exp", "ln", "log", "log10", "sign", "random", "pi",
    "degrees", "radians", "div", "width_bucket",
    "greatest", "least", "coalesce", "nullif",
    "length", "char_length", "character_length", "octet_length", "lower",
    "upper", "initcap", "substr", "trim", "ltrim", "rtrim", "btrim",
    "replace", "concat", "concat_ws", "left", "right", "strpos", "split_part",
    "lpad", "rpad", "repeat", "reverse", "format", "md5", "translate",
    "regexp_replace", "regexp_match", "starts_with", "ascii", "chr",
    "to_char", "to_date", "to_timestamp", "to_number", "date_part",
    "date_trunc", "age", "now", "make_date", "make_timestamp",
    "justify_days", "clock_timestamp", "isfinite", NULL
};

/* MariaDB's and MySQL's common built-ins. */
static const char *const functions_my[] = {
    "avg", "count", "max", "min", "sum", "group_concat", "bit_and",
    "bit_or", "std", "stddev", "stddev_pop", "stddev_samp", "variance",
    "var_pop", "var_samp", "json_arrayagg", "json_objectagg",
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    "abs", "ceil", "ceiling", "floor", "round", "truncate", "mod", "pow",
    "power", "sqrt", "exp", "ln", "log", "log10", "log2", "sign", "rand",
    "pi", "degrees", "radians", "greatest", "least", "coalesce", "ifnull",
    "nullif", "if", "isnull",
    "length", "char_length", "character_length", "lower", "upper",
    "lcase", "ucase", "substr", "substring", "substring_index", "trim",
    "ltrim", "rtrim", "replace", "concat", "concat_ws", "left", "right",
    "locate", "instr", "lpad", "rpad", "repeat", "reverse", "format",
    "md5", "ascii", "char", "field", "find_in_set", "regexp_replace",
    "date", "time", "year", "month", "day", "dayofmonth", "dayofweek",
    "dayofyear", "week", "weekday", "quarter", "hour", "minute", "second",
    "monthname", "dayname", "date_format", "str_to_date", "datediff",
    "timediff", "to_days", "from_days", "last_day", "makedate", "now",
    "curdate", "curtime", "current_date", "unix_timestamp",
    "from_unixtime", NULL
};

/* DuckDB's common built-ins. */
static const char *const functions_duck[] = {
    "avg", "count", "max", "min", "sum", "string_agg", "group_concat",
    "list", "array_agg", "bool_and", "bool_or", "median", "mode",
    "quantile_cont", "quantile_disc", "stddev", "stddev_pop",
    "stddev_samp", "variance", "var_pop", "var_samp", "corr", "arg_max",
    "arg_min", "max_by", "min_by", "first", "last", "any_value",
    "count_if", "product", "bit_and", "bit_or",
    "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value",
    "abs", "ceil", "ceiling", "floor", "round", "trunc", "mod", "pow",
    "power", "sqrt", "cbrt", "exp", "ln", "log", "log10", "log2", "sign",
    "random", "pi", "degrees", "radians", "greatest", "least", "coalesce",
    "ifnull", "nullif", "if", "iif",
    "length", "char_length", "strlen", "lower", "upper", "lcase", "ucase",
    "substr", "substring", "trim", "ltrim", "rtrim", "replace", "concat",
    "concat_ws", "left", "right", "instr", "strpos", "position",
    "contains", "starts_with", "ends_with", "prefix", "suffix",
    "split_part", "lpad", "rpad", "repeat", "reverse", "format", "printf",
    "md5", "ascii", "chr", "regexp_matches", "regexp_replace",
    "regexp_extract", "string_split", "list_contains",
    "date_part", "datepart", "date_trunc", "datetrunc", "date_diff",
    "datediff", "date_add", "date_sub", "strftime", "strptime", "year",
    "month", "day", "dayofweek", "dayofyear", "week", "quarter", "hour",
    "minute", "second", "monthname", "dayname", "last_day", "make_date",
    "make_timestamp", "epoch", "to_timestamp", "age", "now", "today",
    "current_date", "try_cast", NULL
};

/*
** What a word at an operand may go on with; a trie node holds a set of
** these. The strings are GBNF, '@' standing for the mode suffix.
*/
enum {
    W_DONE = 1,     /* a column name or a literal keyword: nothing */
    W_FUNC = 2,     /* a function: its call */
    W_NOT = 4,
    W_CASE = 8,
    W_CAST = 16,
    W_EXISTS = 32,
    W_QUAL = 64,    /* a table name: "." and a column */
    W_EXTRACT = 128, /* EXTRACT(field FROM expr) (not SQLite) */
    W_INTERVAL = 256 /* INTERVAL '1 day' / INTERVAL 3 DAY (not SQLite) */
};

static const char *const word_tail[] = {
    "", "fn-call@", "not-body@", "sp case-body@", "ws \"(\" cast-body@",
    "ws \"(\" exists-body@", "\".\" col-or-star",
    "ws \"(\" extract-body@", "sp interval-body"
};
#define NTAILS 9

static const struct {
    const char *word;
    int kind;
} operand_words[] = {
    {"not", W_NOT}, {"case", W_CASE}, {"cast", W_CAST},
    {"exists", W_EXISTS}, {"null", W_DONE}, {"true", W_DONE},
    {"false", W_DONE}, {"current_date", W_DONE}, {"current_time", W_DONE},
    {"current_timestamp", W_DONE}, {NULL, 0}
};

/* The words the other dialects add at an operand. */
static const struct {
    const char *word;
    int kind;
} operand_words_ext[] = {
    {"extract", W_EXTRACT}, {"interval", W_INTERVAL}, {NULL, 0}
};

/*
** What the other dialects add to the rules, appended to the SQLite
** grammar (which stays as it was, byte for byte): EXTRACT and INTERVAL,
** ILIKE (PostgreSQL, DuckDB) and the postfix cast x::type (PostgreSQL,
** DuckDB), the latter two through ext-op, an alternative of expr-rest.
*/
static const char rules_ext_moded[] =
    "extract-body@ ::= ws type-word sp kw-from sp expr@ ws \")\"\n";
static const char rules_ext_shared[] =
    "interval-body ::= string | number sp type-word\n";
static const char rules_pg_moded[] =
    "ext-op@ ::= ws \"::\" ws type-name | sp (kw-not sp)? kw-ilike sp"
    " value@\n";
static const char rules_pg_shared[] =
    "kw-ilike ::= [iI] [lL] [iI] [kK] [eE]\n";

/* ---- the rules ---------------------------------------------------------- */

/*
** The statement rules, written once: '@' stands for the mode suffix, ""
** for the strict rules and "-w" for the copy used inside a WITH statement
** (where table-name-w, col-name-w, tab-alias-w and operand-w take any
** identifier).
** Rules without '@' are shared. (t.* is an operand, so that a select list
** column does not start with one more alternative; SQLite refuses it
** anywhere else.)
*/
static const char rules_moded[] =
    /* The select list, column by column: cols while no alias was seen,
    ** cols-a after one (cols-na-a right after it, where no second alias
    ** may follow). Then the clauses as a chain of states (rules_tail),
    ** each taking the whitespace before the next clause once. */
    "select-stmt@ ::= kw-select (sp set-quant)? first-col@ cols@\n"
    "first-col@ ::= sp col@ | expr-p@\n"
    "cols@ ::= | \",\" ws col@ cols@"
    " | sp (\",\" ws col@ cols@ | alias-body cols-na-a@ | t0k@)\n"
    "cols-a@ ::= | \",\" ws col@ cols-a@"
    " | sp (\",\" ws col@ cols-a@ | alias-body cols-na-a@ | t0k-a@)\n"
    "cols-na-a@ ::= | \",\" ws col@ cols-a@"
    " | sp (\",\" ws col@ cols-a@ | t0k-a@)\n"
    "col@ ::= \"*\" | expr@\n"
    "from@ ::= kw-from sp join-source@\n"
    "join-source@ ::= table-or-sub@ (join-op table-or-sub@ join-cond@?)*\n"
    "join-cond@ ::= sp kw-on sp expr@"
    " | sp kw-using ws \"(\" ws col-name@ (ws \",\" ws col-name@)* ws \")\"\n"
    "table-or-sub@ ::= table-name@ (sp (kw-as sp)? tab-alias@)?"
    " | \"(\" ws select-stmt@ ws \")\" (ws (kw-as sp)? tab-alias@)?"
    " | \"(\" ws join-source@ ws \")\"\n"
    "where@ ::= kw-where sp expr@\n"
    "group-by@ ::= kw-group sp kw-by sp expr-list@"
    " (sp kw-having sp expr@)?\n"
    "group-by-a@ ::= kw-group sp kw-by sp expr-a@ (ws \",\" ws expr-a@)*"
    " (sp kw-having sp expr-a@)?\n"
    "order-by@ ::= kw-order sp kw-by sp expr@ order-dir"
    " (ws \",\" ws expr@ order-dir)*\n"
    "order-by-a@ ::= kw-order sp kw-by sp expr-a@ order-dir"
    " (ws \",\" ws expr-a@ order-dir)*\n"
    "limit@ ::= kw-limit sp expr@"
    " (sp kw-offset sp expr@ | ws \",\" ws expr@)?\n"
    "t5@ ::= | sp limit@\n"
    /* Expressions: operands joined by operators, flat. */
    "expr@ ::= unary@ expr-rest@*\n"
    "expr-p@ ::= paren@ expr-rest@*\n"
    "expr-a@ ::= unary-a@ expr-rest@*\n"
    "expr-v@ ::= value@ expr-rest@*\n"
    "expr-list@ ::= expr@ (ws \",\" ws expr@)*\n"
    "expr-rest@ ::= sym-op ws value@ | sp (sym-op ws value@ | op-word@)\n"
    "op-word@ ::= [aA] [nN] [dD] sp value@ | [oO] [rR] sp value@"
    " | [iI] ([nN] ws in-list@"
    " | [sS] (sp kw-not)? (sp kw-distinct sp kw-from)? sp value@"
    " | [sS] [nN] [uU] [lL] [lL])"
    " | [nN] [oO] [tT] (sp (kw-in ws in-list@ | like-op sp value@"
    " | kw-null) | [nN] [uU] [lL] [lL])"
    " | like-op sp value@ | kw-collate sp ident\n"
    "in-list@ ::= \"(\" ws (select-stmt@ ws"
    " | expr-v@ (ws \",\" ws expr-v@)* ws)? \")\" | table-name@\n"
    "unary@ ::= operand@ | unary-op ws unary@ | number | string | blob"
    " | paren@\n"
    "unary-a@ ::= unary@ | ident\n"
    "value@ ::= unary@ | dq-string\n"
    "paren@ ::= \"(\" ws (select-stmt@ | expr-list@) ws \")\"\n"
    "not-body@ ::= sp unary@ | paren@\n"
    "fn-call@ ::= ws \"(\" ws (fn-args@ ws)? \")\" (ws filter@)?"
    " (ws over@)?\n"
    "fn-args@ ::= \"*\" | (kw-distinct sp)? expr-list@"
    " | kw-distinct expr-p@ (ws \",\" ws expr@)*\n"
    "filter@ ::= kw-filter ws \"(\" ws where@ ws \")\"\n"
    "over@ ::= kw-over ws \"(\" ws (window@ ws)? \")\"\n"
    "window@ ::= partition@ (sp order-by@)? (sp frame)?"
    " | order-by@ (sp frame)? | frame\n"
    "partition@ ::= kw-partition sp kw-by sp expr-list@\n"
    "case-body@ ::= (expr@ sp)? (kw-when sp expr@ sp kw-then sp expr@ sp)+"
    " (kw-else sp expr@ sp)? kw-end\n"
    "cast-body@ ::= ws expr@ sp kw-as sp type-name ws \")\"\n"
    "exists-body@ ::= ws select-stmt@ ws \")\"\n";

/*
** The clauses after a select list, as states: t0k right after the list
** (a clause word must follow), tN after FROM (1), WHERE (2), GROUP BY (3);
** compound takes the next SELECT of a compound statement and goes back to
** t0k. Written once more for the alias mode: '#' stands for "" or "-a"
** (GROUP BY, HAVING and ORDER BY may then name the select list's
** aliases), '@' for the mode suffix as above.
*/
static const char rules_tail[] =
    "t0k#@ ::= from@ t1#@ | where@ t2#@ | group-by#@ t3#@ | compound#@"
    " | order-by#@ t5@ | limit@\n"
    "t1#@ ::= | sp (where@ t2#@ | group-by#@ t3#@ | compound#@"
    " | order-by#@ t5@ | limit@)\n"
    "t2#@ ::= | sp (group-by#@ t3#@ | compound#@ | order-by#@ t5@"
    " | limit@)\n"
    "t3#@ ::= | sp (compound#@ | order-by#@ t5@ | limit@)\n"
    "compound#@ ::= compound-kw sp kw-select (sp set-quant)? first-col@"
    " member#@\n"
    "member#@ ::= | \",\" ws col@ member#@"
    " | sp (\",\" ws col@ member#@ | alias-body member-na#@ | t0k#@)\n"
    "member-na#@ ::= | \",\" ws col@ member#@"
    " | sp (\",\" ws col@ member#@ | t0k#@)\n";

static const char rules_shared[] =
    "root ::= \"```sql\\n\" ws (select-stmt | with-stmt) ws (\";\" ws)?"
    " \"\\n```\"\n"
    "with-stmt ::= kw-with sp (kw-recursive sp)? cte (ws \",\" ws cte)*"
    " sp select-stmt-w\n"
    "cte ::= ident (ws \"(\" ws ident (ws \",\" ws ident)* ws \")\")?"
    " sp kw-as (sp (kw-not sp)? kw-materialized)? ws"
    " \"(\" ws select-stmt-w ws \")\"\n"
    "col-name ::= db-column-b | quoted-column\n"
    "table-name-w ::= ident\n"
    "col-name-w ::= ident\n"
    "operand ::= word | quoted-name | tab-alias \".\" col-or-star\n"
    "col-or-star ::= col-name | \"*\"\n"
    "tab-alias-w ::= ident\n"
    "operand-w ::= word-w | ident (\".\" (ident | \"*\"))?\n"
    "compound-kw ::= kw-union (sp kw-all)? | kw-intersect | kw-except\n"
    "set-quant ::= kw-distinct | kw-all\n"
    "alias-body ::= (kw-as sp)? (ident | string)\n"
    "order-dir ::= (sp (kw-asc | kw-desc))?"
    " (sp kw-nulls sp (kw-first | kw-last))?\n"
    "join-op ::= ws \",\" ws"
    " | sp (kw-natural sp)? (join-kind sp)? kw-join sp\n"
    "join-kind ::= (kw-left | kw-right | kw-full) (sp kw-outer)?"
    " | kw-inner | kw-cross\n"
    "sym-op ::= \"=\" \"=\"? | \"!=\" | \"<\" [=><]? | \">\" [=>]?"
    " | \"-\" (\">\" \">\"?)? | \"|\" \"|\"? | [-+*/%&]\n"
    "like-op ::= kw-like | kw-glob | kw-regexp | kw-match | kw-between"
    " | kw-escape\n"
    "unary-op ::= [-+~]\n"
    "frame ::= (kw-rows | kw-range | kw-groups) sp"
    " (kw-between sp frame-bound sp kw-and sp frame-bound | frame-bound)\n"
    "frame-bound ::= kw-unbounded sp (kw-preceding | kw-following)"
    " | kw-current sp kw-row | number sp (kw-preceding | kw-following)\n"
    "type-name ::= type-word (sp type-word){0,3}"
    " (ws \"(\" ws signed-num (ws \",\" ws signed-num)? ws \")\")?\n"
    "type-word ::= [a-zA-Z_] [a-zA-Z0-9_]{0,31}\n"
    "signed-num ::= [-+]? number\n"
    "number ::= digits (\".\" [0-9]{0,20})? exponent?"
    " | \".\" digits exponent? | \"0\" [xX] [0-9a-fA-F]{1,16}\n"
    "digits ::= [0-9]{1,20}\n"
    "exponent ::= [eE] [-+]? [0-9]{1,3}\n"
    "string ::= \"'\" string-char{0,400} \"'\"\n"
    "string-char ::= [^'] | \"''\"\n"
    "dq-string ::= \"\\\"\" ([^\"] | \"\\\"\\\"\"){0,400} \"\\\"\"\n"
    "blob ::= [xX] \"'\" [0-9a-fA-F]{0,400} \"'\"\n"
    "ident ::= [a-zA-Z_\\u0080-\\U0010FFFF] ident-rest"
    " | \"\\\"\" ([^\"\\n] | \"\\\"\\\"\"){1,64} \"\\\"\""
    " | \"`\" ([^`\\n] | \"``\"){1,64} \"`\" | \"[\" [^\\]\\n]{1,64} \"]\"\n"
    "ident-rest ::= [a-zA-Z0-9_$\\u0080-\\U0010FFFF]{0,63}\n"
    "ws ::= [ \\t\\r\\n]{0,16}\n"
    "sp ::= [ \\t\\r\\n] ws\n";

/* ---- a trie of words, written as rules ----------------------------------- */

/*
** Nodes hold one code point (ASCII letters folded to lower case) and link
** to their first child and next sibling; node 0 is the root. A word (one
** spelling of a name: bare or quoted) is a path from the root to a node
** whose `kinds` (W_*) say how the word may go on.
*/
struct tnode {
    uint32_t cp;
    int child;
    int next;
    int kinds;
};

struct trie {
    struct tnode *n;
    int len;
    int cap;
    int oom;
};

static int trie_init(struct trie *t)
{
    t->cap = 256;
    t->len = 1;
    t->oom = 0;
    t->n = calloc((size_t)t->cap, sizeof(*t->n));
    if (!t->n)
        return -1;
    t->n[0].child = t->n[0].next = -1;
    return 0;
}

static int trie_child(struct trie *t, int at, uint32_t cp)
{
    int c;
    struct tnode *nn;

    for (c = t->n[at].child; c >= 0; c = t->n[c].next)
        if (t->n[c].cp == cp)
            return c;
    if (t->len == t->cap) {
        nn = realloc(t->n, (size_t)t->cap * 2 * sizeof(*t->n));
        if (!nn) {
            t->oom = 1;
            return -1;
        }
        t->n = nn;
        t->cap *= 2;
    }
    c = t->len++;
    t->n[c].cp = cp;
    t->n[c].child = -1;
    t->n[c].kinds = 0;
    t->n[c].next = t->n[at].child;
    t->n[at].child = c;
    return c;
}

static uint32_t fold(uint32_t cp)
{
    return (cp >= 'A' && cp <= 'Z') ? cp + ('a' - 'A') : cp;
}

/* Next code point of UTF-8 text at *p. An invalid byte stands for itself
** (as Latin-1): llama.cpp never produces it, so such a name simply cannot
** be generated. */
static uint32_t utf8_next(const unsigned char **p)
{
    const unsigned char *s = *p;
    uint32_t cp;
    int n, i;

    if (s[0] < 0x80) {
        *p = s + 1;
        return s[0];
    }
    if ((s[0] & 0xE0) == 0xC0) {
        cp = s[0] & 0x1F;
        n = 1;
    } else if ((s[0] & 0xF0) == 0xE0) {
        cp = s[0] & 0x0F;
        n = 2;
    } else if ((s[0] & 0xF8) == 0xF0) {
        cp = s[0] & 0x07;
        n = 3;
    } else {
        *p = s + 1;
        return s[0];
    }
    for (i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *p = s + 1;
            return s[0];
        }
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    *p = s + n + 1;
    return cp;
}

/* Add one spelling: open quote (0 = none), the name with the close quote
** doubled inside when dq is set, close quote; its end gets `kinds`. */
static void trie_add(struct trie *t, uint32_t open, const char *name,
                     uint32_t close, int dq, int kinds)
{
    const unsigned char *p = (const unsigned char *)name;
    int at = 0;
    uint32_t cp;

    if (open)
        at = trie_child(t, at, open);
    while (*p && at >= 0) {
        cp = utf8_next(&p);
        at = trie_child(t, at, fold(cp));
        if (at >= 0 && dq && cp == close)
            at = trie_child(t, at, cp);
    }
    if (at >= 0 && close)
        at = trie_child(t, at, close);
    if (at > 0)
        t->n[at].kinds |= kinds;
}

static int in_list(const char *const *list, const char *w)
{
    size_t i, n = strlen(w);

    for (; *list; list++) {
        if (strlen(*list) != n)
            continue;
        for (i = 0; i < n; i++)
            if ((char)fold((unsigned char)w[i]) != (*list)[i])
                break;
        if (i == n)
            return 1;
    }
    return 0;
}

/* Whether the engine of s reads name bare as this identifier: letters,
** digits, '_', '$' and non-ASCII, not starting with a digit or '$', not
** a hard keyword, and not one of the engine's reserved words (s's, none
** on SQLite). */
static int bare_ok(const struct db_schema *s, const char *name)
{
    const unsigned char *p = (const unsigned char *)name;

    if (!*p || (*p >= '0' && *p <= '9') || *p == '$')
        return 0;
    for (; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9') || *p == '_' || *p == '$' ||
              *p >= 0x80))
            return 0;
    return !in_list(kw_hard, name) && !schema_reserved(s, name);
}

/*
** The names of one kind (tables, or columns) in three tries: b holds
** the names that may be written bare; q every name without a quote
** character, to be written between any of the three quotes; s the few
** names with a quote character in them, in each spelling they have.
*/
struct names {
    struct trie b, q, s;
};

static void names_add(struct names *n, const struct db_schema *s,
                      const char *name)
{
    if (!*name)
        return;
    if (bare_ok(s, name))
        trie_add(&n->b, 0, name, 0, 0, W_DONE);
    if (!strpbrk(name, "\"`]")) {
        trie_add(&n->q, 0, name, 0, 0, W_DONE);
        return;
    }
    trie_add(&n->s, '"', name, '"', 1, W_DONE);
    trie_add(&n->s, '`', name, '`', 1, W_DONE);
    if (!strchr(name, ']'))
        trie_add(&n->s, '[', name, ']', 0, W_DONE);
}

/*
** A table with a namespace (schema.h) only as the query must write it:
** nsp.name when both are bare words, and "nsp"."name" (the standard
** quotes, which PostgreSQL and DuckDB take) when neither has a double
** quote; its name alone does not reach it.
*/
static void names_add_qualified(struct names *n, const struct db_schema *s,
                                const char *nsp, const char *name)
{
    struct buf b;

    buf_init(&b, 0);
    if (bare_ok(s, nsp) && bare_ok(s, name)) {
        buf_printf(&b, "%s.%s", nsp, name);
        if (!buf_err(&b))
            trie_add(&n->b, 0, b.data, 0, 0, W_DONE);
    }
    if (*nsp && *name && !strchr(nsp, '"') && !strchr(name, '"')) {
        buf_reset(&b);
        buf_printf(&b, "%s\".\"%s", nsp, name);
        if (!buf_err(&b))
            trie_add(&n->s, '"', b.data, '"', 0, W_DONE);
    }
    if (buf_err(&b))
        n->b.oom = 1;
    buf_free(&b);
}

/* ---- writing GBNF ------------------------------------------------------- */

/* Append s with every '@' replaced by mode and every '#' by amode. */
static void put_subst(struct buf *b, const char *s, const char *amode,
                      const char *mode)
{
    const char *q;

    while ((q = strpbrk(s, "@#")) != NULL) {
        buf_append(b, s, (size_t)(q - s));
        buf_puts(b, *q == '@' ? mode : amode);
        s = q + 1;
    }
    buf_puts(b, s);
}

/* One code point as a GBNF element: a case class for letters, else a
** quoted, escaped character. */
static void put_cp(struct buf *b, uint32_t cp)
{
    char e[8];

    if (cp >= 'a' && cp <= 'z') {
        e[0] = '[';
        e[1] = (char)cp;
        e[2] = (char)(cp - 'a' + 'A');
        e[3] = ']';
        buf_append(b, e, 4);
    } else if (cp >= 0x20 && cp < 0x7F) {
        e[0] = '"';
        e[1] = '\\';
        e[2] = (char)cp;
        e[3] = '"';
        if (cp == '"' || cp == '\\') {
            buf_append(b, e, 4);
        } else {
            e[1] = (char)cp;
            e[2] = '"';
            buf_append(b, e, 3);
        }
    } else if (cp < 0x10000) {
        buf_printf(b, "\"\\u%04X\"", (unsigned)cp);
    } else {
        buf_printf(b, "\"\\U%08X\"", (unsigned)cp);
    }
}

/* ---- table aliases ------------------------------------------------------ */

/* The longest table alias, in characters (see the design notes). */
#define ALIAS_MAX 4

/* A word no table alias may be: lower case, ALIAS_MAX characters at most. */
struct alias_ban {
    char w[ALIAS_MAX + 1];
};

/* Whether c (ASCII) may be a table alias's character (first: its first). */
static int alias_char(int c, int first)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
           (!first && c >= '0' && c <= '9');
}

/* Add word to bans (n of them) when an alias could spell it. */
static void alias_ban_add(struct alias_ban *bans, int *n, const char *word)
{
    size_t i, len = strlen(word);

    if (!len || len > ALIAS_MAX)
        return;
    for (i = 0; i < len; i++) {
        if (!alias_char((unsigned char)word[i], i == 0))
            return;
        bans[*n].w[i] = (char)fold((unsigned char)word[i]);
    }
    bans[*n].w[len] = '\0';
    (*n)++;
}

/* Whether prefix (depth characters, lower case) is one of the bans. */
static int alias_banned(const struct alias_ban *bans, int n,
                        const char *prefix, size_t depth)
{
    int i;

    for (i = 0; i < n; i++)
        if (strlen(bans[i].w) == depth &&
            memcmp(bans[i].w, prefix, depth) == 0)
            return 1;
    return 0;
}

/* A GBNF character class of the characters ok[] marks, as ranges. */
static void put_class(struct buf *b, const unsigned char ok[128])
{
    int c, end;

    buf_putc(b, '[');
    for (c = 0; c < 128; c++) {
        if (!ok[c])
            continue;
        for (end = c; end + 1 < 128 && ok[end + 1]; end++)
            ;
        buf_putc(b, (char)c);
        if (end > c) {
            buf_putc(b, '-');
            buf_putc(b, (char)end);
        }
        c = end;
    }
    buf_putc(b, ']');
}

/*
** The rule of the aliases that begin with prefix (depth characters, lower
** case; id 0 is tab-alias itself, else tab-alias-<id>), then those of its
** children: one alternative ends here unless prefix is banned, one goes on
** through each next character a ban goes on with (that child's rule), and
** one takes any other character and then any ALIAS_MAX - depth - 1 more.
** A child that would be ALIAS_MAX long is a ban itself: no alternative.
*/
static void emit_alias_node(struct buf *b, const struct alias_ban *bans,
                            int n, const char *prefix, size_t depth, int id,
                            int *last_id)
{
    unsigned char ok[128], next[128];
    char kids[64], child[ALIAS_MAX + 1];
    int ids[64], nkids = 0, nalt = 0, i, c;

    memset(next, 0, sizeof next);
    for (i = 0; i < n; i++)
        if (strlen(bans[i].w) > depth &&
            memcmp(bans[i].w, prefix, depth) == 0 &&
            !next[(unsigned char)bans[i].w[depth]]) {
            next[(unsigned char)bans[i].w[depth]] = 1;
            kids[nkids++] = bans[i].w[depth];
        }
    if (id)
        buf_printf(b, "tab-alias-%d ::=", id);
    else
        buf_puts(b, "tab-alias ::=");
    if (depth > 0 && !alias_banned(bans, n, prefix, depth)) {
        buf_puts(b, " |"); /* the empty alternative: "x ::= | ..." */
    }
    for (i = 0; i < nkids; i++) {
        ids[i] = 0;
        if (depth + 1 == ALIAS_MAX)
            continue;
        ids[i] = ++*last_id;
        buf_puts(b, nalt++ ? " | " : " ");
        put_cp(b, (unsigned char)kids[i]);
        buf_printf(b, " tab-alias-%d", ids[i]);
    }
    for (c = 0; c < 128; c++)
        ok[c] = alias_char(c, depth == 0) && !next[fold((unsigned)c)];
    buf_puts(b, nalt++ ? " | " : " ");
    put_class(b, ok);
    if (ALIAS_MAX - depth - 1 > 0)
        buf_printf(b, " [a-zA-Z0-9_]{0,%d}", (int)(ALIAS_MAX - depth - 1));
    buf_putc(b, '\n');
    for (i = 0; i < nkids; i++) {
        if (!ids[i])
            continue;
        memcpy(child, prefix, depth);
        child[depth] = kids[i];
        emit_alias_node(b, bans, n, child, depth + 1, ids[i], last_id);
    }
}

/*
** tab-alias: a word of up to ALIAS_MAX characters that is no hard keyword
** and none of the engine's reserved words (bare_ok()), as a trie of rules
** over those of them an alias could spell. GBNF has no "but not", so the
** bans are spelled out; the length cap alone used to let every short one
** through (FROM employees join, null.name), where a longer one (where,
** order) was kept out by the cap alone.
*/
static void emit_tab_alias(struct buf *b, const struct db_schema *s)
{
    struct alias_ban *bans;
    int i, n = 0, last_id = 0;
    size_t cap = sizeof kw_hard / sizeof kw_hard[0] +
                 (size_t)(s ? s->nreserved : 0);

    bans = malloc(cap * sizeof *bans);
    if (!bans) {
        b->err = BUF_ENOMEM;
        return;
    }
    for (i = 0; kw_hard[i]; i++)
        alias_ban_add(bans, &n, kw_hard[i]);
    for (i = 0; s && i < s->nreserved; i++)
        alias_ban_add(bans, &n, s->reserved[i]);
    emit_alias_node(b, bans, n, "", 0, 0, &last_id);
    free(bans);
}

static int popcount(int x)
{
    int n = 0;

    for (; x; x &= x - 1)
        n++;
    return n;
}

/* Whether node x needs a rule of its own: it has children and a word
** ends there or the path branches, or it is a leaf with more than one
** way to go on. */
static int needs_rule(const struct trie *t, int x)
{
    const struct tnode *n = &t->n[x];

    if (n->child < 0)
        return popcount(n->kinds) > 1;
    return n->kinds || t->n[n->child].next >= 0;
}

/* Write one alternative starting at child c: its chain of characters up
** to a node that needs a rule (referenced) or a leaf (its tail inline). */
static void put_chain(struct buf *b, const struct trie *t, const char *name,
                     const char *suffix, int c)
{
    int x, k;

    for (x = c;; x = t->n[x].child) {
        buf_putc(b, ' ');
        put_cp(b, t->n[x].cp);
        if (needs_rule(t, x)) {
            buf_printf(b, " %s%s-%d", name, suffix, x);
            return;
        }
        if (t->n[x].child < 0)
            break;
    }
    for (k = 0; k < NTAILS; k++)
        if (t->n[x].kinds & (1 << k) && word_tail[k][0]) {
            buf_putc(b, ' ');
            put_subst(b, word_tail[k], "", suffix);
        }
}

/*
** Write the rules for the subtrie at node `at` as rule name+suffix (the
** root) or name+suffix-<node>: one alternative per way a word ending here
** goes on (the empty one first), then one per child chain. A trie with no
** words gives a rule that matches only NUL, which no token produces.
*/
static void emit_node(struct buf *b, const struct trie *t, const char *name,
                      const char *suffix, int at)
{
    int c, k, x, nalt = 0;

    if (at == 0)
        buf_printf(b, "%s%s ::=", name, suffix);
    else
        buf_printf(b, "%s%s-%d ::=", name, suffix, at);
    for (k = 0; k < NTAILS; k++) {
        if (!(t->n[at].kinds & (1 << k)))
            continue;
        if (word_tail[k][0]) {
            buf_puts(b, nalt ? " | " : " ");
            put_subst(b, word_tail[k], "", suffix);
        } else {
            buf_puts(b, " |");
            nalt--; /* the empty alternative came first: "x ::= | ..." */
        }
        nalt++;
    }
    for (c = t->n[at].child; c >= 0; c = t->n[c].next) {
        if (nalt++)
            buf_puts(b, " |");
        put_chain(b, t, name, suffix, c);
    }
    if (!nalt && !t->n[at].kinds)
        buf_puts(b, " \"\\u0000\"");
    buf_putc(b, '\n');
    for (c = t->n[at].child; c >= 0; c = t->n[c].next) {
        for (x = c; !needs_rule(t, x) && t->n[x].child >= 0;
             x = t->n[x].child)
            ;
        if (needs_rule(t, x))
            emit_node(b, t, name, suffix, x);
    }
}

/* kw-<word> ::= [wW] [oO] [rR] [dD] for every keyword the rules use. */
static void emit_keywords(struct buf *b)
{
    const char *const *k;
    const char *p;

    for (k = kw_used; *k; k++) {
        buf_puts(b, "kw-");
        for (p = *k; *p; p++)
            buf_putc(b, *p == '_' ? '-' : *p);
        buf_puts(b, " ::=");
        for (p = *k; *p; p++) {
            buf_putc(b, ' ');
            put_cp(b, (unsigned char)*p);
        }
        buf_putc(b, '\n');
    }
}

/* Every trie the grammar is written from. */
struct tries {
    struct names tabs;
    struct names cols;
    struct trie words;      /* operand words, bare table and column names
                               among them */
    struct trie words_w;    /* operand words but names (WITH statements) */
};

#define NTRIES 8

static void tries_list(struct tries *t, struct trie *all[NTRIES])
{
    all[0] = &t->tabs.b;
    all[1] = &t->tabs.q;
    all[2] = &t->tabs.s;
    all[3] = &t->cols.b;
    all[4] = &t->cols.q;
    all[5] = &t->cols.s;
    all[6] = &t->words;
    all[7] = &t->words_w;
}

/* Fill the tries from the schema and the dialect's words. Returns -1
** when out of memory. */
static int build_tries(const struct db_schema *s, enum sqlx_dialect d,
                       struct tries *t)
{
    const char *const *fns = d == SQLX_POSTGRES ? functions_pg
                             : d == SQLX_MARIADB ? functions_my
                             : d == SQLX_DUCKDB  ? functions_duck
                                                 : functions;
    static const char *const implicit[] = {"rowid", "oid", "_rowid_",
                                           NULL};
    struct trie *all[NTRIES];
    const char *const *k;
    int i, j;

    for (i = 0; i < s->ntables; i++) {
        const struct db_table *tab = &s->tables[i];

        if (tab->namespace)
            names_add_qualified(&t->tabs, s, tab->namespace, tab->name);
        else
            names_add(&t->tabs, s, tab->name);
        for (j = 0; j < tab->ncols; j++)
            names_add(&t->cols, s, tab->cols[j].name);
    }
    for (k = implicit; *k; k++)
        names_add(&t->cols, s, *k);
    for (i = 0; i < s->ntables; i++) {
        const struct db_table *tab = &s->tables[i];

        /* A qualifier: the table's name (also of one with a namespace,
        ** FROM sales.orders ... orders.id), or schema.table. */
        if (bare_ok(s, tab->name))
            trie_add(&t->words, 0, tab->name, 0, 0, W_QUAL);
        if (tab->namespace && bare_ok(s, tab->namespace) &&
            bare_ok(s, tab->name)) {
            struct buf q;
            buf_init(&q, 0);
            buf_printf(&q, "%s.%s", tab->namespace, tab->name);
            if (buf_err(&q))
                t->words.oom = 1;
            else
                trie_add(&t->words, 0, q.data, 0, 0, W_QUAL);
            buf_free(&q);
        }
        for (j = 0; j < tab->ncols; j++)
            if (bare_ok(s, tab->cols[j].name))
                trie_add(&t->words, 0, tab->cols[j].name, 0, 0, W_DONE);
    }
    for (k = implicit; *k; k++)
        trie_add(&t->words, 0, *k, 0, 0, W_DONE);
    for (k = fns; *k; k++) {
        trie_add(&t->words, 0, *k, 0, 0, W_FUNC);
        trie_add(&t->words_w, 0, *k, 0, 0, W_FUNC);
    }
    for (i = 0; operand_words[i].word; i++) {
        trie_add(&t->words, 0, operand_words[i].word, 0, 0,
                 operand_words[i].kind);
        trie_add(&t->words_w, 0, operand_words[i].word, 0, 0,
                 operand_words[i].kind);
    }
    for (i = 0; d != SQLX_SQLITE && operand_words_ext[i].word; i++) {
        trie_add(&t->words, 0, operand_words_ext[i].word, 0, 0,
                 operand_words_ext[i].kind);
        trie_add(&t->words_w, 0, operand_words_ext[i].word, 0, 0,
                 operand_words_ext[i].kind);
    }
    tries_list(t, all);
    for (i = 0; i < NTRIES; i++)
        if (all[i]->oom)
            return -1;
    return 0;
}

/*
** The rules for names in quotes: table-name (bare or quoted), and
** quoted-column, and quoted-name for an operand, which is a quoted column
** or a quoted table name as a qualifier; both share the opening quote so
** that an operand starts with one alternative per kind of quote. Names
** with a quote character in them (the s tries) only when there are any.
*/
static void emit_quoted(struct buf *b, const struct tries *t)
{
    static const char *const quote[3][2] = {
        {"\"\\\"\"", "\"\\\"\""}, {"\"`\"", "\"`\""}, {"\"[\"", "\"]\""}
    };
    int have_st = t->tabs.s.n[0].child >= 0;
    int have_sc = t->cols.s.n[0].child >= 0;
    int i;

    buf_puts(b, "table-name ::= db-table-b");
    for (i = 0; i < 3; i++)
        buf_printf(b, " | %s db-table-q %s", quote[i][0], quote[i][1]);
    buf_puts(b, have_st ? " | db-table-s\n" : "\n");
    buf_puts(b, "quoted-column ::=");
    for (i = 0; i < 3; i++)
        buf_printf(b, "%s %s db-column-q %s", i ? " |" : "", quote[i][0],
                   quote[i][1]);
    buf_puts(b, have_sc ? " | db-column-s\n" : "\n");
    buf_puts(b, "quoted-name ::=");
    for (i = 0; i < 3; i++)
        buf_printf(b, "%s %s (db-column-q %s | db-table-q %s \".\" "
                   "col-or-star)", i ? " |" : "", quote[i][0], quote[i][1],
                   quote[i][1]);
    buf_puts(b, have_sc ? " | db-column-s" : "");
    buf_puts(b, have_st ? " | db-table-s \".\" col-or-star\n" : "\n");
}

enum sqlx_dialect sqlx_dialect_of(const char *name)
{
    if (!name)
        return SQLX_SQLITE;
    if (strcmp(name, "PostgreSQL") == 0)
        return SQLX_POSTGRES;
    if (strcmp(name, "MariaDB") == 0 || strcmp(name, "MySQL") == 0)
        return SQLX_MARIADB;
    if (strcmp(name, "DuckDB") == 0)
        return SQLX_DUCKDB;
    return SQLX_SQLITE;
}

/* The moded rules, with the dialect's extra operators (ext-op) as one
** more alternative of expr-rest for PostgreSQL and DuckDB. */
static void put_moded(struct buf *b, enum sqlx_dialect d, const char *mode)
{
    static const char rest[] = "| sp (sym-op ws value@ | op-word@)";
    const char *at = strstr(rules_moded, rest);
    char *head;
    size_t n;

    if ((d != SQLX_POSTGRES && d != SQLX_DUCKDB) || !at) {
        put_subst(b, rules_moded, "", mode);
        return;
    }
    n = (size_t)(at - rules_moded) + sizeof rest - 1;
    head = malloc(n + 1);
    if (!head) {
        b->err = BUF_ENOMEM;
        return;
    }
    memcpy(head, rules_moded, n);
    head[n] = '\0';
    put_subst(b, head, "", mode);
    free(head);
    put_subst(b, " | ext-op@", "", mode);
    put_subst(b, rules_moded + n, "", mode);
}

char *sqlx_grammar(const struct db_schema *s)
{
    return sqlx_grammar_dialect(s, SQLX_SQLITE);
}

char *sqlx_grammar_dialect(const struct db_schema *s, enum sqlx_dialect d)
{
    struct tries t;
    struct trie *all[NTRIES];
    struct buf b;
    char *out = NULL;
    int i;

    memset(&t, 0, sizeof t);
    tries_list(&t, all);
    buf_init(&b, 0);
    for (i = 0; i < NTRIES; i++)
        if (trie_init(all[i]))
            goto out;
    if (build_tries(s, d, &t))
        goto out;
    buf_puts(&b, rules_shared);
    put_moded(&b, d, "");
    put_moded(&b, d, "-w");
    if (d != SQLX_SQLITE) {
        buf_puts(&b, rules_ext_shared);
        put_subst(&b, rules_ext_moded, "", "");
        put_subst(&b, rules_ext_moded, "", "-w");
    }
    if (d == SQLX_POSTGRES || d == SQLX_DUCKDB) {
        buf_puts(&b, rules_pg_shared);
        put_subst(&b, rules_pg_moded, "", "");
        put_subst(&b, rules_pg_moded, "", "-w");
    }
    put_subst(&b, rules_tail, "", "");
    put_subst(&b, rules_tail, "", "-w");
    put_subst(&b, rules_tail, "-a", "");
    put_subst(&b, rules_tail, "-a", "-w");
    emit_quoted(&b, &t);
    emit_tab_alias(&b, s);
    emit_keywords(&b);
    emit_node(&b, &t.words, "word", "", 0);
    emit_node(&b, &t.words_w, "word", "-w", 0);
    emit_node(&b, &t.tabs.b, "db-table-b", "", 0);
    emit_node(&b, &t.tabs.q, "db-table-q", "", 0);
    emit_node(&b, &t.tabs.s, "db-table-s", "", 0);
    emit_node(&b, &t.cols.b, "db-column-b", "", 0);
    emit_node(&b, &t.cols.q, "db-column-q", "", 0);
    emit_node(&b, &t.cols.s, "db-column-s", "", 0);
    if (!buf_err(&b))
        out = buf_steal(&b);
out:
    buf_free(&b);
    for (i = 0; i < NTRIES; i++)
        free(all[i]->n);
    return out;
}
