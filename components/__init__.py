"""Haystack components and store adapters: one public class per module, grouped by role."""
