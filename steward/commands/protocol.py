"""`steward protocol schema|typescript`: export the wire protocol."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from steward.config import PROJECT_ROOT
from steward.protocol.schema import json_schema, typescript

TS_PATH = PROJECT_ROOT / "client-bridge" / "src" / "protocol.gen.ts"


def _schema(args: argparse.Namespace) -> int:
    sys.stdout.write(json.dumps(json_schema(), indent=2) + "\n")
    return 0


def _typescript(args: argparse.Namespace) -> int:
    text = typescript()
    out = Path(args.out)
    if args.check:
        if not out.exists() or out.read_text() != text:
            sys.stderr.write(f"{out} is stale: run `steward protocol typescript`\n")
            return 1
        return 0
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    sys.stderr.write(f"wrote {out}\n")
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser("protocol", help="wire protocol: JSON Schema and TypeScript types")
    psub = p.add_subparsers(dest="protocol_command", metavar="WHAT", required=True)
    psub.add_parser("schema", help="print the JSON Schema").set_defaults(handler=_schema)
    t = psub.add_parser("typescript", help="generate client-bridge TypeScript types")
    t.add_argument("--out", default=str(TS_PATH))
    t.add_argument("--check", action="store_true", help="fail if the file is stale")
    t.set_defaults(handler=_typescript)
