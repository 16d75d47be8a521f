# A console agent with memory: type to it, it remembers across sessions and reboots.
#
# On a board or the virtual board (claw_memory deployed or frozen in; aiohttp for a real model):
#     mpremote cp examples/console_agent.py :main.py    # runs at every boot
#     mpremote                                          # then Ctrl-D (soft reset) to start it
# or, to try it without main.py: `mpremote cp examples/console_agent.py :` then `mpremote`
# and `import console_agent` at the REPL. (`mpremote run` sends the script but not your
# keystrokes: input() would wait for ever.)
# Under the unix port, from the repository root:
#     MICROPYPATH=.frozen:. .venv/bin/micropython examples/console_agent.py [DATA_ROOT]
#
# Lines go to the agent; "/session new|list|switch|delete ..." manage the chat's sessions
# ("/session new --incognito" one that writes nothing); "/memory undo" takes back the last
# change to long-term memory, "/memory why <id>" says where a memory came from; "/quit" (or
# the end of input) stops. Without an API key the model is OfflineLLM, which
# stores what you ask it to remember and lists what it knows.
import asyncio
import json
import sys

import claw_memory
from claw_memory.agent import Agent
from claw_memory.core import Request
from claw_memory.reply import Reply

API_KEY = ""  # e.g. "sk-...": then OpenAI below is used (the board needs Wi-Fi and aiohttp)
BASE_URL = "https://api.openai.com/v1"
MODEL = "gpt-4o-mini"
CHANNEL, CHAT = "uart", "console"
SYSTEM = "You are Pip, a helpful assistant on a small board. Answer briefly."


class OfflineLLM:
    """Stores what follows "remember", lists what it knows on "what do you know"."""

    backend = "openai"

    async def chat(self, system, messages, tools=None):
        last = messages[-1]
        if not tools:  # background extraction asks without tools: nothing to extract
            return Reply.answer(self.backend, '{"intent":"none","memories":[]}')
        if last["role"] == "tool":
            result = json.loads(last["content"])
            if "items" in result:
                facts = [i["content"] for i in result["items"]]
                return Reply.answer(self.backend, "I know: " + "; ".join(facts) if facts else "Nothing yet.")
            if not result.get("ok"):  # e.g. refused in an incognito session
                return Reply.answer(self.backend, "I could not: " + result.get("message", result.get("error", "")))
            return Reply.answer(self.backend, "Noted.")
        text = last["content"]
        low = text.lower()
        if low.startswith("remember"):
            fact = text[8:].strip(" :,") or text
            return Reply.calls(self.backend, [("memory_store", {"content": fact, "tags": "note"})])
        if "what do you know" in low:
            return Reply.calls(self.backend, [("memory_list", {})])
        return Reply.answer(self.backend, "You said: " + text)


def make_llm():
    if API_KEY:
        from claw_memory.llm import OpenAI

        return OpenAI(base_url=BASE_URL, model=MODEL, api_key=API_KEY)
    return OfflineLLM()


async def main(root=None):
    llm = make_llm()
    mem = claw_memory.open(root, llm=llm)  # None: /sd, /flash, or the current directory
    agent = Agent(llm, mem.providers(), mem.hooks(), mem.tools(), SYSTEM, publish=print)
    print("claw_memory %s, data root %s; /quit to stop" % (claw_memory.__version__, mem.layout.root))
    while True:
        try:
            line = input("you> ").strip()
        except EOFError:
            break
        if line == "/quit":
            break
        if line.startswith("/session"):
            print(mem.session_command(CHANNEL, CHAT, line[len("/session"):]))
        elif line.startswith("/memory"):  # /memory undo, /memory why <memory_id>
            print(mem.memory_command(CHANNEL, CHAT, line[len("/memory"):]))
        elif line:
            sid = mem.chats.session_id(CHANNEL, CHAT)
            print("pip>", await agent.run(Request(line, sid, CHANNEL, CHAT)))
    mem.close()


asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None))
