# A small image that runs resplite on port 6379 as a non-root user.
FROM python:3.12-slim

RUN useradd --create-home --uid 10001 resplite
WORKDIR /app
COPY pyproject.toml README.md ./
COPY resplite ./resplite
RUN pip install --no-cache-dir . && rm -rf /root/.cache

USER resplite
EXPOSE 6379
# The server listens on every interface inside the container, where connections come from
# outside its loopback: protected mode is off, as in Redis's own image. Set a password
# (--requirepass or ACL users) before publishing the port beyond your machine.
CMD ["resplite-server", "--bind", "0.0.0.0", "--port", "6379", "--protected-mode", "no"]
