// hippo's plugin for OpenCode, written by `hippo hooks install opencode`; `hippo hooks
// uninstall opencode` removes it. OpenCode runs no shell hooks, so this plugin calls hippo's
// hooks itself: on the first message of each session it hands hippo the session and the
// prompt, and puts the block hippo prints (between <hippo-context> markers, which hippo's
// transcript reader strips again) before the person's words. A hippo that fails or is
// missing leaves the message as it was.
import { spawnSync } from "node:child_process";

const HIPPO = __HIPPO_ARGV__;
const started = new Set();

function hook(event, payload) {
  const [program, ...args] = HIPPO;
  const run = spawnSync(program, [...args, "hook", event, "--tool", "opencode"], {
    input: JSON.stringify(payload),
    encoding: "utf8",
    timeout: 30000,
  });
  return run.status === 0 && typeof run.stdout === "string" ? run.stdout : "";
}

export const HippoMemory = async ({ directory }) => ({
  "chat.message": async (input, output) => {
    const id = input && input.sessionID;
    if (!id || started.has(id)) return;
    started.add(id);
    const said = (output.parts || []).filter((p) => p.type === "text" && !p.synthetic);
    if (said.length === 0) return;
    const payload = {
      session_id: id,
      cwd: directory,
      source: "startup",
      prompt: said.map((p) => p.text).join("\n\n"),
    };
    const block = hook("session-start", payload) + hook("prompt", payload);
    if (block) said[0].text = block + said[0].text;
  },
});
