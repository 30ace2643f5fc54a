"""XLA's HLO modules as profiles carry them (`Hlo Proto` stats of `/host:metadata`), and what each op costs."""
