"""What the CLI and the site both show: tables, rankings, exports and the original JSON document.

A view reads stored runs and the judge's figures and lays them out; it decides
nothing about hits or populations (that is :mod:`evals.judge`). Importing the
package imports nothing.
"""
