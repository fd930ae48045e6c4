"""The parse and prompt benchmarks run and compare like with like (no timing asserted)."""

from __future__ import annotations

from steward.cli import build_parser
from steward_tools.bench import parse, prompt


def test_parse_bench_small() -> None:
    result = parse.run(tokens=300)
    assert set(result) == {"tokens", "actions", "incremental_cpu_s", "reparse_cpu_s", "ratio"}
    assert result["actions"] > 5 and result["tokens"] >= 300


def test_reparse_baseline_reads_partial_buffers() -> None:
    text = parse.sample_response(200)
    assert len(parse.reparse_all(text)) > 5
    assert parse.reparse_all(text[: len(text) // 2])  # a cut buffer still yields actions


def test_prompt_bench_counts_every_shape() -> None:
    result = prompt.run(200)
    assert result["shapes"] == 200 and result["naive_tokens"] > result["prompt_tokens"] > 0


def test_bench_subcommands_registered() -> None:
    args = build_parser().parse_args(["bench", "parse", "--json", "--tokens", "10"])
    assert callable(args.handler)
