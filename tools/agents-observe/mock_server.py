#!/usr/bin/env python3
"""Mock LLM endpoint that records every request an agent sends.

Speaks just enough of four wire protocols to let one agent turn finish:

  * OpenAI Responses API      POST /v1/responses             (SSE)
  * OpenAI Chat Completions   POST /v1/chat/completions      (SSE or JSON)
  * Anthropic Messages API    POST /v1/messages              (SSE or JSON)
                              POST /v1/messages/count_tokens
  * Google Gemini API         POST /v1beta/models/M:streamGenerateContent (SSE)
                              POST /v1beta/models/M:generateContent
                              POST /v1beta/models/M:countTokens
  * GET /v1/models, /v1beta/models, anything else -> small JSON

Each request is written to LOGDIR/NNNN-<slug>.json as
  {"method", "path", "headers" (auth-like headers redacted), "body" (parsed JSON
   if possible, else text)}
The reply text is always "hi" (override with MOCK_REPLY).

Scripted tool call: if a request carries a non-empty "tools" list, its text
contains  MOCKTOOL:<name>:<json>ENDTOOL  (e.g. in the user prompt) and it holds
no tool result yet, the mock answers with one call of tool <name> with
arguments <json> instead of text (Anthropic tool_use, Gemini functionCall,
Responses function_call, Chat tool_calls).  The next turn (carrying the tool
result) gets the plain text reply.  Used to make an agent read a file, which
triggers path-scoped / lazily loaded rules.

Usage: mock_server.py --port 18080 --logdir captures/raw/xyz
The log directory can be switched while running: POST /__mock/logdir {"dir": "..."}
Stop with SIGTERM / Ctrl-C.  Binds 127.0.0.1 only.
"""
import argparse
import gzip
import itertools
import json
import os
import re
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REDACT = re.compile(r"(authorization|x-api-key|api-key|x-goog-api-key|cookie)", re.I)
REPLY = os.environ.get("MOCK_REPLY", "hi")

_lock = threading.Lock()
_counter = itertools.count(1)
STATE = {"logdir": "captures/raw/default"}


TOOL_RE = re.compile(r"MOCKTOOL:([A-Za-z0-9_.-]+):(\{.*?\})ENDTOOL")
RESULT_MARKERS = ('"tool_result"', '"functionResponse"', '"function_call_output"', '"role": "tool"')


def scripted_tool(body):
    """Return (name, args) if this request should be answered with a tool call."""
    if not isinstance(body, dict) or not body.get("tools"):
        return None
    text = json.dumps(body, ensure_ascii=False)
    compact = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    if any(m in text or m.replace(": ", ":") in compact for m in RESULT_MARKERS):
        return None
    m = TOOL_RE.search(text.replace('\\"', '"'))
    if not m:
        return None
    try:
        return m.group(1), json.loads(m.group(2))
    except Exception:
        return None


def slug(path):
    s = re.sub(r"[^A-Za-z0-9]+", "_", path.split("?")[0]).strip("_")
    return s[:60] or "root"


def log_request(method, path, headers, raw):
    body = None
    if raw:
        enc = headers.get("Content-Encoding", "")
        try:
            if "gzip" in enc:
                raw = gzip.decompress(raw)
            elif "deflate" in enc:
                raw = zlib.decompress(raw)
            elif "zstd" in enc:
                pass  # left as-is; noted in the log
        except Exception:
            pass
        try:
            body = json.loads(raw.decode("utf-8"))
        except Exception:
            body = raw.decode("utf-8", "replace")
    hdrs = {k: ("<redacted>" if REDACT.search(k) else v) for k, v in headers.items()}
    with _lock:
        n = next(_counter)
        d = STATE["logdir"]
        os.makedirs(d, exist_ok=True)
        fn = os.path.join(d, "%04d-%s-%s.json" % (n, method, slug(path)))
        with open(fn, "w", encoding="utf-8") as f:
            json.dump({"method": method, "path": path, "time": time.time(),
                       "headers": hdrs, "body": body}, f, indent=1, ensure_ascii=False)
    return body


