"""hippo's OpenCode plugin, run by a real JavaScript runtime against the real ``hippo``.

OpenCode loads the plugin with Bun; Node runs the same module (as ``.mjs``, since Node 20
reads a ``.js`` file as CommonJS), calling its ``chat.message`` hook as OpenCode does: with
the session's id and the message's parts, to be changed in place.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import HippoRunner, WorkspaceMaker
from tests.requires import missing

NODE = shutil.which("node")
DRIVER = """
const [plugin, directory, calls] = process.argv.slice(2);
const { HippoMemory } = await import(plugin);
const hooks = await HippoMemory({ directory });
const seen = [];
for (const [sessionID, text] of JSON.parse(calls)) {
  const injected = { type: "text", text: "x", synthetic: true };
  const output = { message: {}, parts: [{ type: "text", text }, injected] };
  await hooks["chat.message"]({ sessionID }, output);
  seen.push(output.parts[0].text);
}
console.log(JSON.stringify(seen));
"""


def test_the_plugin_hands_the_block_over_once_per_session(
    hippo: HippoRunner, make_workspace: WorkspaceMaker, tmp_path: Path, monkeypatch
) -> None:
    if NODE is None:
        missing("no node on PATH to run the OpenCode plugin: .ci/agents.sh needs Node.js too")
    ws = make_workspace(
        "",
        {
            "Home.md": "# Home\n\nThe ledger team's notes.\n",
            "Refunds.md": "# Refunds\n\nRefunds go through the queue.\n",
        },
    )
    # The plugin calls hippo as the installer found it: here, this interpreter.
    monkeypatch.setattr(sys, "argv", ["python"])
    monkeypatch.setenv("PATH", str(Path(NODE).parent))
    run = hippo("hooks", "install", "opencode", cwd=ws)
    plugin = ws / ".opencode" / "plugins" / "hippo.js"
    assert run.code == 0 and run.out.startswith(f"wrote {plugin}")
    module = tmp_path / "hippo.mjs"
    shutil.copyfile(plugin, module)
    calls = [["ses_A", "How do refunds work?"], ["ses_A", "and again"], ["ses_B", "hello"]]
    driver = tmp_path / "driver.mjs"
    driver.write_text(DRIVER)
    result = subprocess.run(
        [NODE, str(driver), module.as_uri(), str(ws), json.dumps(calls)],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
        check=False,
    )
    assert result.returncode == 0, result.stderr
    first, again, other = json.loads(result.stdout)
    assert first.startswith("<hippo-context>\n# Home\n\nThe ledger team's notes.\n")
    assert "- Refunds: Refunds go through the queue." in first
    assert first.endswith("</hippo-context>\nHow do refunds work?")
    assert again == "and again"  # later messages of a session are the person's alone
    assert other.startswith("<hippo-context>\n# Home") and other.endswith("hello")
    record = json.loads((ws / ".hippo" / "sessions" / "opencode-ses_A.json").read_text())
    assert (record["tool"], record["task"]) == ("opencode", "How do refunds work?")
    log = Path(os.environ["HIPPO_HOME"]) / "hooks.log"
    assert not log.exists(), log.read_text()

    assert hippo("hooks", "install", "opencode", cwd=ws).out.startswith("already up to date")
    assert hippo("hooks", "uninstall", "opencode", cwd=ws).out == f"removed {plugin}\n"
    assert not plugin.exists()


def test_a_plugin_file_that_is_not_hippos_is_left_alone(
    hippo: HippoRunner, make_workspace: WorkspaceMaker
) -> None:
    ws = make_workspace()
    plugin = ws / ".opencode" / "plugins" / "hippo.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")
    for verb in ("install", "uninstall"):
        run = hippo("hooks", verb, "opencode", cwd=ws)
        assert run.code == 1 and "is not hippo's plugin" in run.err
    assert plugin.read_text() == "export const Mine = async () => ({})\n"
