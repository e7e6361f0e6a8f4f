"""Data files in: read, diagnose and clean a table before training.

One reader for every front end: the library (:func:`read_table`, exported
from ``budgetdag_core``), the command line and the app read a file through
it, so a file means the same everywhere and every refusal has one message.

- :func:`read_table` turns a path, bytes or an open file into a
  :class:`Table` (bounded size; gzip, encodings, separators and a decimal
  comma detected), or raises ``ValueError`` with a message a user can act on.
- :func:`diagnose` lists what stands between a table and training (blank and
  non-numeric cells by column and row, a label with one class, rare classes,
  very many columns, ...) as :class:`Problem` records with the fixes that
  apply; :func:`apply_fix` applies one :class:`Fix` (the app's buttons).
  Row numbers, identifiers and copies of the label are ``"leak"`` warnings
  (:data:`SUSPECT_KINDS`, which the command line refuses unless told), one
  column that predicts the label alone a ``"strong_column"`` warning; both
  offer the ``"leave_out"`` fix.
"""

from ._clean import (
    FIXES,
    MANY_CATEGORIES,
    Fix,
    apply_fix,
    apply_fixes,
    combine_train_test,
    drop_missing_rows,
    drop_rare_classes,
    fix_for,
    impute,
    one_hot,
    one_hot_groups,
    split_train_test,
)
from ._diagnose import (
    SUSPECT_KINDS,
    Problem,
    RowNames,
    class_balance,
    column_summary,
    diagnose,
    file_rows,
    guess_task,
    has_errors,
    is_numeric,
    missing_mask,
)
from ._read import (
    DELIMITERS,
    EXTRA_NA_VALUES,
    LABEL_NAMES,
    Table,
    check_header,
    detect_decimal,
    detect_delimiter,
    read_table,
    suggest_label,
)
from ._text import (
    ENCODINGS,
    MAX_TABLE_BYTES,
    MAX_TABLE_ENV,
    MAX_TABLE_MB,
    decode_text,
    max_table_bytes,
    wide_encoding,
)

__all__ = [
    "DELIMITERS",
    "ENCODINGS",
    "EXTRA_NA_VALUES",
    "FIXES",
    "LABEL_NAMES",
    "MANY_CATEGORIES",
    "MAX_TABLE_BYTES",
    "MAX_TABLE_ENV",
    "MAX_TABLE_MB",
    "Fix",
    "Problem",
    "RowNames",
    "SUSPECT_KINDS",
    "Table",
    "apply_fix",
    "apply_fixes",
    "check_header",
    "class_balance",
    "column_summary",
    "combine_train_test",
    "decode_text",
    "detect_decimal",
    "detect_delimiter",
    "diagnose",
    "drop_missing_rows",
    "drop_rare_classes",
    "file_rows",
    "fix_for",
    "guess_task",
    "has_errors",
    "impute",
    "is_numeric",
    "max_table_bytes",
    "missing_mask",
    "one_hot",
    "one_hot_groups",
    "read_table",
    "split_train_test",
    "suggest_label",
    "wide_encoding",
]
