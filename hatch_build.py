"""Build hook: compile the optional C accelerator ``agentlog.values._speedups``.

The accelerator only speeds up ``agentlog.values.snapshot``; the pure-Python walker has the
same semantics and is used whenever the extension is missing. So a machine without a C
compiler still installs agentlog, with a warning. Set ``AGENTLOG_NO_SPEEDUPS=1`` to skip it.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "src/agentlog/values/_speedups.c"
MODULE = "agentlog.values._speedups"


class SpeedupsBuildHook(BuildHookInterface):  # type: ignore[type-arg]  # generic only in stubs
    """Compile the accelerator into the wheel (or next to the sources for editable installs)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        """Compile the extension; on failure keep the pure-Python build."""
        if self.target_name != "wheel" or os.environ.get("AGENTLOG_NO_SPEEDUPS"):
            return
        editable = version == "editable"
        out_dir = Path(self.root) / "src" if editable else Path(tempfile.mkdtemp())
        try:
            built = _compile(Path(self.root), out_dir)
        except Exception as exc:  # any toolchain failure: fall back to pure Python
            self.app.display_warning(
                f"agentlog: C accelerator not built ({exc}); the pure-Python snapshot is used"
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if not editable:
            build_data["force_include"][str(built)] = f"agentlog/values/{built.name}"


def _compile(root: Path, out_dir: Path) -> Path:
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    extension = Extension(MODULE, [str(root / SOURCE)], extra_compile_args=["-O2"])
    command = build_ext(Distribution({"name": "agentlog", "ext_modules": [extension]}))
    command.build_lib = str(out_dir)
    command.build_temp = tempfile.mkdtemp()
    command.ensure_finalized()
    command.run()
    return Path(command.get_ext_fullpath(MODULE))
