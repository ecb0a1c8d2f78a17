"""The `factnote` sub-commands, one module per command group; `bot.cli` ties them together."""
