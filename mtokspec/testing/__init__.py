"""Hypothesis strategies for trees and files of every variant (see :mod:`~mtokspec.testing.strategies`)."""
