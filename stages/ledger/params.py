"""Parameters of the ledger stage."""
from __future__ import annotations

from pydantic import Field

from stages.common.runtime.params import Strict


class LedgerStep(Strict):
    title: str = Field(min_length=1, description="title of reports/index.html")


class LedgerParams(Strict):
    build: LedgerStep


PARAMS = LedgerParams
