#!/usr/bin/env python3
"""Turn the observed captures into the fixtures of crates/ctx-agents/tests/fixtures/observed.

For every fixture tree under fixtures/ and every agent that ran it (captures/<agent>/<fixture>/),
this writes

  observed/<fixture>/ws/...      the tree (files over 8 KiB of numbered lines are generated
  observed/<fixture>/home/...    by the test instead, see meta.json "generate")
  observed/<fixture>/meta.json   cwd, git, the file worked on ("for"), the agents, generated files
  observed/<fixture>/<agent>.txt the rule text that agent sent, as `ctx rules --agent X --text`
                                 prints it: the parts of the request that carry rule text, in
                                 order, joined by a blank line; the workspace and home paths
                                 written {ws} and {home}; runs of generated lines written
                                 {lines LABEL FIRST..LAST}

Run it after run_all.sh (captures/ must hold the extracted captures):
  ./export_fixtures.py ../../crates/ctx-agents/tests/fixtures/observed
"""
import glob
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
CAPTURES = os.path.join(HERE, "captures")
BIG_LINE = re.compile(r"^([A-Z]+)-L(\d{5}) ")

# The capture each agent's expectation comes from, when not the fixture's own name: Copilot
# sends nothing for d-caps at its default prompt limit; the run with a larger limit is used.
CAPTURE_OF = {("copilot", "d-caps"): "d-caps-bigctx"}
# The file each tool-call fixture makes the agent read (the `--for` of ctx rules).
FOR = {
    "e-claude-rules": "repo/src/main.rs",
    "e-copilot-instructions": "repo/src/main.rs",
    "e-gemini-filename": "repo/sub/x.txt",
    "e-gemini-jit": "repo/sub/x.txt",
    "e-cline-rules": "repo/src/main.rs",
}


def last_body(agent, capture):
    files = sorted(glob.glob(os.path.join(CAPTURES, agent, capture, "[0-9]*.json")))
    return json.load(open(files[-1]))["body"] if files else None


def segments(agent, body):
    """The parts of a request body that carry rule text, in order."""
    out = []
    if agent == "codex":
        for item in body.get("input", []):
            for part in item.get("content", []) or []:
                text = part.get("text", "")
                if text.startswith("# AGENTS.md instructions"):
                    out.append(text)
    elif agent == "claude":
        later = []
        for i, msg in enumerate(body.get("messages", [])):
            content = msg.get("content")
            if not isinstance(content, list):
                continue
            for part in content:
                text = part.get("text", "") if part.get("type") == "text" else ""
                if i == 0 and text.startswith("<system-reminder>\nCodebase and user instructions"):
                    out.append(text)
                elif i > 0 and text.startswith("<system-reminder>\nContents of "):
                    later.append(text)
        if later:
            out.append("".join(later))
    elif agent == "gemini":
        system = "".join(p.get("text", "") for p in body.get("systemInstruction", {}).get("parts", []))
        at = system.find("# Contextual Instructions (GEMINI.md)")
        if at >= 0:
            out.append(system[at:])
        first = body["contents"][0]["parts"][0].get("text", "")
        at = first.find("<loaded_context>")
        if at >= 0:
            out.append(first[at:first.rindex("\n</session_context>")])
        for msg in body["contents"][1:]:
            for part in msg.get("parts", []):
                output = part.get("functionResponse", {}).get("response", {}).get("output", "")
                at = output.find("--- Newly Discovered Project Context ---")
                if at >= 0:
                    out.append(output[at:])
    elif agent == "copilot":
        system = body["messages"][0]["content"]
        if isinstance(system, list):
            system = "".join(p.get("text", "") for p in system)
        start = system.index("</tools>\n\n") + len("</tools>\n\n")
        end = system.index("\n<system_notifications>")
        if system[start:end]:
            out.append(system[start:end])
        for msg in body["messages"][1:]:
            content = msg.get("content")
            if msg.get("role") == "user" and isinstance(content, str) and content.startswith("\n<system_reminder>\nCustom instructions from"):
                out.append(content[1:])
    elif agent == "cline":
        system = body["messages"][0]["content"]
        if isinstance(system, list):
            system = "".join(p.get("text", "") for p in system)
        at = system.find("\n\n# Rules\n")
        if at >= 0:
            out.append(system[at + 2:])
    return out


