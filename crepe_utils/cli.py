"""Command line: ``python -m crepe_utils <command> ...`` (also installed as ``crepe-utils``).

Each command lives in the module that does the work: the module defines
``add_arguments(parser)`` and ``run(args) -> int`` (the exit status). This file lists the commands about
every benchmark; a benchmark folder may add its own (``COMMANDS`` in its package: CREPE's ``validate``), and
``python -m crepe_utils <benchmark> ...`` is ``evaluate --benchmark <benchmark> ...``. The registry is read only
when a command is not one of these, so the commands here start without it.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from .errors import TRACEBACK_ENV, error_line, exit_status  # noqa: F401 - TRACEBACK_ENV: cli's name for it

#: command → (module, one-line help)
COMMANDS: dict[str, tuple[str, str]] = {
    "download": ("crepe_utils.commands.download", "download and verify a dataset (download --help lists them)"),
    "models": ("crepe_utils.commands.models", "list the checkpoints and each benchmark's roster"),
    "evaluate": ("crepe_utils.evaluate_command", "evaluate one model on one benchmark"),
    "evaluate-paper": ("crepe_utils.runs.scheduling", "evaluate the papers' models on their benchmarks (make evaluate)"),
    "check": ("crepe_utils.commands.checks", "check every claim of the papers; non-zero exit on failure"),
    "toy": ("crepe_utils.toy.pipeline", "generate the toy world, train a tiny CLIP, evaluate it"),
    "compare": ("crepe_utils.versus.command", "is B better than A? two results paired query by query"),
    "standing": ("crepe_utils.versus.command", "where results stand among the field's 202 checkpoints"),
}


def all_commands() -> dict[str, tuple[str, str]]:
    """These commands, each benchmark folder's own, and one per benchmark (``evaluate --benchmark <it>``)."""
    from . import benchmarks     # the registry: only for commands that are not the ones above
    out = dict(COMMANDS)
    out.update(benchmarks.commands())
    out.update({name: ("crepe_utils.evaluate_command", f"evaluate one model on {name} (evaluate --benchmark {name})")
                for name in benchmarks.BENCHMARKS})
    return out


def _usage() -> str:
    commands = all_commands()
    width = max(map(len, commands))
    lines = ["usage: python -m crepe_utils <command> [options]", "", "commands:"]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in commands.items()]
    lines += ["", "python -m crepe_utils <command> --help shows a command's options."]
    return "\n".join(lines)


def _command(command: str) -> tuple[str, str] | None:
    return COMMANDS.get(command) or all_commands().get(command)


def build_parser(command: str) -> argparse.ArgumentParser:
    """The parser of one command (only that command's module is imported)."""
    module, help_text = _command(command)
    parser = argparse.ArgumentParser(prog=f"python -m crepe_utils {command}", description=help_text)
    mod = importlib.import_module(module)
    adder = getattr(mod, f"add_arguments_{command.replace('-', '_')}", None)
    if adder is None and command not in COMMANDS and module == "crepe_utils.evaluate_command":
        mod.add_arguments(parser, benchmark=command)      # python -m crepe_utils <benchmark> ...
    else:
        (adder or mod.add_arguments)(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(_usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if _command(command) is None:
        print(error_line(f"unknown command {command!r}; choose one of {', '.join(all_commands())} "
                         "(python -m crepe_utils --help describes them)"), file=sys.stderr)
        return 2
    args = build_parser(command).parse_args(rest)
    mod = importlib.import_module(_command(command)[0])
    runner = getattr(mod, f"run_{command.replace('-', '_')}", None) or mod.run
    return exit_status(lambda: runner(args))      # the one place a user error is printed


if __name__ == "__main__":
    sys.exit(main())
