"""Resolvers: merge extracted entities that name the same thing."""
