"""Play against any agent, or watch agents play: a local web table and a terminal table."""
