"""A fake OpenAI-compatible speech-to-text server on 127.0.0.1, at the far side of the HTTP
boundary: the `openai` SDK under test runs unmodified.

Shaped after the API reference's "Create transcription"
(https://platform.openai.com/docs/api-reference/audio/createTranscription): `POST
/v1/audio/transcriptions`, a multipart/form-data body with a `file` part (the audio, with a file
name) and a `model` field (`response_format` optional, "json" by default); the JSON answer is the
Transcription object, `{"text": ...}`, as openai-python's `types/audio/transcription.py` reads
it. Errors are the API's error object, `{"error": {"message", "type", "code"}}`.

    with TranscriptionServer(text="the dam has burst") as server:
        cfg = TranscriptionConfig(base_url=server.base_url)
        ...
        server.requests[0].model, server.requests[0].audio
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler

from testing.fakes.background import BackgroundServer


@dataclass(frozen=True)
class TranscriptionRequest:
    model: str
    filename: str
    audio: bytes
    authorization: str


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    """The form's parts by name: (file name or None, bytes)."""
    head = f"Content-Type: {content_type}\r\nMIME-Version: 1.0\r\n\r\n".encode()
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        if isinstance(name, str) and isinstance(payload, bytes):
            parts[name] = (part.get_filename(), payload)
    return parts


class TranscriptionServer(BackgroundServer):
    def __init__(self, text: str = "", *, status: int = 200) -> None:
        super().__init__()
        self.text = text
        self.status = status  # not 200: the API's error object with this status
        self.requests: list[TranscriptionRequest] = []
        self._lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path != "/v1/audio/transcriptions":
                    self._answer(404, {"error": {"message": "not found", "type": "invalid"}})
                    return
                parts = parse_multipart(self.headers.get("Content-Type", ""), body)
                if "file" not in parts or "model" not in parts:
                    error = {"message": "file and model are required", "type": "invalid"}
                    self._answer(400, {"error": error})
                    return
                with fake._lock:
                    fake.requests.append(
                        TranscriptionRequest(
                            model=parts["model"][1].decode(),
                            filename=parts["file"][0] or "",
                            audio=parts["file"][1],
                            authorization=self.headers.get("Authorization", ""),
                        )
                    )
                if fake.status != 200:
                    failed = {"message": "server error", "type": "server_error", "code": None}
                    self._answer(fake.status, {"error": failed})
                    return
                self._answer(200, {"text": fake.text})

            def _answer(self, status: int, obj: object) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
