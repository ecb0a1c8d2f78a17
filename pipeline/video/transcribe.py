"""Speech in a video as text: its sound track (the first `max_minutes`, a 16 kHz mono WAV the
decoding child wrote) sent to an OpenAI-compatible `POST /v1/audio/transcriptions` endpoint
(multipart: `file` and `model`; the answer's `text`) with the `openai` SDK. See the API
reference, https://platform.openai.com/docs/api-reference/audio/createTranscription; vLLM and
whisper.cpp's server answer the same request.

A failed request is a technical failure of the transcription, said as one in the decision, never
taken for a video without speech.
"""

from __future__ import annotations

from typing import Any

from pipeline.config import TranscriptionConfig
from pipeline.redaction import redact


class TranscriptionFailed(Exception):
    """The endpoint did not give a transcript; the message says why."""


class Transcriber:
    def __init__(self, cfg: TranscriptionConfig) -> None:
        # The SDK (most of a second of imports) loads only when an endpoint is configured.
        import openai

        self.cfg = cfg
        key = cfg.api_key.get_secret_value() if cfg.api_key is not None else "none"
        self._secrets = [key]
        self._client: Any = openai.OpenAI(
            base_url=cfg.base_url, api_key=key, timeout=cfg.timeout_s, max_retries=1
        )

    @property
    def name(self) -> str:
        return self.cfg.model

    def transcribe(self, wav: bytes) -> str:
        import openai

        try:
            answer = self._client.audio.transcriptions.create(
                model=self.cfg.model, file=("audio.wav", wav, "audio/wav"), response_format="json"
            )
        except openai.OpenAIError as exc:
            said = redact(str(exc), self._secrets)  # an error body may echo the key
            raise TranscriptionFailed(f"{type(exc).__name__}: {said[:200]}") from exc
        return " ".join(str(answer.text).split())


def build_transcriber(cfg: TranscriptionConfig) -> Transcriber | None:
    return Transcriber(cfg) if cfg.configured else None
