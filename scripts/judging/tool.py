#!/usr/bin/env python3
"""Record yes/no judgements on compressed forms (see GUIDE.md next to this file).

    python3 tool.py show START END              print items START..END (numbered from 1)
    python3 tool.py put CODE "1:fgk 2:f-k ..."  record judgements for items as judge CODE
    python3 tool.py status CODE                 how many items CODE has judged, and which are left

A judgement is three characters, in this order: f (faithful) or -, g (grammatical) or -, k (keeps what a
later question would need) or -. "fgk" is yes to all three, "f-k" says the form is not grammatical,
"---" no to all. A later put for the same item replaces the earlier one. Judgements are written to
judgements_CODE.jsonl in this folder. Standard library only.
"""

from __future__ import annotations

import json
import re
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ITEMS = HERE / "items.jsonl"
PATTERN = re.compile(r"^(\d+):([f-][g-][k-])$")


def items() -> list[dict]:
    return [json.loads(line) for line in ITEMS.read_text(encoding="utf-8").splitlines() if line.strip()]


def judgements_path(code: str) -> Path:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,20}", code):
        raise SystemExit("CODE: letters, digits, _ or -, at most 20")
    return HERE / f"judgements_{code}.jsonl"


def load(code: str) -> dict[int, dict]:
    path = judgements_path(code)
    if not path.is_file():
        return {}
    return {
        r["item"]: r
        for r in (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())
    }


def show(start: int, end: int) -> None:
    for item in items()[start - 1 : end]:
        print(f"=== item {item['item']}  [{item['lang']}]")
        print("SOURCE:")
        print(textwrap.indent(item["source"], "    "))
        print("FORM:")
        print(textwrap.indent(item["form"], "    "))
        print()


def put(code: str, spec: str) -> None:
    by_number = {item["item"]: item for item in items()}
    done = load(code)
    for part in spec.split():
        m = PATTERN.match(part)
        if not m:
            raise SystemExit(f"cannot read {part!r}: write ITEM:fgk with - for no, e.g. 3:f-k")
        number, marks = int(m.group(1)), m.group(2)
        if number not in by_number:
            raise SystemExit(f"there is no item {number}")
        item = by_number[number]
        done[number] = {
            "item": number,
            "id": item["id"],
            "method": item["method"],
            "sha": item["sha"],
            "f": marks[0] == "f",
            "g": marks[1] == "g",
            "k": marks[2] == "k",
        }
    lines = [json.dumps(done[n], ensure_ascii=False) for n in sorted(done)]
    judgements_path(code).write_text("\n".join(lines) + "\n", encoding="utf-8")
    status(code)


def status(code: str) -> None:
    total = [item["item"] for item in items()]
    done = load(code)
    left = [n for n in total if n not in done]
    print(f"{code}: {len(done)} of {len(total)} judged")
    if left:
        print("left: " + " ".join(map(str, left[:60])) + (" ..." if len(left) > 60 else ""))


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "show":
        show(int(argv[1]), int(argv[2]))
    elif len(argv) == 3 and argv[0] == "put":
        put(argv[1], argv[2])
    elif len(argv) == 2 and argv[0] == "status":
        status(argv[1])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
