"""Command line: ``python -m crepe_utils <command> ...`` (also installed as ``crepe-utils``).

Each command lives in the module that does the work: the module defines
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status). This file only lists them.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .errors import TRACEBACK_ENV, error_line, exit_status  # noqa: F401 - TRACEBACK_ENV: cli's name for it

#: command → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "download": ("crepe_utils.suite.download", "download and verify CREPE, Visual Genome, Winoground or SugarCrepe"),
    "validate": ("crepe_utils.benchmarks.crepe.validation", "validate a CREPE data folder (and its images)"),
    "models": ("crepe_utils.suite.models", "list the model registry"),
    "evaluate": ("crepe_utils.evaluate_command", "evaluate one model on one benchmark (CREPE, Winoground, SugarCrepe)"),
    "evaluate-paper": ("crepe_utils.runs.scheduling", "evaluate the papers' models on CREPE and SugarCrepe (make evaluate)"),
    "check": ("crepe_utils.suite.checks", "check every claim of the papers; non-zero exit on failure"),
    "winoground": ("crepe_utils.evaluate_command", "evaluate one model on Winoground (evaluate --benchmark winoground)"),
    "toy": ("crepe_utils.toy.pipeline", "generate the toy world, train a tiny CLIP, evaluate it"),
}


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: python -m crepe_utils <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "python -m crepe_utils <command> --help shows a command's options."]
    return "\n".join(lines)


def build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one command (only that command's module is imported)."""
    module, help_text = COMMANDS[command]
    parser = argparse.ArgumentParser(prog=f"python -m crepe_utils {command}", description=help_text)
    mod = importlib.import_module(module)
    adder = getattr(mod, f"add_arguments_{command.replace('-', '_')}", None) or mod.add_arguments
    adder(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(error_line(f"unknown command {command!r}; choose one of {', '.join(COMMANDS)} "
                         "(python -m crepe_utils --help describes them)"), file=sys.stderr)
        return 2
    args = build_parser(command).parse_args(rest)
    mod = importlib.import_module(COMMANDS[command][0])
    runner = getattr(mod, f"run_{command.replace('-', '_')}", None) or mod.run
    return exit_status(lambda: runner(args))      # the one place a user error is printed


if __name__ == "__main__":
    sys.exit(main())
