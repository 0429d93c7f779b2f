"""MCP server evaluation harness."""

import argparse
import asyncio
import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from anthropic import Anthropic

from connections import create_connection

EVALUATION_PROMPT = """You are an AI assistant with access to tools.
When given a task, you MUST use the available tools, then answer inside <response> tags."""


def parse_evaluation_file(path):
    root = ET.parse(path).getroot()
    return [{"question": qa.findtext("question"), "answer": qa.findtext("answer")} for qa in root.iter("qa_pair")]


async def run_one(client, connection, qa, model):
    tools = await connection.list_tools()
    start = time.time()
    response = await asyncio.to_thread(
        client.messages.create, model=model, max_tokens=4096, system=EVALUATION_PROMPT,
        messages=[{"role": "user", "content": qa["question"]}], tools=tools)
    text = "".join(b.text for b in response.content if b.type == "text")
    m = re.search(r"<response>(.*?)</response>", text, re.DOTALL)
    return {"question": qa["question"], "expected": qa["answer"], "actual": m.group(1).strip() if m else None,
            "duration": time.time() - start}


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("eval_file", type=Path)
    parser.add_argument("-t", "--transport", default="stdio")
    parser.add_argument("-m", "--model", default="claude-sonnet-4-5")
    parser.add_argument("-c", "--command")
    parser.add_argument("-a", "--args", nargs="+")
    parser.add_argument("-u", "--url")
    args = parser.parse_args()
    client = Anthropic()
    async with create_connection(args.transport, args.command, args.args, args.url) as conn:
        results = [await run_one(client, conn, qa, args.model) for qa in parse_evaluation_file(args.eval_file)]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
