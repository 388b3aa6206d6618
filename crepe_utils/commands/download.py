"""``python -m crepe_utils download``: options and the Hugging Face token; the datasets are the benchmarks'
(:data:`crepe_utils.benchmarks.DATASETS`)."""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Mapping

from .. import benchmarks, escaping, textfile
from ..download.datasets import MIRROR_ENV, OVERRIDE_ENV
from ..errors import error_line
from ..download.downloader import Downloader
from ..download.extraction import MARKER_NAME
from .released import fetch_released_text
from ..download.verification import RECORD_NAME

TOKEN_ENVS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")


def hub_token(environ: Mapping[str, str] | None = None) -> str | None:
    """The Hugging Face token: ``HF_TOKEN``, ``HUGGING_FACE_HUB_TOKEN``, else ``huggingface-cli login``'s file."""
    environ = os.environ if environ is None else environ
    for name in TOKEN_ENVS:
        if environ.get(name, "").strip():
            return environ[name].strip()
    hf_home = environ.get("HF_HOME") or os.path.join("~", ".cache", "huggingface")
    token_file = Path(environ.get("HF_TOKEN_PATH") or os.path.join(hf_home, "token")).expanduser()
    if token_file.is_file():
        return token_file.read_text(encoding=textfile.ENCODING).strip() or None
    return None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    catalogue = benchmarks.DATASETS
    parser.add_argument("dataset", choices=catalogue.names, nargs="?",
                        help="; ".join(f"{d.name}: {d.description}" for d in catalogue.datasets.values()))
    parser.add_argument("--dest", metavar="DIR",
                        help="destination folder (default: " + ", ".join(
                            f"{d.name}: ${d.variable} or $CREPE_DATA/{d.folder}" if d.variable
                            else f"{d.name}: $CREPE_DATA/{d.folder}" for d in catalogue.datasets.values()) + ")")
    parser.add_argument("--yes", "-y", action="store_true", help="do not ask before downloading")
    parser.add_argument("--remove-archives", action="store_true",
                        help="delete each zip once extracted (its sha256 stays recorded)")
    parser.add_argument("--released-text", action="store_true",
                        help="instead of one dataset: fetch the small released text data that are missing from "
                             "their default folders (" + ", ".join(d.name for d in catalogue.datasets.values()
                                                                   if any(f.released_text for f in d.files)) +
                             "); one line per dataset, exit 0 even offline (`make all` runs this first)")
    parser.add_argument("--table", action="store_true",
                        help="print every dataset as a Markdown table: what it unlocks, its folder, how to get it "
                             "(README's)")
    parser.add_argument("--list-targets", action="store_true",
                        help="list one `make data-<dataset>` line per dataset (what `make help` prints)")
    gated = ", ".join(d.name for d in catalogue.datasets.values() if d.gated) or "none"
    parser.epilog = (
        "environment:\n"
        f"  {MIRROR_ENV + '=URL':<30} fetch every file from URL/<file name>\n"
        f"  {OVERRIDE_ENV + '=FILE':<30} JSON: entry name -> fields to replace (mirrors, tests),\n"
        f"  {'':<30} see crepe_utils/download/datasets.py\n"
        f"  {'HF_TOKEN':<30} Hugging Face token for the gated datasets ({gated}) (or `huggingface-cli login`)\n"
        f"Bookkeeping: DEST/{RECORD_NAME} (verified sizes and digests), DEST/<folder>/{MARKER_NAME}.")


def dataset_table() -> str:
    """Every dataset the benchmarks declare, as README's Markdown table: what it is, what it unlocks, its folder and
    how to get it. Built from the declarations alone, so a benchmark's new dataset is a new row."""
    rows = ["| dataset | what it unlocks | folder | how to get it |", "|---|---|---|---|"]
    for d in benchmarks.DATASETS.datasets.values():
        unlocks = benchmarks.unlocks(d.name)
        folder = f"`${d.variable}`" if d.variable else f"`$CREPE_DATA/{d.folder}`"
        if d.gated:
            how = f"accept its terms on the Hugging Face hub, then `HF_TOKEN=... make data-{d.name}`"
        elif all(f.released_text for f in d.files):
            how = f"`make all` online, or `make data-{d.name}`"
        else:
            how = f"`make data-{d.name}`"
        rows.append(f"| {escaping.markdown(d.description)} | {unlocks} | {folder} | {how} |")
    return "\n".join(rows) + "\n"


def _ask() -> bool:
    return input("Proceed? [y/N] ").strip().lower() in ("y", "yes")


def _released_text() -> int:
    for outcome in fetch_released_text():
        print(outcome.line, flush=True)
    return 0


def run(args: argparse.Namespace) -> int:
    if args.table:
        print(dataset_table(), end="")
        return 0
    if args.list_targets:
        for d in benchmarks.DATASETS.datasets.values():
            print(f"data-{d.name}\t{d.description}")
        return 0
    if args.released_text and (args.dataset or args.dest):
        print(error_line("--released-text takes no dataset and no --dest: it fills each dataset's default folder "
                         "(set CREPE_DATA, or each dataset's own variable, to move them)"), file=sys.stderr)
        return 2
    if not args.released_text and not args.dataset:
        print(error_line(f"name a dataset ({', '.join(benchmarks.DATASETS.names)}) or pass --released-text"),
              file=sys.stderr)
        return 2
    try:
        if args.released_text:
            return _released_text()
        entries = benchmarks.DATASETS.files_for(args.dataset)
        dest = Path(args.dest) if args.dest else benchmarks.DATASETS.get(args.dataset).dir()
        confirm = None if args.yes or not sys.stdin.isatty() else _ask
        Downloader(entries, dest, token=hub_token(), remove_archives=args.remove_archives).run(confirm)
    except KeyboardInterrupt:             # not an error: say how to resume (a DownloadError reaches the cli)
        print("interrupted: partial downloads are kept (*.part) and resumed by the next run", file=sys.stderr)
        return 130
    return 0
