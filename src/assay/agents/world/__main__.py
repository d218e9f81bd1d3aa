"""``python -m assay.agents.world``: serve a scenario's world over stdio MCP."""

from assay.agents.world._server import main

raise SystemExit(main())
