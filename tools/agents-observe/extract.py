#!/usr/bin/env python3
"""Turn raw captures into readable, trimmed evidence.

  extract.py                      # all of captures/raw/<agent>/<fixture>/
  extract.py claude/a-root ...    # only these

For every captured model request (POST with a prompt) it writes
  captures/<agent>/<fixture>/NNNN.json   the body with tool schemas reduced to names
  captures/<agent>/<fixture>/NNNN.txt    every text segment, labelled by where it sits
                                         (system[i], developer msg, user msg[i].part[j], ...)
and prints a one-line summary per request: which MARKER-* lines appear, in order,
and in which segment.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "captures", "raw")
OUT = os.path.join(HERE, "captures")
MARK = re.compile(r"MARKER-[A-Z0-9-]+|[A-Z]{2,4}-L\d{5}")


def segments(path, body):
    """Yield (label, text) for every text-bearing part of a request body."""
    if not isinstance(body, dict):
        return
    # Anthropic
    if isinstance(body.get("system"), list):
        for i, s in enumerate(body["system"]):
            yield "system[%d]" % i, s.get("text", "")
    elif isinstance(body.get("system"), str):
        yield "system", body["system"]
    # OpenAI Responses
    if isinstance(body.get("instructions"), str):
        yield "instructions", body["instructions"]
    if isinstance(body.get("input"), list):
        for i, it in enumerate(body["input"]):
            role = it.get("role", it.get("type"))
            c = it.get("content")
            if isinstance(c, str):
                yield "input[%d] %s" % (i, role), c
            elif isinstance(c, list):
                for j, p in enumerate(c):
                    if "text" in p:
                        yield "input[%d] %s part[%d]" % (i, role, j), p["text"]
            if it.get("type") == "function_call_output":
                yield "input[%d] function_call_output" % i, json.dumps(it.get("output"))
    # Anthropic / Chat messages
    if isinstance(body.get("messages"), list):
        for i, m in enumerate(body["messages"]):
            c = m.get("content")
            if isinstance(c, str):
                yield "messages[%d] %s" % (i, m.get("role")), c
            elif isinstance(c, list):
                for j, p in enumerate(c):
                    if p.get("type") == "text":
                        yield "messages[%d] %s part[%d]" % (i, m.get("role"), j), p.get("text", "")
                    elif p.get("type") == "tool_result":
                        cc = p.get("content")
                        if isinstance(cc, list):
                            cc = "\n".join(x.get("text", "") for x in cc if isinstance(x, dict))
                        yield "messages[%d] %s part[%d] tool_result" % (i, m.get("role"), j), str(cc)
                    elif p.get("type") == "tool_use":
                        yield "messages[%d] %s part[%d] tool_use" % (i, m.get("role"), j), json.dumps(p.get("input"))
    # Gemini
    si = body.get("systemInstruction")
    if isinstance(si, dict):
        for j, p in enumerate(si.get("parts", [])):
            yield "systemInstruction.part[%d]" % j, p.get("text", "")
    elif isinstance(si, str):
        yield "systemInstruction", si
    if isinstance(body.get("contents"), list):
        for i, c in enumerate(body["contents"]):
            for j, p in enumerate(c.get("parts", [])):
                if "text" in p:
                    yield "contents[%d] %s part[%d]" % (i, c.get("role"), j), p["text"]
                elif "functionResponse" in p:
                    yield "contents[%d] %s part[%d] functionResponse" % (i, c.get("role"), j), \
                        json.dumps(p["functionResponse"], ensure_ascii=False)
                elif "functionCall" in p:
                    yield "contents[%d] %s part[%d] functionCall" % (i, c.get("role"), j), \
                        json.dumps(p["functionCall"], ensure_ascii=False)


def trim(body):
    if not isinstance(body, dict):
        return body
    b = dict(body)
    if isinstance(b.get("tools"), list):
        names = []
        for t in b["tools"]:
            if isinstance(t, dict) and "functionDeclarations" in t:
                names += [f.get("name") for f in t["functionDeclarations"]]
            elif isinstance(t, dict):
                names.append(t.get("name") or (t.get("function") or {}).get("name") or t.get("type"))
        b["tools"] = {"_trimmed": "tool schemas removed by extract.py", "names": names}
    return b


def summarize(seglist):
    out = []
    for label, text in seglist:
        ms = MARK.findall(text)
        if ms:
            # collapse long runs of numbered big-file lines
            nums = [m for m in ms if re.match(r"[A-Z]{2,4}-L\d{5}", m)]
            other = [m for m in ms if m.startswith("MARKER")]
            desc = list(dict.fromkeys(other))
            if nums:
                desc.append("%s..%s (%d lines)" % (nums[0], nums[-1], len(nums)))
            out.append("%s: %s" % (label, ", ".join(desc)))
    return out


def process(capdir):
    rel = os.path.relpath(capdir, RAW)
    dst = os.path.join(OUT, rel)
    if os.path.isdir(dst):
        import shutil
        shutil.rmtree(dst)
    os.makedirs(dst, exist_ok=True)
    lines = []
    for fn in sorted(glob.glob(os.path.join(capdir, "[0-9]*.json"))):
        d = json.load(open(fn, encoding="utf-8"))
        if d["method"] != "POST":
            continue
        base = os.path.basename(fn)[:4]
        segs = list(segments(d["path"], d["body"]))
        with open(os.path.join(dst, base + ".json"), "w", encoding="utf-8") as f:
            json.dump(dict(d, body=trim(d["body"])), f, indent=1, ensure_ascii=False)
        with open(os.path.join(dst, base + ".txt"), "w", encoding="utf-8") as f:
            f.write("# %s %s\n" % (d["method"], d["path"]))
            for label, text in segs:
                f.write("\n======== %s (%d chars)\n%s\n" % (label, len(text), text))
        summ = summarize(segs)
        lines.append("%s %s" % (base, d["path"]))
        lines += ["    " + s for s in summ] or ["    (no markers)"]
    for extra in ("agent.stdout", "agent.stderr", "run.json"):
        p = os.path.join(capdir, extra)
        if os.path.exists(p):
            with open(p, "rb") as s, open(os.path.join(dst, extra), "wb") as t:
                t.write(s.read()[-20000:])
    with open(os.path.join(dst, "SUMMARY.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("== %s" % rel)
    print("\n".join(lines))


def main():
    targets = sys.argv[1:] or [os.path.relpath(p, RAW) for p in sorted(glob.glob(os.path.join(RAW, "*", "*")))
                               if os.path.isdir(p) and not os.path.basename(os.path.dirname(p)).startswith(("_", "scratch"))]
    for t in targets:
        process(os.path.join(RAW, t))


if __name__ == "__main__":
    main()
