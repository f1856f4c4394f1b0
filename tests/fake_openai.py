"""An OpenAI-compatible chat endpoint on loopback for tests: real HTTP, so the real SDK
clients (openai's, lasagna's API backend) run their own request, retry and parsing code."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# a request's JSON -> (HTTP status, JSON body, extra headers)
Answer = Callable[[dict[str, Any]], tuple[int, dict[str, Any], dict[str, str]]]


def chat_completion(content: str, prompt_tokens: int = 5, completion_tokens: int = 1) -> dict:
    """A `chat.completion` body as the API sends it."""
    return {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "tiny",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def serve(answer: Answer) -> ThreadingHTTPServer:
    """Start the endpoint (`http://127.0.0.1:<server.server_port>/v1`); `shutdown()` it."""

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            asked = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            status, body, headers = answer(asked)
            data = json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
