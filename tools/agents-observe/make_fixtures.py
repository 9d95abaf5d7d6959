#!/usr/bin/env python3
"""Generate the fixture trees under fixtures/ (deterministic; safe to rerun).

Each fixture is a directory fixtures/<name>/ with
  ws/        copied to $W/ws ; ws/repo becomes a fresh git repo (unless meta git=false)
  home/      copied over the fresh $HOME (optional)
  meta.json  {"cwd": path relative to ws, "prompt": str, "agents": [...],
              "codex_config": extra TOML, "gemini_settings": dict merged into settings.json,
              "git": bool}
In every copied file and in the prompt, __WS__ is replaced by the absolute path
of the copied ws/ and __HOME__ by the fresh $HOME.

Marker convention: every rule file holds a line MARKER-<WHERE>-<KIND> so a
capture can be grepped for which files were loaded.
"""
import json
import os
import shutil

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")

# rule-file kinds, their path relative to a directory, and their marker suffix
KINDS = {
    "AGENTS.md": "AGENTS",
    "AGENTS.override.md": "AGENTSOVERRIDE",
    "CLAUDE.md": "CLAUDE",
    "CLAUDE.local.md": "CLAUDELOCAL",
    ".claude/CLAUDE.md": "DOTCLAUDE",
    "GEMINI.md": "GEMINI",
    ".github/copilot-instructions.md": "COPILOT",
    ".clinerules": "CLINERULES",
    ".cursorrules": "CURSORRULES",
}
BASIC = ["AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", ".clinerules"]
ALL_AGENTS = ["codex", "gemini", "claude", "copilot", "cline"]


