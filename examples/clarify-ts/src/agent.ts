// The seed's requirements-clarification agent, written the way a team would write
// it in its own codebase: the official `openai` and `@modelcontextprotocol/sdk`
// packages, nothing of passhat imported. passhat runs it once per run as a command
// agent and hands it, in environment variables:
//
//   PASSHAT_INPUT             a file holding the case input as JSON (also on stdin)
//   PASSHAT_MCP_URL           the run's tools, served over MCP (Streamable HTTP)
//   PASSHAT_MCP_TOKEN         the bearer token for that server
//   PASSHAT_OPENAI_BASE_URL   the run's OpenAI-compatible model endpoint
//   PASSHAT_OPENAI_API_KEY    its per-run token (the real key stays in passhat)
//   PASSHAT_LABELS            the suite's annotation labels, a JSON array
//   PASSHAT_MAX_TURNS         model turns this run may take
//
// What it prints on stdout (one JSON value) is stored as the run's output; what it
// leaves in the environment through `update_ticket` is graded.

import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import OpenAI from "openai";
import type {
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from "openai/resources/chat/completions";

const SYSTEM = `You are a requirements-clarification agent. You receive one product ticket: a
key, a title, a description and numbered acceptance criteria (AC).

Your job is to make the ticket ready for work:

1. Read the ticket carefully. Call \`get_ticket\` if you need it again.
2. If a criterion depends on a business fact that the ticket does not state
   (a policy, a limit, an existing system's behaviour), call
   \`query_background\` with a short query. Do not guess such facts.
3. Check every AC against the description and against every other AC:
   - \`conflict\`: the AC cannot hold together with another AC. Annotate the AC
     that departs from the description; when the description does not say
     which one is right, annotate both;
   - \`inconsistent_with_description\`: the AC contradicts what the description
     (or the background you looked up) says;
   - \`unverifiable\`: no test could decide whether the AC holds (vague words such
     as "fast", "user-friendly", "as appropriate", with no measurable bar).
   Annotate only real problems; a sound AC gets no annotation. One AC may carry
   several labels. Use only these labels: $labels.
4. Finish with exactly one call to \`update_ticket\` carrying:
   - \`goal\`: one or two sentences on the outcome the ticket is for;
   - \`scope_in\`: what the work includes, as short items;
   - \`scope_out\`: what it explicitly does not include, as short items;
   - \`annotations\`: a list of \`{"ac": <AC number>, "label": <label>, "note": <why>}\`.

Write the goal, scope and notes in the language of the ticket. After
\`update_ticket\` succeeds, answer with a one-line summary and no further tool
call.
`;

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(`${name} is not set: run this agent through passhat`);
  }
  return value;
}

async function connectTools(): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(required("PASSHAT_MCP_URL")), {
    requestInit: { headers: { Authorization: `Bearer ${required("PASSHAT_MCP_TOKEN")}` } },
  });
  const client = new Client({ name: "clarify-ts", version: "0.1.0" });
  await client.connect(transport);
  return client;
}

function toolText(result: Awaited<ReturnType<Client["callTool"]>>): string {
  const blocks = Array.isArray(result.content) ? result.content : [];
  return blocks.map((b) => (b.type === "text" ? b.text : JSON.stringify(b))).join("\n");
}

async function main(): Promise<void> {
  const input = JSON.parse(readFileSync(required("PASSHAT_INPUT"), "utf8"));
  const ticket = input?.ticket ?? input;
  const labels: string[] = JSON.parse(process.env.PASSHAT_LABELS ?? "[]");
  const maxTurns = Number(process.env.PASSHAT_MAX_TURNS ?? "10");

  const mcp = await connectTools();
  const listed = await mcp.listTools();
  const tools: ChatCompletionTool[] = listed.tools.map((t) => ({
    type: "function",
    function: {
      name: t.name,
      description: t.description ?? "",
      parameters: t.inputSchema as Record<string, unknown>,
    },
  }));
  // retries are passhat's job (it retries the real model with backoff)
  const openai = new OpenAI({
    baseURL: required("PASSHAT_OPENAI_BASE_URL"),
    apiKey: required("PASSHAT_OPENAI_API_KEY"),
    maxRetries: 0,
  });

  const messages: ChatCompletionMessageParam[] = [
    { role: "system", content: SYSTEM.replace("$labels", labels.join(", ")) },
    {
      role: "user",
      content: `Here is the ticket to clarify, as JSON:\n\n${JSON.stringify(ticket, null, 2)}\n`,
    },
  ];
  let result: Record<string, unknown> = { final: null, stopped: "turn limit", turns: maxTurns };
  for (let turn = 0; turn < maxTurns; turn++) {
    const completion = await openai.chat.completions.create({
      model: process.env.PASSHAT_MODEL ?? "passhat",
      messages,
      tools,
    });
    const message = completion.choices[0].message;
    messages.push(message);
    const calls = (message.tool_calls ?? []).filter((c) => c.type === "function");
    if (calls.length === 0) {
      result = { final: message.content, stopped: "answered", turns: turn + 1 };
      break;
    }
    for (const call of calls) {
      const outcome = await mcp.callTool({
        name: call.function.name,
        arguments: JSON.parse(call.function.arguments || "{}"),
      });
      messages.push({ role: "tool", tool_call_id: call.id, content: toolText(outcome) });
    }
  }
  await mcp.close();
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`clarify-ts: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
