# resplite on port 6379 as a non-root user, built in two stages.
#
# The base is pinned to an exact Python release on an exact Debian release, so a rebuild gets
# the same interpreter; to pin the bytes too, append the digest that
# `docker buildx imagetools inspect python:3.12.8-slim-bookworm` prints (`@sha256:...`).
ARG PYTHON_IMAGE=python:3.12.8-slim-bookworm

# -- builder: a virtualenv with the dependencies, then resplite ------------------------------
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1
RUN python -m venv /opt/resplite
WORKDIR /src
# Dependencies first, from pyproject.toml alone: this layer is rebuilt only when that file
# changes, not on every change to the source.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > /tmp/requirements.txt \
    && /opt/resplite/bin/pip install -r /tmp/requirements.txt
# A C compiler for the compiled modules (setup.py; the image has Python's headers). Only
# this stage has it: the runtime stage takes the virtualenv alone.
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null \
    && rm -rf /var/lib/apt/lists/*
# Then the package itself, without touching the dependencies again.
COPY README.md setup.py ./
COPY resplite ./resplite
RUN /opt/resplite/bin/pip install --no-deps . \
    && /opt/resplite/bin/python -m compileall -q /opt/resplite/lib

# -- runtime: the virtualenv only ---------------------------------------------------------------
FROM ${PYTHON_IMAGE}
RUN useradd --create-home --uid 10001 resplite
COPY --from=builder /opt/resplite /opt/resplite
ENV PATH=/opt/resplite/bin:$PATH \
    PYTHONUNBUFFERED=1
USER resplite
WORKDIR /home/resplite
EXPOSE 6379
# Healthy while the server answers on 6379: PONG, or NOAUTH when a password is set.
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["python", "-c", "import socket,sys; s=socket.create_connection(('127.0.0.1', 6379), 2); s.sendall(b'PING\\r\\n'); r=s.recv(64); sys.exit(0 if r.startswith((b'+PONG', b'-NOAUTH')) else 1)"]
# The server listens on every interface inside the container, where connections come from
# outside its loopback: protected mode is off, as in Redis's own image. Set a password
# (--requirepass or ACL users) before publishing the port beyond your machine.
CMD ["resplite-server", "--bind", "0.0.0.0", "--port", "6379", "--protected-mode", "no"]
