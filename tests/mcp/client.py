"""The official MCP Python SDK (PyPI `mcp`) as an assistant's client of gpudash's MCP server.

Usage: client.py stdio GPUDASH_BINARY SITE_URL POD_NAMESPACE POD_NAME
       client.py http MCP_URL TOKEN POD_NAMESPACE POD_NAME
stdio starts `GPUDASH_BINARY mcp --server SITE_URL`; http speaks the streamable HTTP transport to
the site's `/mcp` with a bearer TOKEN ("-" for none). Either way it initialises, lists the tools,
calls each and prints what it saw as one JSON object (the Rust test asserts on it).
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


def seen(result):
    texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
    return {"isError": bool(result.is_error), "structured": result.structured_content, "text": "\n".join(texts)}


async def ask(read, write, namespace, pod):
    out = {}
    async with ClientSession(read, write) as session:
        init = await session.initialize()
        out["protocol"] = init.protocol_version
        out["server"] = init.server_info.name
        tools = await session.list_tools()
        out["tools"] = {t.name: bool(t.annotations and t.annotations.read_only_hint) for t in tools.tools}
        out["gpu_overview"] = seen(await session.call_tool("gpu_overview", {}))
        out["why_pending"] = seen(await session.call_tool("why_pending", {"namespace": namespace, "pod": pod}))
        out["why_pending_ja"] = seen(
            await session.call_tool("why_pending", {"namespace": namespace, "pod": pod, "lang": "ja"})
        )
        out["why_unknown"] = seen(await session.call_tool("why_pending", {"pod": "no-such-pod"}))
        out["will_it_fit"] = seen(await session.call_tool("will_it_fit", {"gpu_count": "1", "memory_request": "2Gi"}))
        out["diagnoses"] = seen(await session.call_tool("diagnoses", {"severity": "critical"}))
        out["gpu_hours"] = seen(await session.call_tool("gpu_hours", {"by": "namespace"}))
        out["node_history"] = seen(await session.call_tool("node_history", {"node": "orin-agx-01", "range": "1h"}))
    return out


async def main(mode, where, site_or_token, namespace, pod):
    if mode == "stdio":
        params = StdioServerParameters(command=where, args=["mcp", "--server", site_or_token, "--lang", "en"])
        async with stdio_client(params) as (read, write):
            out = await ask(read, write, namespace, pod)
    else:
        import httpx2

        headers = {"Accept-Language": "en"}
        if site_or_token != "-":
            headers["Authorization"] = "Bearer " + site_or_token
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(where, http_client=http) as streams:
                out = await ask(streams[0], streams[1], namespace, pod)
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