def sse(handler, events, named=False):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    for ev in events:
        if named:
            name, data = ev
            chunk = "event: %s\ndata: %s\n\n" % (name, json.dumps(data))
        else:
            chunk = "data: %s\n\n" % (ev if isinstance(ev, str) else json.dumps(ev))
        handler.wfile.write(chunk.encode())
        handler.wfile.flush()
    handler.close_connection = True


# ---------------------------------------------------------------- OpenAI Responses
def responses_events(body):
    rid = "resp_mock1"
    mid = "msg_mock1"
    model = (body or {}).get("model", "mock")
    msg_item = {"type": "message", "id": mid, "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": REPLY, "annotations": []}]}
    base = {"id": rid, "object": "response", "created_at": int(time.time()), "model": model,
            "status": "in_progress", "output": []}
    done = dict(base, status="completed", output=[msg_item],
                usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 11})
    evs = [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": base}),
        ("response.in_progress", {"type": "response.in_progress", "sequence_number": 1, "response": base}),
        ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 2,
                                        "output_index": 0,
                                        "item": dict(msg_item, status="in_progress", content=[])}),
        ("response.content_part.added", {"type": "response.content_part.added", "sequence_number": 3,
                                         "item_id": mid, "output_index": 0, "content_index": 0,
                                         "part": {"type": "output_text", "text": "", "annotations": []}}),
        ("response.output_text.delta", {"type": "response.output_text.delta", "sequence_number": 4,
                                        "item_id": mid, "output_index": 0, "content_index": 0,
                                        "delta": REPLY}),
        ("response.output_text.done", {"type": "response.output_text.done", "sequence_number": 5,
                                       "item_id": mid, "output_index": 0, "content_index": 0,
                                       "text": REPLY}),
        ("response.content_part.done", {"type": "response.content_part.done", "sequence_number": 6,
                                        "item_id": mid, "output_index": 0, "content_index": 0,
                                        "part": {"type": "output_text", "text": REPLY, "annotations": []}}),
        ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 7,
                                       "output_index": 0, "item": msg_item}),
        ("response.completed", {"type": "response.completed", "sequence_number": 8, "response": done}),
    ]
    return evs


# ---------------------------------------------------------------- Chat Completions
def chat_events(body):
    model = (body or {}).get("model", "mock")
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model}
    return [
        dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {"content": REPLY}, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "stop"}],
             usage={"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}),
        "[DONE]",
    ]


def chat_json(body):
    return {"id": "chatcmpl-mock", "object": "chat.completion", "created": int(time.time()),
            "model": (body or {}).get("model", "mock"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": REPLY},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


# ---------------------------------------------------------------- Anthropic Messages
def anthropic_message(body):
    return {"id": "msg_mock", "type": "message", "role": "assistant",
            "model": (body or {}).get("model", "mock"),
            "content": [{"type": "text", "text": REPLY}], "stop_reason": "end_turn",
            "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}


def anthropic_events(body):
    msg = anthropic_message(body)
    start = dict(msg, content=[], stop_reason=None, usage={"input_tokens": 10, "output_tokens": 0})
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": REPLY}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn",
                                                               "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def anthropic_tool_events(body, name, args):
    start = dict(anthropic_message(body), content=[], stop_reason=None,
                 usage={"input_tokens": 10, "output_tokens": 0})
    return [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "tool_use", "id": "toolu_mock1",
                                                   "name": name, "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta",
                                           "partial_json": json.dumps(args)}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                               "stop_sequence": None},
                           "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]


def responses_tool_events(body, name, args):
    item = {"type": "function_call", "id": "fc_mock1", "call_id": "call_mock1", "name": name,
            "arguments": json.dumps(args), "status": "completed"}
    base = {"id": "resp_mock1", "object": "response", "created_at": int(time.time()),
            "model": (body or {}).get("model", "mock"), "status": "in_progress", "output": []}
    done = dict(base, status="completed", output=[item],
                usage={"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                       "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": 11})
    return [
        ("response.created", {"type": "response.created", "sequence_number": 0, "response": base}),
        ("response.output_item.added", {"type": "response.output_item.added", "sequence_number": 1,
                                        "output_index": 0, "item": item}),
        ("response.output_item.done", {"type": "response.output_item.done", "sequence_number": 2,
                                       "output_index": 0, "item": item}),
        ("response.completed", {"type": "response.completed", "sequence_number": 3, "response": done}),
    ]


def chat_tool_events(body, name, args):
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": (body or {}).get("model", "mock")}
    return [
        dict(base, choices=[{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_mock1", "type": "function",
             "function": {"name": name, "arguments": json.dumps(args)}}]}, "finish_reason": None}]),
        dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]),
        "[DONE]",
    ]


