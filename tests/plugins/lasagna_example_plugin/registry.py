"""The registry module the `lasagna.tracks` and `lasagna.judges` entry points name:
importing it registers the plugin's judge benchmark and track (nothing heavy is imported
here; the track's system config and stages are imported when a sweep or a trial needs them)."""

from lasagna.judges.registry import register_benchmark
from lasagna.tracks import register
from lasagna_example_plugin import answer_length
from lasagna_example_plugin.extractive import ExtractiveTrack

register_benchmark(answer_length)
register(ExtractiveTrack())
