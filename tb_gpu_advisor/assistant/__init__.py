"""The advisor for programs and AI assistants: `tb-gpu-advisor mcp LOGDIR...`, a read-only Model Context Protocol
server confined to its logdirs, whose answers are small (verdict, top findings, the numbers behind them) and page."""
