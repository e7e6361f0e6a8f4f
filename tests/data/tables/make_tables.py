"""Write the corpus of small data files that every front end must read alike.

``python tests/data/tables/make_tables.py`` rewrites them; the files are
committed, so the tests read bytes that do not depend on this script's
platform (line ends, encodings). tests/app/test_one_reader.py says what each
file must give.
"""

from __future__ import annotations

import gzip
from pathlib import Path

HERE = Path(__file__).resolve().parent

ROWS = [("1.5", "2", "yes"), ("3.25", "4", "no"), ("-0.5", "6", "yes")]


def lines(sep: str, rows=ROWS, header=("a", "b", "label"), end: str = "\n") -> str:
    return end.join(sep.join(row) for row in [header, *rows]) + end


FILES: dict[str, bytes] = {
    "comma.csv": lines(",").encode(),
    "semicolon_decimal_comma.csv": lines(
        ";", [(a.replace(".", ","), b, c) for a, b, c in ROWS]
    ).encode(),
    "tab.tsv": lines("\t").encode(),
    "pipe.csv": lines("|").encode(),
    "utf8_bom.csv": b"\xef\xbb\xbf"
    + lines(",", header=("café", "température", "label")).encode(),
    "utf8_accents.csv": lines(
        ",",
        [("1", "2", "éte"), ("3", "4", "hiver"), ("5", "6", "éte")],
        header=("poids", "größe", "saison"),
    ).encode(),
    "latin1.csv": lines(
        ";",
        [("1,5", "2", "oui"), ("3,0", "4", "non")],
        header=("précision", "durée", "classe"),
    ).encode("latin-1"),
    "utf16_excel.txt": lines("\t", end="\r\n").encode("utf-16"),
    "quoted_header.csv": (
        b'"weight","name, full","label"\n'
        b'1.5,"Smith, J",yes\n2.5,"Doe, A",no\n3.5,"Roe, R",yes\n'
    ),
    "blank_labels.csv": b"a,b,label\n1,2,yes\n3,4,\n5,6,no\n7,8,\n",
    "blank_cells.csv": b"a,b,label\n1,,yes\n,4,no\n5,6,yes\n7,,no\n",
    "non_numeric.csv": b"a,b,label\n1,n/a,yes\n2,4,no\n3,x,yes\n4,5,no\n",
    "question_marks.csv": b"a,b,label\n1,?,yes\n2,4,no\n3,5,yes\n",
    "duplicate_columns.csv": b"a,b,a,label\n1,2,3,yes\n4,5,6,no\n",
    "one_column.csv": b"value\n1\n2\n3\n",
    "empty.csv": b"",
    "blank_lines_only.csv": b"  \n\n \n",
    "header_only.csv": b"a,b,label\n",
    "trailing_separator.csv": b"a,b,label,\n1.5,2,yes,\n3.25,4,no,\n-0.5,6,yes,\n",
    "trailing_separator_rows.csv": b"a,b,label\n1.5,2,yes,\n3.25,4,no,\n-0.5,6,yes,\n",
    "windows_line_ends.csv": lines(",", end="\r\n").encode(),
    "ragged_rows.csv": b"a,b,label\n1,2,yes\n3,4,no,extra\n5,6,yes\n",
    "spaces_in_header.csv": b" a , b , label \n1, 2, yes\n3, 4, no\n",
    "label_named_class.csv": b"Class,x,y\nA,1,2\nB,3,4\nA,5,6\n",
    "gzip.csv.gz": gzip.compress(lines(",").encode(), mtime=0),
    "excel_workbook.csv": b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 24,
}


def main() -> None:
    for name, data in FILES.items():
        (HERE / name).write_bytes(data)
    print(f"wrote {len(FILES)} files to {HERE}")


if __name__ == "__main__":
    main()
