"""The run record's files: one writer and one reader each, every write atomic (docs/results-format.md).

A reader (the analysis, --resume, a second host) must never see a half-written file: each is written to a
temporary beside it, flushed to the disk and renamed over it.  When the write fails (a full disk, a
read-only directory) the temporary is removed and the old file, if any, is left as it was.
"""
import json
import os
import re
from pathlib import Path

from .settings import UsageError

SCHEMA = 1
# An argument of parse_fields.
FIELD = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(:=|\+=|=)(.*)", re.S)


class RecordError(Exception):
    """A file of the run record that cannot be written, or read back as what it should be."""


def write_text_atomic(path: Path, text: str):
    path = Path(path)
    temporary = path.with_name(f".{path.name}.tmp.{os.getpid()}")
    try:
        with open(temporary, "w") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise RecordError(f"cannot write {path}: {error.strerror or error}") from None
    except BaseException:  # a signal's exception (vswap_bench's handlers) midway: no temporary left behind
        temporary.unlink(missing_ok=True)
        raise


def write_json(path: Path, document: dict):
    """DOCUMENT with this package's schema version first, one key a line at the top level."""
    write_text_atomic(path, json.dumps({"schema": SCHEMA, **document}, indent=2) + "\n")


def read_json(path: Path) -> dict:
    """A JSON object of the run record; its schema, when it has one, must be one this package writes."""
    try:
        document = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise RecordError(f"cannot read {path}: {error}") from None
    if not isinstance(document, dict):
        raise RecordError(f"{path}: expected a JSON object, found {type(document).__name__}")
    if document.get("schema", SCHEMA) != SCHEMA:
        raise RecordError(f"{path}: schema {document['schema']!r}, this harness reads {SCHEMA}")
    return document


def parse_fields(arguments: list[str]) -> dict:
    """KEY=STRING, KEY:=JSON (a number, true, a list...) and KEY+=STRING (appended to the list KEY) as a
    document, in the order given: the shell's builders describe their records so, and never write JSON.
    A KEY of the form OUTER.INNER is INNER in the object OUTER (made when first named)."""
    document = {}
    for argument in arguments:
        match = FIELD.fullmatch(argument)
        if not match:
            raise UsageError(f"'{argument}' is not KEY=STRING, KEY:=JSON or KEY+=STRING")
        path, operator, value = match.groups()
        *outer, key = path.split(".")
        target = document
        for name in outer:
            target = target.setdefault(name, {})
            if not isinstance(target, dict):
                raise UsageError(f"{path}: '{name}' is not an object")
        if operator == ":=":
            try:
                target[key] = json.loads(value)
            except json.JSONDecodeError as error:
                raise UsageError(f"{path}:= needs a JSON value, not {value!r}: {error}") from None
        elif operator == "+=":
            target.setdefault(key, []).append(value)
        else:
            target[key] = value
    return document
