"""What every floor of the house shares: the params error and the strict params base.

Kept in the library (the ground floor) so that library modules that validate their own inputs
(:mod:`stages.common.claims`, the corpora's generators) raise the same :class:`ParamsError` and
build on the same :class:`Strict` as :mod:`stages.common.runtime.params`, which re-exports both,
without importing the runtime above them.
"""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ParamsError(ValueError):
    """A parameter in params.yaml is missing, unknown or has a value that is not allowed."""


class Strict(BaseModel):
    """Base for every params model: unknown keys and silent coercions are errors."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
