"""hca: Hierarchical Component Analysis for LLM leaderboards.

A small library for the methods of Jin, Syrgkanis, Kakade & Zhang (2025),
"Discovering Hierarchical Latent Capabilities of Language Models via Causal
Representation Learning".
"""

__version__ = "0.1.0"
