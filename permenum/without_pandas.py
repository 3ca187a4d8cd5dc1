"""The `permenum` command's process finds no pandas.

The command never uses pandas, but where it is installed pyarrow imports it on the first array it
makes, only to ask whether its input is a DataFrame: 0.3 s of every command (here and on an H100
node, pandas 3), a sixth of `enumerate nqueens 16`'s overhead on PoCL. With this finder first on
``sys.meta_path`` the import fails as where pandas is not installed, which pyarrow expects; a library
user's process is left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType


class WithoutPandas:
    """A meta path finder that refuses pandas and its submodules."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if fullname.partition(".")[0] == "pandas":
            raise ModuleNotFoundError(f"No module named {fullname!r} (not used by the permenum command)", name=fullname)
        return None