# ---------------------------------------------------------------- Gemini
def gemini_json():
    return {"candidates": [{"content": {"role": "model", "parts": [{"text": REPLY}]},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1,
                              "totalTokenCount": 11},
            "modelVersion": "mock"}


def gemini_tool_json(name, args):
    return {"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"name": name, "args": args}}]}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1,
                              "totalTokenCount": 11}, "modelVersion": "mock"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        print("[mock] %s %s" % (self.command, self.path), flush=True)

    def _read(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if "chunked" in (self.headers.get("Transfer-Encoding") or ""):
            out = b""
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                out += self.rfile.read(size)
                self.rfile.readline()
            return out
        return b""

    def _json(self, obj, code=200):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        log_request("GET", self.path, self.headers, b"")
        p = self.path.split("?")[0]
        if p.endswith("/models"):
            if "v1beta" in p:
                return self._json({"models": [{"name": "models/mock"}]})
            return self._json({"object": "list", "data": [
                {"id": "mock", "object": "model", "created": 0, "owned_by": "mock",
                 "type": "model", "display_name": "mock"}]})
        return self._json({})

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        raw = self._read()
        p = self.path.split("?")[0]
        if p == "/__mock/logdir":
            STATE["logdir"] = json.loads(raw)["dir"]
            return self._json({"ok": True})
        body = log_request("POST", self.path, self.headers, raw)
        b = body if isinstance(body, dict) else {}
        stream = b.get("stream", False)
        tool = scripted_tool(b)
        if tool:
            name, args = tool
            if p.endswith("/responses"):
                return sse(self, responses_tool_events(b, name, args), named=True)
            if p.endswith("/chat/completions"):
                return sse(self, chat_tool_events(b, name, args))
            if p.endswith("/messages"):
                return sse(self, anthropic_tool_events(b, name, args), named=True)
            if ":streamGenerateContent" in p:
                return sse(self, [gemini_tool_json(name, args)])
            if ":generateContent" in p:
                return self._json(gemini_tool_json(name, args))
        if p.endswith("/responses"):
            return sse(self, responses_events(b), named=True)
        if p.endswith("/chat/completions"):
            return sse(self, chat_events(b)) if stream else self._json(chat_json(b))
        if p.endswith("/messages/count_tokens"):
            return self._json({"input_tokens": 10})
        if p.endswith("/messages"):
            return sse(self, anthropic_events(b), named=True) if stream else self._json(anthropic_message(b))
        if ":streamGenerateContent" in p:
            return sse(self, [gemini_json()])
        if ":generateContent" in p:
            return self._json(gemini_json())
        if ":countTokens" in p:
            return self._json({"totalTokens": 10})
        return self._json({})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=18080)
    ap.add_argument("--logdir", default="captures/raw/default")
    a = ap.parse_args()
    STATE["logdir"] = a.logdir
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    print("[mock] listening on 127.0.0.1:%d, logging to %s" % (a.port, a.logdir), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
