# agrag as a service: `agrag serve` on port 8765, the packaged MiniLM model, CPU torch, a non-root user.
# docker-compose.yml runs it next to a Qdrant server and a Prefect server (see README, "Scale out").
# No Docker engine runs where agrag is developed, so this file is checked by reading, not by a build in the tests.
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HAYSTACK_TELEMETRY_ENABLED=False \
    HF_HUB_OFFLINE=1 \
    TRANSFORMERS_OFFLINE=1 \
    DO_NOT_TRACK=1 \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    AGRAG_DATA_DIR=/data \
    AGRAG_FILES_ROOT=/documents

# The CPU build of torch first: a plain `torch` requirement would pull a 5 GB CUDA build.
RUN pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu

WORKDIR /opt/agrag
COPY pyproject.toml setup.py README.md ./
COPY components components
COPY pipelines pipelines
COPY flows flows
COPY service service
COPY facade facade
COPY conf conf
RUN pip install '.[qdrant-server]'

RUN useradd --create-home --uid 10001 agrag \
    && mkdir -p /data /documents \
    && chown agrag:agrag /data /documents
USER agrag
WORKDIR /home/agrag
VOLUME ["/data"]
EXPOSE 8765

HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=4 \
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=4)"

ENTRYPOINT ["agrag"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8765"]
