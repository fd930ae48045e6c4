"""Persistence: asyncpg pool, embedded Postgres for dev, migrations, repositories."""
