"""Clients for LLMs behind the OpenAI chat protocol."""
