"""``mapeval profile``: a function-level profiler for the accelerator-store study.

Kim & Edwards profiled programs with a Pin tool; mapeval ships a Valgrind tool instead
(``mapeval_xfer.c``, built on first use by :mod:`mapping.profiler.build`) that writes the
same four logs (``function``, ``subcalls``, ``icount``, ``xfers``) for
``dsl.importers.profile`` to import: for every byte an invocation reads, the invocation that last
wrote it; per invocation its arithmetic/logic and other instructions; the call tree.
"""
from mapping.profiler.build import (ToolchainError, Toolchain, build_tool, cache_root,
                                    find_toolchain)
from mapping.profiler.run import LOGS, ProfileRun, exclude_functions, profile_program

__all__ = ["LOGS", "ProfileRun", "Toolchain", "ToolchainError", "build_tool", "cache_root",
           "exclude_functions", "find_toolchain", "profile_program"]