def compress(text):
    """Runs of generated lines written {lines LABEL FIRST..LAST}."""
    lines = text.split("\n")
    out, run = [], None
    for line in lines[:-1]:
        m = BIG_LINE.match(line)
        whole = m and (len(line) == 99 or line.endswith("\u20ac" * 30))
        if whole:
            label, n = m.group(1), int(m.group(2))
            if run and run[0] == label and run[2] == n - 1:
                run[2] = n
                continue
            if run:
                out.append("{lines %s %d..%d}" % tuple(run))
            run = [label, n, n]
            continue
        if run:
            out.append("{lines %s %d..%d}" % tuple(run))
            run = None
        out.append(line)
    if run:
        out.append("{lines %s %d..%d}" % tuple(run))
    out.append(lines[-1])
    return "\n".join(out)


def copy_tree(src, dst, generate, prefix):
    for root, dirs, files in os.walk(src):
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, src)
            data = open(path, "rb").read()
            first = data.split(b"\n", 1)[0].decode("utf-8", "replace")
            m = BIG_LINE.match(first)
            if len(data) > 8192 and m:
                euro = [i + 1 for i, l in enumerate(data.split(b"\n")) if "\u20ac".encode() in l]
                generate.append({"path": prefix + rel, "bytes": len(data), "label": m.group(1),
                                 "euro_line": euro[0] if euro else None})
                continue
            target = os.path.join(dst, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path, target)


def main():
    out_root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "observed")
    for fixture in sorted(os.listdir(FIXTURES)):
        meta = json.load(open(os.path.join(FIXTURES, fixture, "meta.json")))
        agents = [a for a in meta["agents"]
                  if os.path.isdir(os.path.join(CAPTURES, a, CAPTURE_OF.get((a, fixture), fixture)))]
        if not agents:
            continue
        dst = os.path.join(out_root, fixture)
        shutil.rmtree(dst, ignore_errors=True)
        os.makedirs(os.path.join(dst, "ws"), exist_ok=True)
        generate = []
        copy_tree(os.path.join(FIXTURES, fixture, "ws"), os.path.join(dst, "ws"), generate, "ws/")
        if os.path.isdir(os.path.join(FIXTURES, fixture, "home")):
            copy_tree(os.path.join(FIXTURES, fixture, "home"), os.path.join(dst, "home"), generate, "home/")
        home = os.path.join(dst, "home")
        if meta.get("codex_config"):
            os.makedirs(os.path.join(home, ".codex"), exist_ok=True)
            open(os.path.join(home, ".codex", "config.toml"), "w").write(meta["codex_config"])
        if meta.get("gemini_settings"):
            os.makedirs(os.path.join(home, ".gemini"), exist_ok=True)
            json.dump(meta["gemini_settings"], open(os.path.join(home, ".gemini", "settings.json"), "w"), indent=1)
        exported = {"cwd": meta["cwd"], "git": meta.get("git", True), "agents": agents}
        if fixture in FOR:
            exported["for"] = FOR[fixture]
        if generate:
            exported["generate"] = generate
        for agent in agents:
            capture = CAPTURE_OF.get((agent, fixture), fixture)
            body = last_body(agent, capture)
            text = "\n\n".join(segments(agent, body)) if body else ""
            run = "/tmp/ctx-observe/%s-%s" % (agent, capture)
            text = text.replace(run + "/ws", "{ws}").replace(run + "/home", "{home}")
            with open(os.path.join(dst, agent + ".txt"), "w", encoding="utf-8", newline="") as f:
                f.write(compress(text))
        with open(os.path.join(dst, "meta.json"), "w") as f:
            json.dump(exported, f, indent=1)
            f.write("\n")
        print("exported", fixture, ", ".join(agents))


if __name__ == "__main__":
    main()
