"""The edges of the process: files, locks and HTTP, each kept bounded and checked.

JSON read from files we did not write, where outputs may go, opening a DuckDB
file and waiting for its lock, the embedding/LLM reply cache, endpoint URLs and
the API key, HTTP with whole-response deadlines, and how numbers are written as
text. Nothing here knows what a corpus or a run is; everything above may use it.
Importing the package imports nothing: each module is loaded only by what uses it.
"""
