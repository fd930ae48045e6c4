# Steward worker image (for docker-compose.yml on machines with Docker).
FROM python:3.11-slim
RUN pip install --no-cache-dir uv
WORKDIR /app
COPY pyproject.toml uv.lock README.md hatch_build.py ./
COPY steward ./steward
COPY steward_tools ./steward_tools
COPY migrations ./migrations
COPY ops ./ops
RUN uv sync --frozen --no-dev
ENV PATH="/app/.venv/bin:$PATH"
CMD ["steward", "worker"]