def w(path, text, mode="w", newline="\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(text, bytes):
        with open(path, "wb") as f:
            f.write(text)
    else:
        with open(path, "w", encoding="utf-8", newline=newline) as f:
            f.write(text)


def rule_files(d, where, kinds):
    for k in kinds:
        w(os.path.join(d, k), "# %s rules (%s)\nMARKER-%s-%s\n" % (where.lower(), k, where, KINDS[k]))


def fixture(name, meta):
    d = os.path.join(ROOT, name)
    if os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(os.path.join(d, "ws", "repo"))
    meta.setdefault("cwd", "repo")
    meta.setdefault("prompt", "say hi")
    meta.setdefault("agents", ALL_AGENTS)
    meta.setdefault("git", True)
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    return os.path.join(d, "ws"), os.path.join(d, "home")


def big_lines(total_bytes, label, euro_line=None):
    """Numbered 100-byte lines 'LABEL-L00001 xxxx...\\n'; optionally one line of 3-byte chars."""
    out = []
    n = 0
    size = 0
    while size < total_bytes:
        n += 1
        if euro_line and n == euro_line:
            line = "%s-L%05d " % (label, n) + "\u20ac" * 30 + "\n"
        else:
            head = "%s-L%05d " % (label, n)
            line = head + "x" * (99 - len(head)) + "\n"
        out.append(line)
        size += len(line.encode())
    return "".join(out)


def main():
    os.makedirs(ROOT, exist_ok=True)

    # a. one root rule file of every kind
    ws, home = fixture("a-root", {})
    rule_files(os.path.join(ws, "repo"), "ROOT", [k for k in KINDS if k != "AGENTS.override.md"])

    # b. parent / root / cwd(sub) / below-cwd / sibling; started in sub/
    for name, git in (("b-nested", True), ("b-nested-nogit", False)):
        ws, home = fixture(name, {"cwd": "repo/sub", "git": git})
        rule_files(ws, "PARENT", BASIC)
        rule_files(os.path.join(ws, "repo"), "ROOT", BASIC)
        rule_files(os.path.join(ws, "repo", "sub"), "SUB", BASIC)
        rule_files(os.path.join(ws, "repo", "sub", "deeper"), "DEEPER", BASIC)
        rule_files(os.path.join(ws, "repo", "other"), "SIBLING", BASIC)
        w(os.path.join(ws, "repo", "sub", "deeper", "file.txt"), "deeper file\n")

    # c. imports
    ws, home = fixture("c-imports", {"agents": ["codex", "gemini", "claude", "copilot", "cline"]})
    repo = os.path.join(ws, "repo")
    main_text = (
        "# Import test\n"
        "MARKER-ROOT-MAIN\n"
        "@chain1.md\n"
        "Inline mid-line import: see @inline.md for details.\n"
        "Code span: `@codespan.md` should not import.\n"
        "```\n"
        "@fenced.md\n"
        "```\n"
        "~~~\n"
        "@tildefence.md\n"
        "~~~\n"
        "    @indented.md\n"
        "<!-- @incomment.md -->\n"
        "Missing: @missing.md\n"
        "Outside repo: @../outside.md\n"
        "Absolute: @__WS__/abs/abs.md\n"
        "Home: @~/home-imp.md\n"
        "Non-markdown: @data.txt\n"
        "No extension: @noext\n"
        "Relative dir: @docs/rel.md\n"
        "Cycle: @cycle-a.md\n"
        "Duplicate: @dup.md and again @dup.md\n"
        "Email-like: user@example.com\n"
        "MARKER-ROOT-MAIN-END\n"
    )
    for f in ("CLAUDE.md", "GEMINI.md", "AGENTS.md"):
        w(os.path.join(repo, f), main_text)
    for i in range(1, 9):
        nxt = "@chain%d.md\n" % (i + 1) if i < 8 else ""
        w(os.path.join(repo, "chain%d.md" % i), "MARKER-CHAIN-%d (depth %d)\n%sMARKER-CHAIN-%d-END\n" % (i, i, nxt, i))
    for f in ("inline", "codespan", "fenced", "tildefence", "indented", "incomment", "dup"):
        w(os.path.join(repo, f + ".md"), "MARKER-IMPORT-%s\n" % f.upper())
    w(os.path.join(repo, "data.txt"), "MARKER-IMPORT-DATATXT\n")
    w(os.path.join(repo, "noext"), "MARKER-IMPORT-NOEXT\n")
    w(os.path.join(repo, "docs", "rel.md"), "MARKER-IMPORT-DOCSREL\n@sibling.md\n")
    w(os.path.join(repo, "docs", "sibling.md"), "MARKER-IMPORT-DOCSSIBLING (relative to docs/)\n")
    w(os.path.join(repo, "sibling.md"), "MARKER-WRONG-SIBLING (resolved relative to root, wrong)\n")
    w(os.path.join(repo, "cycle-a.md"), "MARKER-CYCLE-A\n@cycle-b.md\n")
    w(os.path.join(repo, "cycle-b.md"), "MARKER-CYCLE-B\n@cycle-a.md\n")
    w(os.path.join(ws, "outside.md"), "MARKER-IMPORT-OUTSIDE (../outside.md)\n")
    w(os.path.join(ws, "abs", "abs.md"), "MARKER-IMPORT-ABSOLUTE\n")
    w(os.path.join(home, "home-imp.md"), "MARKER-IMPORT-HOME (~/home-imp.md)\n")

    # c1. one rule file at a time with the import text (which files does Copilot expand?)
    for kind in ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md"):
        tag = KINDS[kind].lower()
        src = os.path.join(ROOT, "c-imports")
        wsk, homek = fixture("c-imports-only-" + tag, {"agents": ["copilot"]})
        shutil.rmtree(wsk)
        shutil.copytree(os.path.join(src, "ws"), wsk)
        for f in ("CLAUDE.md", "GEMINI.md", "AGENTS.md"):
            os.remove(os.path.join(wsk, "repo", f))
        w(os.path.join(wsk, "repo", kind), main_text)

    # c2. the same imports with Claude's "external imports" approval pre-seeded in ~/.claude.json
    src = os.path.join(ROOT, "c-imports")
    ws2, home2 = fixture("c-imports-approved", {"agents": ["claude"]})
    shutil.rmtree(ws2)
    shutil.copytree(os.path.join(src, "ws"), ws2)
    shutil.copytree(os.path.join(src, "home"), home2)
    w(os.path.join(home2, ".claude.json"), json.dumps({"projects": {"__WS__/repo": {
        "hasClaudeMdExternalIncludesApproved": True, "hasClaudeMdExternalIncludesWarningShown": True,
        "hasTrustDialogAccepted": True}}}, indent=1) + "\n")

    # d. size caps
    ws, home = fixture("d-caps", {})
    repo = os.path.join(ws, "repo")
    w(os.path.join(repo, "AGENTS.md"), big_lines(40 * 1024, "AG", euro_line=328))
    w(os.path.join(repo, "CLAUDE.md"), big_lines(200 * 1024, "CL"))
    w(os.path.join(repo, "GEMINI.md"), big_lines(200 * 1024, "GE"))
    w(os.path.join(repo, ".github", "copilot-instructions.md"), big_lines(200 * 1024, "CP"))
    w(os.path.join(repo, ".clinerules"), big_lines(200 * 1024, "CN"))
    # d2. Codex budget shared between root and cwd files
    ws, home = fixture("d-caps-split", {"cwd": "repo/sub", "agents": ["codex"]})
    w(os.path.join(ws, "repo", "AGENTS.md"), big_lines(20 * 1024, "ROOT"))
    w(os.path.join(ws, "repo", "sub", "AGENTS.md"), big_lines(20 * 1024, "SUB"))
    # d3. very big files for Claude / Gemini (1 MiB)
    ws, home = fixture("d-caps-huge", {"agents": ["claude", "gemini"]})
    w(os.path.join(ws, "repo", "CLAUDE.md"), big_lines(1024 * 1024, "CL"))
    w(os.path.join(ws, "repo", "GEMINI.md"), big_lines(1024 * 1024, "GE"))

    # e. scoping: Claude .claude/rules with paths, lazily loaded nested CLAUDE.md
    ws, home = fixture("e-claude-rules", {
        "agents": ["claude"],
        "prompt": 'read the file MOCKTOOL:Read:{"file_path": "__WS__/repo/src/main.rs"}ENDTOOL',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", ["CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md"])
    w(os.path.join(repo, ".claude", "rules", "always.md"), "# always\nMARKER-RULE-ALWAYS (no frontmatter)\n")
    w(os.path.join(repo, ".claude", "rules", "rust.md"),
      '---\npaths: ["src/**/*.rs"]\n---\n# rust rule\nMARKER-RULE-RUST (paths src/**/*.rs)\n')
    w(os.path.join(repo, ".claude", "rules", "python.md"),
      '---\npaths:\n  - "**/*.py"\n---\nMARKER-RULE-PYTHON (paths **/*.py)\n')
    w(os.path.join(repo, ".claude", "rules", "nested", "deep.md"), "MARKER-RULE-NESTED-DIR\n")
    w(os.path.join(repo, "src", "CLAUDE.md"), "# src rules\nMARKER-SRC-CLAUDE (nested, lazy?)\n")
    w(os.path.join(repo, "src", "main.rs"), "fn main() { println!(\"hi\"); }\n")
    w(os.path.join(repo, "app.py"), "print('hi')\n")
    w(os.path.join(home, ".claude", "CLAUDE.md"), "# user memory\nMARKER-USER-CLAUDE (~/.claude/CLAUDE.md)\n")
    w(os.path.join(home, ".claude", "rules", "user-rule.md"), "MARKER-USER-RULE (~/.claude/rules)\n")

    # e. Codex: overrides, fallback filenames, global AGENTS.md
    ws, home = fixture("e-codex-override", {
        "agents": ["codex"], "cwd": "repo/sub/deep",
        "codex_config": 'project_doc_fallback_filenames = ["CLAUDE.md", "GEMINI.md"]\n',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", ["AGENTS.override.md", "AGENTS.md", "CLAUDE.md"])
    rule_files(os.path.join(repo, "sub"), "SUB", ["CLAUDE.md", "GEMINI.md"])
    rule_files(os.path.join(repo, "sub", "deep"), "DEEP", ["AGENTS.md", "AGENTS.override.md"])
    w(os.path.join(home, ".codex", "AGENTS.md"), "MARKER-GLOBAL-AGENTS (CODEX_HOME/AGENTS.md)\n")
    w(os.path.join(home, ".codex", "AGENTS.override.md"), "MARKER-GLOBAL-AGENTSOVERRIDE\n")
    # e. Codex: empty override / global only
    ws, home = fixture("e-codex-global", {"agents": ["codex"]})
    rule_files(os.path.join(ws, "repo"), "ROOT", ["AGENTS.md"])
    w(os.path.join(home, ".codex", "AGENTS.md"), "MARKER-GLOBAL-AGENTS (CODEX_HOME/AGENTS.md)\n")
    # e. Codex: an empty AGENTS.override.md next to a real AGENTS.md; whitespace-only AGENTS.md in sub
    ws, home = fixture("e-codex-empty-override", {"agents": ["codex"], "cwd": "repo/sub"})
    rule_files(os.path.join(ws, "repo"), "ROOT", ["AGENTS.md"])
    w(os.path.join(ws, "repo", "AGENTS.override.md"), "")
    w(os.path.join(ws, "repo", "sub", "AGENTS.md"), "  \n\n")
    w(os.path.join(ws, "repo", "sub", "CLAUDE.md"), "MARKER-SUB-CLAUDE\n")
    w(os.path.join(home, ".codex", "AGENTS.override.md"), "")
    w(os.path.join(home, ".codex", "AGENTS.md"), "MARKER-GLOBAL-AGENTS (behind an empty global override)\n")

    # e. Gemini: context.fileName list, global memory, JIT subdirectory context
    ws, home = fixture("e-gemini-filename", {
        "agents": ["gemini"],
        "gemini_settings": {"context": {"fileName": ["AGENTS.md", "CONTEXT.md", "GEMINI.md"]}},
        "prompt": 'read MOCKTOOL:read_file:{"file_path": "sub/x.txt"}ENDTOOL',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", ["AGENTS.md", "GEMINI.md", "CLAUDE.md"])
    w(os.path.join(repo, "CONTEXT.md"), "MARKER-ROOT-CONTEXT\n")
    rule_files(os.path.join(repo, "sub"), "SUB", ["AGENTS.md", "GEMINI.md"])
    w(os.path.join(repo, "sub", "x.txt"), "x\n")
    w(os.path.join(home, ".gemini", "GEMINI.md"), "MARKER-GLOBAL-GEMINI (~/.gemini/GEMINI.md)\n")
    w(os.path.join(home, ".gemini", "AGENTS.md"), "MARKER-GLOBAL-AGENTS (~/.gemini/AGENTS.md)\n")
    # e. Gemini default settings + JIT read of a subdir file
    ws, home = fixture("e-gemini-jit", {
        "agents": ["gemini"],
        "prompt": 'read MOCKTOOL:read_file:{"file_path": "sub/x.txt"}ENDTOOL',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", ["GEMINI.md"])
    rule_files(os.path.join(repo, "sub"), "SUB", ["GEMINI.md"])
    rule_files(os.path.join(repo, "other"), "SIBLING", ["GEMINI.md"])
    w(os.path.join(repo, "sub", "x.txt"), "x\n")
    w(os.path.join(home, ".gemini", "GEMINI.md"), "MARKER-GLOBAL-GEMINI (~/.gemini/GEMINI.md)\n")

    # e. Copilot: .github/instructions/*.instructions.md with applyTo, nested AGENTS.md
    ws, home = fixture("e-copilot-instructions", {
        "agents": ["copilot"],
        "prompt": 'read MOCKTOOL:view:{"path": "__WS__/repo/src/main.rs"}ENDTOOL',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", [".github/copilot-instructions.md", "AGENTS.md"])
    w(os.path.join(repo, ".github", "instructions", "all.instructions.md"),
      '---\napplyTo: "**"\n---\nMARKER-INSTR-ALL (applyTo **)\n')
    w(os.path.join(repo, ".github", "instructions", "rust.instructions.md"),
      '---\napplyTo: "**/*.rs"\n---\nMARKER-INSTR-RUST (applyTo **/*.rs)\n')
    w(os.path.join(repo, ".github", "instructions", "nofront.instructions.md"), "MARKER-INSTR-NOFRONTMATTER\n")
    rule_files(os.path.join(repo, "src"), "SRC", ["AGENTS.md", "CLAUDE.md"])
    w(os.path.join(repo, "src", "main.rs"), "fn main() {}\n")
    w(os.path.join(home, ".copilot", "copilot-instructions.md"), "MARKER-GLOBAL-COPILOT (~/.copilot/copilot-instructions.md)\n")

    # e. Cline: .clinerules directory, other tools' rule files, conditional rules
    ws, home = fixture("e-cline-rules", {
        "agents": ["cline"],
        "prompt": 'read MOCKTOOL:read_files:{"files": [{"path": "src/main.rs"}]}ENDTOOL',
    })
    repo = os.path.join(ws, "repo")
    rule_files(repo, "ROOT", ["AGENTS.md", ".cursorrules", "CLAUDE.md"])
    w(os.path.join(repo, ".clinerules", "01-first.md"), "MARKER-CLINERULES-DIR-01\n")
    w(os.path.join(repo, ".clinerules", "02-second.txt"), "MARKER-CLINERULES-DIR-02-TXT\n")
    w(os.path.join(repo, ".clinerules", "nested", "03-nested.md"), "MARKER-CLINERULES-DIR-NESTED\n")
    w(os.path.join(repo, ".clinerules", "rust.md"),
      '---\npaths:\n  - "src/**/*.rs"\n---\nMARKER-CLINERULES-RUST (paths src/**/*.rs)\n')
    w(os.path.join(repo, ".windsurfrules"), "MARKER-ROOT-WINDSURFRULES\n")
    w(os.path.join(repo, ".cursor", "rules", "a.mdc"), "---\nalwaysApply: true\n---\nMARKER-CURSOR-MDC\n")
    rule_files(os.path.join(repo, "src"), "SRC", ["AGENTS.md"])
    w(os.path.join(repo, "src", "main.rs"), "fn main() {}\n")
    w(os.path.join(home, "Documents", "Cline", "Rules", "global.md"), "MARKER-GLOBAL-CLINE (~/Documents/Cline/Rules)\n")
    w(os.path.join(home, ".cline", "rules", "global2.md"), "MARKER-GLOBAL-CLINE2 (~/.cline/rules)\n")

    # e. same Cline tree, plain prompt: is the paths-scoped rule loaded without a matching file?
    src = os.path.join(ROOT, "e-cline-rules")
    ws2, home2 = fixture("e-cline-rules-hi", {"agents": ["cline"]})
    shutil.rmtree(ws2)
    shutil.copytree(os.path.join(src, "ws"), ws2)
    shutil.copytree(os.path.join(src, "home"), home2)

    # f. BOM + CRLF + HTML comments; no trailing newline
    ws, home = fixture("f-format", {})
    text = ("\ufeff# Format test\r\n"
            "MARKER-F-FIRST\r\n"
            "<!-- MARKER-F-COMMENT-BLOCK single-line comment -->\r\n"
            "MARKER-F-INLINE before <!-- MARKER-F-COMMENT-INLINE --> after\r\n"
            "<!--\r\nMARKER-F-COMMENT-MULTILINE\r\n-->\r\n"
            "```\r\n<!-- MARKER-F-COMMENT-IN-FENCE -->\r\n```\r\n"
            "Trailing spaces   \r\n"
            "\tTab-indented line\r\n"
            "\r\n\r\n\r\n"
            "MARKER-F-LAST (no trailing newline)")
    for f in ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", ".clinerules"):
        w(os.path.join(ws, "repo", f), text.encode("utf-8"))
    print("fixtures written to", ROOT)


if __name__ == "__main__":
    main()
